"""`scrape` against hostile servers on 127.0.0.1: an endless body, a byte a second, a gzip
bomb, a redirect to another host. Each run ends in bounded time and memory with a clear
error (or, for a server that turns hostile mid-scrape, on time with what it stored)."""
from __future__ import annotations

import gzip
import http.server
import socketserver
import threading
import time

import pytest

from support.bounded import run_bounded

METRICS = b"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 1\n"


class _Hostile(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        srv = self.server
        srv.hits += 1
        srv.first_at = srv.first_at or time.monotonic()
        mode = srv.mode if srv.hits > srv.good_hits else "good"
        try:
            getattr(self, f"_{mode}")()
        except (BrokenPipeError, ConnectionResetError):
            srv.hung_up_at = time.monotonic()  # the scraper let go of this response

    def _head(self, **headers):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()

    def _good(self):
        self._head(Content_Length=str(len(METRICS)))
        self.wfile.write(METRICS)

    def _endless(self):
        self._head()
        block = METRICS * 4096
        while not self.server.closing:
            self.wfile.write(block)

    def _trickle(self):
        self._head()
        while not self.server.closing:
            self.wfile.write(b"#")  # a byte at a time, never the end (4 a second: the hang-up is seen soon)
            self.wfile.flush()
            time.sleep(0.25)

    def _gzip_bomb(self):
        body = self.server.bomb
        self._head(Content_Encoding="gzip", Content_Length=str(len(body)))
        self.wfile.write(body)

    def _redirect(self):
        self.send_response(302)
        self.send_header("Location", self.server.elsewhere)
        self.end_headers()


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


@pytest.fixture
def hostile():
    servers = []

    def start(mode: str, good_hits: int = 0, elsewhere: str = ""):
        srv = _Server(("127.0.0.1", 0), _Hostile)
        srv.mode, srv.hits, srv.good_hits, srv.closing, srv.elsewhere = mode, 0, good_hits, False, elsewhere
        srv.first_at = srv.hung_up_at = None
        if mode == "gzip_bomb":
            srv.bomb = gzip.compress(b"\0" * (256 << 20), compresslevel=1)  # 256 MiB of zeros in ~250 KB
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(srv)
        start.last = srv
        return f"http://127.0.0.1:{srv.server_address[1]}/metrics"
    yield start
    for srv in servers:
        srv.closing = True
        srv.shutdown()
        srv.server_close()


#: the machine may be loaded: start-up is not timed, the server times the scraper from its first
#: request to its hang-up
SLACK_S = 1.5


def _held(srv) -> float:
    """Seconds the scraper held the hostile response, from the server's first request."""
    return (srv.hung_up_at or time.monotonic()) - srv.first_at


def _scrape(tmp_path, url: str, *extra: str, timeout: float = 60):
    return run_bounded("scrape", url, "--interval", "1", "--duration", "3", *extra,
                       db=str(tmp_path / "t.duckdb"), timeout=timeout, mem_mb=1500)


@pytest.mark.parametrize("mode,says", [
    ("endless", "larger than"),
    ("trickle", "in time"),
    ("gzip_bomb", "larger than"),
])
def test_a_hostile_endpoint_is_refused_in_bounded_time_and_memory(hostile, tmp_path, mode, says):
    r = _scrape(tmp_path, hostile(mode), "--max-bytes", str(4 << 20))
    assert r.code == 3, (r.code, r.seconds, r.err[-500:])
    assert says in r.err and "Traceback" not in r.err, r.err
    assert _held(hostile.last) < 3 + SLACK_S  # --duration 3 whatever the server does
    assert r.peak_mib < 400, r.peak_mib


@pytest.mark.parametrize("mode", ["endless", "trickle"])
def test_an_endpoint_turning_hostile_keeps_the_duration(hostile, tmp_path, mode):
    r = _scrape(tmp_path, hostile(mode, good_hits=1), "--max-bytes", str(4 << 20))
    assert r.code in (0, 3), (r.code, r.err[-500:])
    assert "1 snapshot(s)" in r.err, r.err
    assert _held(hostile.last) < 3 + SLACK_S
    assert r.peak_mib < 400, r.peak_mib


def test_a_redirect_to_another_host_is_not_followed(hostile, tmp_path):
    elsewhere = hostile("good")  # a real endpoint on another port
    r = _scrape(tmp_path, hostile("redirect", elsewhere=elsewhere))
    assert r.code == 3 and "redirected" in r.err and "not followed" in r.err, (r.code, r.err[-500:])
