"""`logsleuth report`: one self-contained HTML file. Checked statically and in headless Chromium through
the DevTools protocol (a tiny websocket client below; no extra packages): loads from file:// with no
console error and no network request, the charts are in the DOM, log text is escaped; a screenshot goes
to tests/artifacts/report.png and render timings to tests/artifacts/timings.txt."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from support.paths import TESTS
from support.story import LABELS, SAMPLES, story_db, story_missing

ARTIFACTS = TESTS / "artifacts"
CHROMIUM = "/usr/bin/chromium"
XSS = "<script>alert(1)</script>"

pytestmark = pytest.mark.skipif(bool(story_missing()), reason=f"story samples missing: {story_missing()}")


@pytest.fixture(scope="module")
def report_db(tmp_path_factory) -> str:
    """The story database plus a short run whose log carries a hostile line (copied, so the shared one stays)."""
    import logsleuth
    from logsleuth.ingest.pipeline import IngestOptions

    src = story_db(tmp_path_factory)
    folder = tmp_path_factory.mktemp("report")
    path = str(folder / "report.duckdb")
    shutil.copy(src, path)
    lines = (SAMPLES / "sglang_tuned_v1.log").read_text(encoding="utf-8").splitlines()
    first_decode = next(i for i, ln in enumerate(lines) if "Decode batch" in ln)
    hostile = lines[: first_decode + 40] + [
        f"[2026-02-04 14:13:00] ERROR: request failed: {XSS}",
        "Traceback (most recent call last):",
        '  File "/srv/app.py", line 3, in <module>',
        "    main()",
        f"ValueError: bad input {XSS}",
    ]
    log = folder / "hostile.log"
    log.write_text("\n".join(hostile) + "\n", encoding="utf-8")
    con = logsleuth.open_db(path)
    try:
        logsleuth.ingest_files(con, [str(log)], IngestOptions(label="hostile"))
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def page(report_db) -> tuple[str, dict]:
    import logsleuth
    from logsleuth.report import build_report

    con = logsleuth.open_db(report_db, read_only=True)
    try:
        timings: dict = {}
        html = build_report(con, LABELS + ["hostile"], timings=timings)
    finally:
        con.close()
    return html, timings


def test_report_is_static_and_escaped(page):
    html, _ = page
    low = html.lower()
    assert "<script" not in low  # no script of ours, and the log's is escaped
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 1
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # nothing to fetch: no URL-bearing attribute points anywhere but an anchor or data:, the CSS imports
    # nothing, and the only URL in a tag is the SVG namespace (URLs quoted from logs are text)
    attrs = re.findall(r'\s(?:src|href|xlink:href|action|formaction|poster|srcset|data|background)\s*=\s*"([^"]*)"',
                       html, flags=re.I)
    # ... but the links of known upstream issues, which a reader follows (never fetched)
    cited = set(re.findall(r'<a href="(https://[^"]+)" rel="noopener noreferrer">', html))
    assert all(a.startswith(("#", "data:")) or a in cited for a in attrs), attrs
    assert "url(" not in low and "@import" not in low
    tags = re.findall(r"<[a-z][^>]*>", html)
    assert {u for t in tags for u in re.findall(r"https?://[^\s\"'<>]+", t)} <= {"http://www.w3.org/2000/svg"} | cited
    for kind in ("throughput", "concurrency", "kv", "queue", "timeline"):
        assert f'data-kind="{kind}"' in html, kind
    assert 'id="compare"' in html and 'id="findings"' in html and 'id="overlay"' in html
    assert "continuous decode steps" in html  # config differences under the compare table


def test_report_acceptance_chart_for_speculative_runs(tmp_path):
    import logsleuth
    from logsleuth.report import build_report

    sample = SAMPLES / "sglang_eagle3.log"
    if not sample.exists():
        pytest.skip("sglang_eagle3.log not present")
    con = logsleuth.open_db(str(tmp_path / "spec.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(sample)])
        html = build_report(con, findings=False)
    finally:
        con.close()
    assert 'data-kind="acceptance"' in html


def test_cli_report_writes_file(report_db, tmp_path, capsys, monkeypatch):
    from logsleuth.cli import app as cli

    out = tmp_path / "r.html"
    monkeypatch.setattr("sys.argv", ["logsleuth", "--db", report_db, "report", "sglang_tuned_v1", "-o", str(out),
                                      "--no-findings"])
    with pytest.raises(SystemExit) as exit_info:  # in-process: the console script's entry point
        cli.main()
    assert not exit_info.value.code
    captured = capsys.readouterr()
    assert out.exists() and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert captured.out == ""  # the note goes to stderr
    assert "wrote" in captured.err


# --------------------------------------------------------------------------- headless Chromium via CDP


class _WebSocket:
    """Just enough RFC 6455 for the DevTools protocol: text frames, client masking, fragments, ping."""

    def __init__(self, url: str, timeout: float = 20.0):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert m, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            data += chunk
        head, self.buf = data.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"websocket handshake refused: {head[:200]!r}")

    def _frame(self, opcode: int, payload: bytes) -> None:
        hdr = bytearray([0x80 | opcode])
        n = len(payload)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr.append(0x80 | 126)
            hdr += struct.pack(">H", n)
        else:
            hdr.append(0x80 | 127)
            hdr += struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(hdr) + mask + masked)

    def send(self, text: str) -> None:
        self._frame(0x1, text.encode("utf-8"))

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            op = b0 & 0x0F
            if op == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if op == 0x9:
                self._frame(0xA, data)
                continue
            if op == 0xA:
                continue
            message += data
            if b0 & 0x80:
                return message.decode("utf-8")

    def close(self) -> None:
        try:
            self._frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class _Cdp:
    def __init__(self, ws: _WebSocket):
        self.ws = ws
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, timeout: float = 20.0) -> dict:
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)
        raise TimeoutError(method)

    def wait_event(self, name: str, timeout: float = 20.0) -> dict:
        for e in self.events:
            if e["method"] == name:
                return e
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == name:
                    return msg
        raise TimeoutError(name)


def _start_chromium(profile: Path) -> tuple[subprocess.Popen, str]:
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
            "--window-size=1300,1000", "about:blank"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode}")
        if port_file.exists() and len(port_file.read_text().split()) >= 2:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("chromium did not open its DevTools port")
    port = int(port_file.read_text().split()[0])
    ws_url = None
    while time.monotonic() < deadline and ws_url is None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
            targets = json.loads(r.read())
        ws_url = next((t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page"), None)
        if ws_url is None:
            time.sleep(0.05)
    if ws_url is None:
        proc.kill()
        raise RuntimeError("chromium has no page target")
    return proc, ws_url


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@pytest.mark.slow  # headless Chromium
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium not installed (/usr/bin/chromium)")
def test_report_in_headless_chromium(page, tmp_path):
    html, build_t = page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "report.html"
    path.write_text(html, encoding="utf-8")
    url = path.resolve().as_uri()

    t0 = time.perf_counter()
    proc, ws_url = _start_chromium(tmp_path / "profile")
    ws = None
    try:
        t_launch = time.perf_counter() - t0
        ws = _WebSocket(ws_url)
        cdp = _Cdp(ws)
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.call(f"{domain}.enable")
        t1 = time.perf_counter()
        nav = cdp.call("Page.navigate", {"url": url})
        assert not nav.get("errorText"), nav
        cdp.wait_event("Page.loadEventFired")
        t_load = time.perf_counter() - t1
        probe = cdp.call("Runtime.evaluate", {"returnByValue": True, "expression": """JSON.stringify({
            charts: document.querySelectorAll('svg.chart').length,
            kinds: Array.from(document.querySelectorAll('svg.chart')).map(s => s.dataset.kind),
            polylines: document.querySelectorAll('svg.chart polyline').length,
            phases: document.querySelectorAll('svg.chart rect.phase').length,
            scripts: document.scripts.length,
            xssText: document.body.textContent.includes('<script>alert(1)</script>'),
            compareRows: document.querySelectorAll('table.compare tbody tr').length,
            width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
            overlayBottom: (() => { const o = document.getElementById('overlay');
                                    return o ? o.getBoundingClientRect().bottom + window.scrollY : 2400; })(),
            nav: performance.getEntriesByType('navigation').map(e => ({dcl: e.domContentLoadedEventEnd,
                                                                     load: e.loadEventEnd}))[0]
        })"""})
        info = json.loads(probe["result"]["value"])
        t2 = time.perf_counter()
        # the compare table and the charts across runs (the per-run sections below repeat them per run)
        shot_h = int(min(info["overlayBottom"] + 20, info["height"]))
        shot = cdp.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": 1300, "height": shot_h, "scale": 1}})
        png = base64.b64decode(shot["data"])
        (ARTIFACTS / "report.png").write_bytes(png)
        t_shot = time.perf_counter() - t2
        events = list(cdp.events)
    finally:
        if ws is not None:
            ws.close()
        _stop(proc)

    console_errors = [e for e in events if e["method"] == "Runtime.consoleAPICalled"
                      and e["params"].get("type") in ("error", "assert", "warning")]
    exceptions = [e for e in events if e["method"] == "Runtime.exceptionThrown"]
    log_errors = [e["params"]["entry"] for e in events if e["method"] == "Log.entryAdded"
                  and e["params"]["entry"].get("level") in ("error", "warning")]
    requests = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    dialogs = [e for e in events if e["method"] == "Page.javascriptDialogOpening"]
    assert not console_errors and not exceptions and not log_errors, (console_errors, exceptions, log_errors)
    assert not dialogs
    assert requests and all(u == url or u.startswith("data:") for u in requests), requests
    assert info["scripts"] == 0
    assert info["xssText"], "the hostile log line should show as text"
    assert info["charts"] >= 10 and {"throughput", "concurrency", "kv", "queue", "timeline"} <= set(info["kinds"])
    assert info["polylines"] >= 6 and info["phases"] >= 10 and info["compareRows"] >= 20
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000

    lines = [
        f"report build (library): gather data (compare, series) {build_t['gather_s'] * 1000:.0f} ms, "
        f"render HTML {build_t['render_s'] * 1000:.0f} ms, "
        f"total {build_t['total_s'] * 1000:.0f} ms, {build_t['html_bytes'] / 1024:.0f} KiB",
        f"chromium: launch {t_launch * 1000:.0f} ms, navigate+load {t_load * 1000:.0f} ms "
        f"(DOMContentLoaded {info['nav']['dcl']:.0f} ms, load {info['nav']['load']:.0f} ms in-page), "
        f"screenshot {t_shot * 1000:.0f} ms ({info['width']}x{shot_h} px of a {info['height']} px page)",
        f"page: {info['charts']} charts, {info['polylines']} polylines, {info['phases']} timeline bars, "
        f"{len(requests)} request(s): {requests}",
    ]
    (ARTIFACTS / "timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n" + "\n".join(lines))
