"""The report stays readable at 1, 5, 25 and 100 runs: headless Chromium loads each size at a
1300x1000 window, measures what overflows sideways, and screenshots the top of the page
(tests/artifacts/report_<N>_runs.png).

Readable means: the page itself never scrolls sideways; the compare and configuration tables are
paged (six runs a page, each page repeating the metric column), so none of them scrolls either; a
metric label takes at most two lines; the navigation wraps inside the page; a database whose logs
name no second host has no fleet page. The runs are copies of the sample logs, each made unique by
one appended line (re-ingesting identical content is a no-op)."""
from __future__ import annotations

import base64
import json
import os

import pytest

import logsleuth
from logsleuth import api
from support.paths import SAMPLES

from .test_report import ARTIFACTS, CHROMIUM, _Cdp, _start_chromium, _stop, _WebSocket

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium not installed (/usr/bin/chromium)")]

SIZES = (1, 5, 25, 100)
WIDTH = 1300
#: small server logs of both engines; copies of them make up the hundred runs
SOURCES = sorted(p for p in (SAMPLES / "eras").glob("*.log") if p.stat().st_size < 200_000)

PROBE = """JSON.stringify((() => {
  const vw = document.documentElement.clientWidth;
  const wraps = Array.from(document.querySelectorAll('.tablewrap'));
  const labels = Array.from(document.querySelectorAll('table.compare tbody tr:not(.group) td:first-child'));
  const lh = labels.length ? parseFloat(getComputedStyle(labels[0]).lineHeight) : 1;
  const nav = document.querySelector('nav');
  return {
    viewport: vw, page: document.documentElement.scrollWidth,
    scrolling: wraps.filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.firstElementChild.className),
    tables: wraps.length, comparePages: document.querySelectorAll('table.compare').length,
    labelLines: Math.max(0, ...labels.map(td => {  // the label's own text (a row is as tall as its tallest cell)
      const r = document.createRange(); r.selectNodeContents(td);
      return Math.round(r.getBoundingClientRect().height / lh); })),
    navRight: nav.getBoundingClientRect().right, navHeight: nav.getBoundingClientRect().height,
    fleet: !!document.getElementById('fleet'),
    height: document.documentElement.scrollHeight,
  };
})())"""


@pytest.fixture(scope="module")
def hundred_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("sizes")
    copies = []
    i = 0
    while len(copies) < 100:  # a file holds one launch or more: at least a hundred runs
        src = SOURCES[i % len(SOURCES)]
        dst = d / f"{i // len(SOURCES)}_{src.name}"
        dst.write_bytes(src.read_bytes() + f"\ncopy {i} of {src.name}\n".encode())
        copies.append(dst)
        i += 1
    con = logsleuth.open_db(str(d / "db.duckdb"))
    try:
        api.ingest_files(con, [str(p) for p in copies])
        ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        pages = {n: api.report_html(con, [str(r) for r in ids[:n]], title=f"{n} runs", with_findings=n <= 5)
                 for n in SIZES}
    finally:
        con.close()
    assert len(ids) >= 100
    return pages


def test_the_report_fits_at_every_size(hundred_runs, tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    proc, ws_url = _start_chromium(tmp_path / "profile")
    ws = None
    seen = {}
    try:
        ws = _WebSocket(ws_url)
        cdp = _Cdp(ws)
        for domain in ("Page", "Runtime"):
            cdp.call(f"{domain}.enable")
        for n in SIZES:
            path = ARTIFACTS / f"report_{n}_runs.html"
            path.write_text(hundred_runs[n], encoding="utf-8")
            cdp.events.clear()
            cdp.call("Page.navigate", {"url": path.resolve().as_uri()})
            cdp.wait_event("Page.loadEventFired", timeout=60)
            info = json.loads(cdp.call("Runtime.evaluate", {"returnByValue": True, "expression": PROBE})["result"]["value"])
            shot = cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
                "x": 0, "y": 0, "width": WIDTH, "height": min(info["height"], 2400), "scale": 1}}, timeout=60)
            (ARTIFACTS / f"report_{n}_runs.png").write_bytes(base64.b64decode(shot["data"]))
            seen[n] = info
    finally:
        if ws is not None:
            ws.close()
        _stop(proc)
    (ARTIFACTS / "report_sizes.json").write_text(json.dumps(seen, indent=2), encoding="utf-8")
    for n, info in seen.items():
        assert info["page"] <= info["viewport"], (n, info)  # the page never scrolls sideways
        assert info["scrolling"] == [], (n, info)  # nor does any table in it
        assert info["comparePages"] == -(-n // 6), (n, info)  # six runs a page
        assert info["labelLines"] <= 2, (n, info)
        assert info["navRight"] <= info["viewport"], (n, info)
        assert not info["fleet"], (n, info)
    assert seen[100]["navHeight"] > seen[1]["navHeight"]  # a hundred run links wrap onto more lines
