"""The report's fleet page: per-host rows and the flags of `logsleuth fleet`, inert, on a dataset."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

import logsleuth
from logsleuth.analysis.compare import CompareResult
from logsleuth.fleet import ingest_dataset, open_dataset
from logsleuth.fleet.summary import FleetSummary
from logsleuth.report import build_report
from logsleuth.report.data import ReportData
from logsleuth.report.html import render

pytestmark = pytest.mark.slow  # a seven-host fleet dataset built per module (~60 s here), headless Chromium

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def fleet_report(fleet_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet_report")
    logs = sorted(str(p) for p in fleet_dir.rglob("server.log"))
    out = ingest_dataset(str(root / "ds"), logs, host_from="{host}/server.log", executor="serial")
    assert not out.failed
    con = open_dataset(str(root / "ds"))
    try:
        html = build_report(con, None, title="fleet")
    finally:
        con.close()
    return html, root


def _section(html: str) -> str:
    m = re.search(r'<section id="fleet">.*?</section>', html, re.S)
    assert m, "no fleet section"
    return m.group(0)


def _rows(section: str, cls: str) -> list[str]:
    table = re.search(rf'<table class="{cls}">.*?</table>', section, re.S).group(0)
    return re.findall(r"<tr(?: class=\"\w+\")?>.*?</tr>", table.split("<tbody>")[1], re.S)


def test_fleet_page_has_a_row_per_host_and_the_flags(fleet_report):
    html, _ = fleet_report
    assert '<a href="#fleet">fleet</a>' in html
    sec = _section(html)
    hosts = _rows(sec, "hosts")
    assert [re.search(r"<td>(gpu-\d\d)</td>", r).group(1) for r in hosts] == [f"gpu-{i:02d}" for i in range(1, 8)]
    flagged = {re.search(r"<td>(gpu-\d\d)</td>", r).group(1) for r in hosts if r.startswith('<tr class="flagged">')}
    assert flagged == {"gpu-04", "gpu-05", "gpu-06", "gpu-07"}  # the slow host and the crash cluster
    flags = {(re.search(r'"kind">([^<]+)<', f).group(1), re.findall(r"<td>([^<]*)</td>", f)[0])
             for f in _rows(sec, "flags")}
    assert flags == {("outlier", "gpu-04"), ("crash cluster", "gpu-05, gpu-06, gpu-07")}
    # per host: what it ran and how it did, findings by severity
    healthy = next(r for r in hosts if "<td>gpu-01</td>" in r)
    assert "Kimi-K2.5" in healthy and "sglang" in healthy and "served" in healthy
    crashed = next(r for r in hosts if "<td>gpu-05</td>" in r)
    assert "crashed" in crashed and "vllm" in crashed
    critical = re.findall(r"<td>([^<]*)</td>", crashed)[-3]
    assert int(critical) >= 1  # the illegal memory access
    assert "<h3>Below their peers</h3>" in sec and "<h3>Crash clusters</h3>" in sec
    assert "Changes between days" not in sec  # one day per host: nothing changed


def test_a_database_gets_no_fleet_page(tmp_path):
    from support.paths import SAMPLES

    con = logsleuth.open_db(str(tmp_path / "one.duckdb"))
    logsleuth.ingest_files(con, [str(SAMPLES / "vllm_eagle3.log"), str(SAMPLES / "sglang_eagle3.log")])
    html = build_report(con, None, findings=False)
    assert 'id="fleet"' not in html and 'href="#fleet"' not in html


def test_a_database_of_logs_naming_their_hosts_gets_a_fleet_page(tmp_path):
    """A database records no host: the page names the hosts the logs name (their first NCCL_DEBUG line),
    through a temporary view that leaves the database as it was."""
    from support.paths import SAMPLES

    paths = []
    for node, sample in (("gpu-node-07", "sglang_tuned_v1.log"), ("gpu-node-08", "sglang_tuned_v1.log"),
                         ("gpu-node-09", "vllm_eagle3.log")):
        p = tmp_path / f"{node}.log"
        p.write_text(f"{node}:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n"
                     + (SAMPLES / sample).read_text(encoding="utf-8"), encoding="utf-8")
        paths.append(str(p))
    con = logsleuth.open_db(str(tmp_path / "fleet.duckdb"))
    logsleuth.ingest_files(con, paths)
    html = build_report(con, None, findings=False)
    hosts = _rows(_section(html), "hosts")
    assert [re.search(r"<td>(gpu-node-\d\d)</td>", r).group(1) for r in hosts] == ["gpu-node-07", "gpu-node-08",
                                                                                  "gpu-node-09"]
    assert con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'sources' "
                       "AND column_name = 'host'").fetchone()[0] == 0  # the view is gone, the table untouched


def test_fleet_page_text_from_logs_is_inert():
    evil = "<script>alert(1)</script>"
    fleet = FleetSummary(
        hosts=[{"host": evil, "first_date": "2026-01-01", "last_date": "2026-01-02", "runs": 2, "engine": evil,
                "model": evil, "gpu": "H100", "attention_backend": "triton", "spec_method": None, "accept_len": None,
                "single_stream_tok_s": 80.5, "peak_gen_tok_s": 1200.0, "end_states": "crashed",
                "findings": {"critical": 1}}],
        outliers=[{"host": evil, "model": evil, "gpu": "H100", "engine": "vllm", "metric": "single_stream_tok_s",
                   "value": 40.0, "peer_median": 80.0, "below_by": 0.5, "n_peers": 3}],
        changes=[{"host": evil, "before_date": "2026-01-01", "after_date": "2026-01-02", "what": "config:x",
                  "before": evil, "after": "<img src=x onerror=alert(1)>"}],
        crash_clusters=[{"cause": evil, "hosts": 3, "runs": 3, "host_list": evil, "first_date": "2026-01-02",
                         "last_date": "2026-01-02", "example": evil}],
        thresholds={"min_drop": 0.25, "min_peers": 3, "min_hosts": 3})
    page = render(ReportData(title="t", generated_at="now", version="x", compare=CompareResult(columns=[], rows=[], config=[], bands=[]),
                             runs=[], fleet=fleet))
    sec = _section(page)
    assert "<script" not in page and "<img" not in page
    assert sec.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8
    assert "50%" in sec and "crashed" in sec


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium not installed (/usr/bin/chromium)")
def test_fleet_page_in_headless_chromium(fleet_report):
    """The page as a browser builds it: the fleet tables are there, no script ran or exists."""
    html, root = fleet_report
    page = root / "fleet.html"
    page.write_text(html, encoding="utf-8")
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={root / 'profile'}", "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    dom = proc.stdout
    assert proc.returncode == 0 and "<body" in dom, proc.stderr[-2000:]
    sec = _section(dom)
    assert len(_rows(sec, "hosts")) == 7 and len(_rows(sec, "flags")) >= 2
    assert "<script" not in dom
