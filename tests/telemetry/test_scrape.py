"""`logsleuth scrape` against real HTTP servers on 127.0.0.1 (http.server in a thread)."""
from __future__ import annotations

import http.server
import threading

import pytest

from support.cli import run_in_process


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        srv = self.server
        srv.hits += 1
        if srv.mode == "html":
            body, ctype = b"<!DOCTYPE html><html><body>Grafana</body></html>", "text/html; charset=utf-8"
        else:
            body, ctype = srv.exposition(srv.hits).encode(), "text/plain; version=0.0.4; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _exposition(hit: int) -> str:
    """What vLLM's /metrics serves, from prometheus_client, one request more at each hit."""
    from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

    reg = CollectorRegistry()
    Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", ["engine", "model_name"],
          registry=reg).labels(engine="0", model_name="Qwen/Qwen3-8B").set(hit % 3)
    Counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", ["engine", "model_name"],
            registry=reg).labels(engine="0", model_name="Qwen/Qwen3-8B").inc(hit)
    return generate_latest(reg).decode()


@pytest.fixture
def server():
    started = []

    def start(mode: str = "metrics"):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        srv.mode, srv.hits, srv.exposition = mode, 0, _exposition
        t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        t.start()
        started.append((srv, t))
        return srv, f"http://127.0.0.1:{srv.server_address[1]}"
    yield start
    for srv, t in started:
        stop(srv)
        t.join(timeout=5)


def stop(srv) -> None:
    if not getattr(srv, "stopped", False):
        srv.stopped = True
        srv.shutdown()
        srv.server_close()


def test_scrape_stores_snapshots_that_read_like_a_scrape_file(server, tmp_path):
    import logsleuth
    from logsleuth.telemetry.scrape import scrape

    srv, url = server()
    con = logsleuth.open_db(str(tmp_path / "t.duckdb"))
    try:
        done = threading.Event()
        polls = []

        def on_poll(res):  # stop after the fourth poll (deterministic, no timing)
            polls.append(1)
            if len(polls) == 4:
                done.set()
        res = scrape(con, [url], interval_s=0.02, stop=done, on_poll=on_poll)
        (ep,) = res.endpoints
        assert ep.url == url + "/metrics" and ep.snapshots == 4 and not res.lost
        n_snap, model, port = con.execute(
            "SELECT count(DISTINCT m.snapshot), any_value(t.model), any_value(t.port) FROM metrics m"
            " JOIN telemetry_sources t USING (source_id)").fetchone()
        assert n_snap == ep.snapshots and model == "Qwen/Qwen3-8B" and port == srv.server_address[1]
        # preemptions counted one per hit: every interval's delta is 1
        assert {r[0] for r in con.execute("SELECT delta FROM metric_rates WHERE delta IS NOT NULL").fetchall()} == {1.0}
        # the stored lines are a scrape-loop file: ingested again they give the same samples
        text = "\n".join(r[0] for r in con.execute("SELECT raw FROM lines WHERE source_id = ? ORDER BY line_no",
                                                   [ep.source_id]).fetchall()) + "\n"
        (tmp_path / "again.prom").write_text(text)
        (again,) = logsleuth.ingest_files(con, [str(tmp_path / "again.prom")])
        a = con.execute("SELECT name, value, snapshot FROM metrics WHERE source_id = ? ORDER BY line_no",
                        [ep.source_id]).fetchall()
        b = con.execute("SELECT name, value, snapshot FROM metrics WHERE source_id = ? ORDER BY line_no",
                        [again.source_id]).fetchall()
        assert a == b and len(a) > 0
    finally:
        con.close()


def test_endpoint_going_away_keeps_its_snapshots(server, tmp_path):
    import logsleuth
    from logsleuth.telemetry.scrape import scrape

    steady, url_a = server()
    flaky, url_b = server()
    polls = []
    done = threading.Event()

    def on_poll(res):
        polls.append(1)
        if len(polls) == 2:
            stop(flaky)  # the second server goes away mid-scrape
        if len(polls) == 5:
            done.set()
    con = logsleuth.open_db(str(tmp_path / "t.duckdb"))
    try:
        res = scrape(con, [url_a, url_b], interval_s=0.02, stop=done, on_poll=on_poll)
        a, b = res.endpoints
        assert [u for u, _, _ in res.lost] == [url_b + "/metrics"] and "unreachable" in res.lost[0][2]
        assert (a.snapshots, b.snapshots) == (5, 2)
        stored = dict(con.execute("SELECT source_id, count(DISTINCT snapshot) FROM metrics GROUP BY ALL").fetchall())
        assert stored == {a.source_id: a.snapshots, b.source_id: b.snapshots}
    finally:
        con.close()


def test_cli_html_endpoint_one_line_exit_3_nothing_stored(server, tmp_path):
    _, url = server("html")
    db = str(tmp_path / "t.duckdb")
    code, out, err = run_in_process("scrape", url, "--interval", "0.05", "--duration", "0.2", db=db)
    assert code == 3 and out == ""
    assert err.strip().splitlines() == [err.strip()] and "not a Prometheus endpoint (it served text/html)" in err
    _assert_empty(db)


def test_cli_unreachable_endpoint_one_line_exit_3(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    db = str(tmp_path / "t.duckdb")
    code, _, err = run_in_process("scrape", f"127.0.0.1:{port}", "--duration", "0.2", db=db)
    assert code == 3 and err.startswith("Error: ") and "unreachable" in err and len(err.strip().splitlines()) == 1
    _assert_empty(db)


def test_cli_scrape_with_gpu_sampling_and_endpoint_lost(server, tmp_path):
    """--nvidia-smi through a stand-in nvidia-smi on PATH (prints what the real one prints)."""
    import os
    import stat

    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n"
                    "echo 'timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]'\n"
                    "echo \"$(date '+%Y/%m/%d %H:%M:%S.000'), 0, NVIDIA H100 80GB HBM3, 87 %, 70000 MiB, 81559 MiB\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    _, url = server()
    db = str(tmp_path / "t.duckdb")
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{fake.parent}{os.pathsep}{old}"
    try:
        code, _, err = run_in_process("scrape", url, "--interval", "0.05", "--duration", "0.3", "--nvidia-smi", db=db)
    finally:
        os.environ["PATH"] = old
    assert code == 0, err
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        n, util, name = con.execute("SELECT count(*), min(gpu_util), any_value(gpu_name) FROM gpu_samples").fetchone()
        assert n >= 1 and util == 0.87 and name == "NVIDIA H100 80GB HBM3"
        # one header line, then one row per poll: the source reads like an `nvidia-smi -l` loop
        kinds = [k for (k,) in con.execute("SELECT l.kind FROM lines l JOIN sources s USING (source_id)"
                                           " WHERE s.kind = 'nvidia_smi_csv' ORDER BY line_no").fetchall()]
        assert kinds == ["gpu_header"] + ["gpu_samples"] * n
    finally:
        con.close()


def _assert_empty(db: str) -> None:
    import os

    if not os.path.exists(db):
        return
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
    finally:
        con.close()
