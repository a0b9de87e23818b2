"""Poll live Prometheus ``/metrics`` endpoints (and optionally the local GPUs) into the database.

Contract: ``scrape(con, urls, interval_s, duration_s, ...)`` checks every endpoint once
before it stores anything (unreachable, or not Prometheus text such as an HTML page:
``BadInputError``, exit 3, nothing written), then polls them every ``interval_s`` until
``duration_s`` has passed, ``stop`` is set or Ctrl-C. Each endpoint becomes one source of
kind ``prometheus`` whose lines are exactly what a scrape loop writes to a file (a
``# scrape <ISO time>`` separator, then the response), so the stored source re-ingests
and reads like one. Every poll is committed on its own: an interrupt or an endpoint that
goes away keeps what was stored. An endpoint that stops answering is dropped and
reported in ``ScrapeResult.lost``; the scrape ends when none is left. With
``nvidia_smi=True`` and ``nvidia-smi`` on PATH, each poll also samples the local GPUs
(``--query-gpu ... --format=csv``) into an ``nvidia-smi`` source.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import http.client
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass, field
from typing import Callable

import polars as pl

from ..db import schema
from ..db.connection import fetch_one, transaction
from ..errors import BadInputError, UsageError
from ..ingest.stages import redact_columns, redact_lines, redact_name
from .gpu_text import parse_gpu_text
from .prometheus import parse_exposition
from .store import ensure_columns, insert

#: fields asked of nvidia-smi (canonical names; drivers before the rename know
#: clocks_throttle_reasons.active, newer ones clocks_event_reasons.active: both are tried)
NVIDIA_QUERY = ("timestamp,index,name,uuid,pci.bus_id,pstate,utilization.gpu,utilization.memory,memory.used,"
                "memory.total,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu,{reasons},"
                "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max")
_TIMEOUT_S = 5.0  # a whole request (connect, headers, body); never past the scrape's end
#: the default cap on one response: vLLM's and SGLang's /metrics are ~0.1-2 MB, DCGM's a few MB
MAX_BYTES = 64 << 20
_ACCEPT = "text/plain;version=0.0.4;q=1.0, */*;q=0.1"  # the classic text format, not OpenMetrics


@dataclass
class Endpoint:
    url: str
    source_id: int = 0
    lines: int = 0
    snapshots: int = 0
    alive: bool = True


@dataclass
class ScrapeResult:
    endpoints: list = field(default_factory=list)  # [Endpoint]
    gpu_source_id: int | None = None
    gpu_samples: int = 0
    gpu_lines: int = 0  # lines stored in the nvidia-smi source so far
    lost: list = field(default_factory=list)  # [(url, snapshots stored, reason)]
    notes: list = field(default_factory=list)
    interrupted: bool = False


def normalise_url(url: str) -> str:
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    parts = urllib.parse.urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{url}: not an http(s) URL")
    if parts.path in ("", "/"):
        u = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/metrics", parts.query, ""))
    return u


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same scheme, host and port: a /metrics endpoint has no
    business sending the scraper elsewhere (another host, an internal service)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            raise BadInputError(f"{req.full_url}: redirected to {new.scheme}://{new.netloc}: not followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameOrigin)


def fetch(url: str, timeout: float = _TIMEOUT_S, *, max_bytes: int = MAX_BYTES, deadline: float | None = None) -> str:
    """The response body as text; BadInputError with the reason when it cannot be had: the
    server is unreachable, answers with an error or HTML, sends more than ``max_bytes``
    (after gzip decoding), or has not finished by ``deadline`` (``time.monotonic``; default
    ``timeout`` from now). Memory stays within ``max_bytes`` whatever the server sends."""
    deadline = time.monotonic() + timeout if deadline is None else deadline
    req = urllib.request.Request(url, headers={"Accept": _ACCEPT, "User-Agent": "logsleuth-scrape",
                                               "Accept-Encoding": "gzip, identity"})
    try:
        with _OPENER.open(req, timeout=_socket_timeout(deadline)) as resp:
            ctype = resp.headers.get("Content-Type", "")
            body = _read_capped(url, resp, max_bytes, deadline)
    except urllib.error.HTTPError as exc:
        raise BadInputError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or time.monotonic() >= deadline:
            reason = "no complete response in time"
        raise BadInputError(f"{url}: unreachable ({reason})") from None
    text = body.decode("utf-8", "replace")
    if "html" in ctype.lower() or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        raise BadInputError(f"{url}: not a Prometheus endpoint (it served {ctype.split(';')[0] or 'HTML'})",
                            hint="point scrape at the server's /metrics (vLLM: API port; SGLang: --enable-metrics)")
    return text


def _socket_timeout(deadline: float) -> float:
    """What one blocking socket call may wait: never past the deadline."""
    return max(0.05, deadline - time.monotonic())


def _socket(resp):
    """The response's socket (to narrow its timeout as the deadline nears), or None."""
    return getattr(getattr(resp.fp, "raw", None), "_sock", None)


def _read_capped(url: str, resp, max_bytes: int, deadline: float) -> bytes:
    """The body, read in blocks until its end, ``max_bytes`` or the deadline."""
    gz = zlib.decompressobj(16 + zlib.MAX_WBITS) if "gzip" in resp.headers.get("Content-Encoding", "") else None
    out, size = [], 0
    while True:
        if time.monotonic() >= deadline:
            raise BadInputError(f"{url}: no complete response in time (stopped after {size:,} bytes)")
        if sock := _socket(resp):
            sock.settimeout(_socket_timeout(deadline))
        block = resp.read1(1 << 16)
        if not block:
            break
        if gz is not None:  # a bounded inflate: a gzip bomb stops at the cap
            block = gz.decompress(block, max_bytes - size + 1)
        size += len(block)
        if size > max_bytes:
            raise BadInputError(f"{url}: response larger than {max_bytes:,} bytes: not stored",
                                hint="--max-bytes raises the cap")
        out.append(block)
    return b"".join(out)


def _parse_response(url: str, text: str, ts: dt.datetime, snapshot: int, first_line: int):
    """Lines to store (separator + response) and the metrics they give."""
    lines = [f"# scrape {ts.isoformat(timespec='milliseconds')}"] + text.rstrip("\n").split("\n")
    metrics, kinds = parse_exposition(lines, url, default_ts=ts, first_snapshot=snapshot)
    lines, metrics = redact_lines(lines), redact_columns(metrics)  # the logs' redaction policy
    if metrics.height == 0:
        raise BadInputError(f"{url}: not a Prometheus endpoint (no samples in its response)")
    metrics = metrics.with_columns(pl.col("line_no") + (first_line - 1))
    return lines, {i + first_line - 1: k for i, k in kinds.items()}, metrics


def _host_of(url: str) -> tuple[str, int | None, str]:
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if host in ("localhost", "127.0.0.1", "::1"):
        host = socket.gethostname()  # what the server's own log (NCCL lines) calls itself
    return host, port, parts.netloc


def _new_source(con, name: str, kind: str, label, url_or_cmd: str, started: dt.datetime) -> int:
    source_id = int(fetch_one(con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources"))[0])
    digest = hashlib.sha256(f"scrape\0{url_or_cmd}\0{started.isoformat()}".encode()).hexdigest()
    con.execute("INSERT INTO sources (source_id, path, name, sha256, bytes, n_lines, kind, engine, label, ingested_at,"
                " compressed) VALUES (?, ?, ?, ?, 0, 0, ?, 'telemetry', ?, ?, false)",
                [source_id, redact_name(url_or_cmd), redact_name(name), digest, kind, label, started])
    return source_id


def _store_lines(con, source_id: int, lines: list[str], kinds: dict, first_line: int, run) -> None:
    n = len(lines)
    frame = pl.DataFrame({
        "source_id": pl.Series([source_id] * n, dtype=pl.Int32),
        "line_no": pl.Series(range(first_line, first_line + n), dtype=pl.Int64),
        "run_id": pl.Series([run] * n, dtype=pl.Int32),
        "kind": [kinds.get(first_line + i - 1, "metric_meta") for i in range(n)],
        "truncated": pl.Series([False] * n, dtype=pl.Boolean), "raw": lines,
    })
    insert(con, "lines_other", frame)
    con.execute("UPDATE sources SET n_lines = n_lines + ?, bytes = bytes + ? WHERE source_id = ?",
                [n, sum(len(s.encode()) + 1 for s in lines), source_id])


def _sample_gpus(binary: str) -> list[str] | None:
    for reasons in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
        try:
            out = subprocess.run([binary, f"--query-gpu={NVIDIA_QUERY.format(reasons=reasons)}", "--format=csv"],
                                 capture_output=True, text=True, timeout=_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.rstrip("\n").split("\n")
    return None


def scrape(con, urls: list[str], *, interval_s: float = 5.0, duration_s: float | None = None,
           nvidia_smi: bool = False, label: str | None = None, run: int | None = None,
           stop: threading.Event | None = None, on_poll: Callable[[ScrapeResult], None] | None = None,
           nvidia_smi_binary: str = "nvidia-smi", max_bytes: int = MAX_BYTES) -> ScrapeResult:
    """``max_bytes`` caps one response; each request ends within ``_TIMEOUT_S`` and never
    after ``duration_s``, whatever the server does (see ``fetch``)."""
    if not urls:
        raise UsageError("scrape needs at least one URL")
    if interval_s <= 0:
        raise UsageError(f"--interval {interval_s}: must be above 0 seconds")
    if duration_s is not None and duration_s <= 0:
        raise UsageError(f"--duration {duration_s}: must be above 0 seconds")
    if max_bytes <= 0:
        raise UsageError(f"--max-bytes {max_bytes}: must be above 0")
    deadline = None if duration_s is None else time.monotonic() + duration_s
    if run is not None and not fetch_one(con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run])):
        raise BadInputError(f"--run {run}: no such run (see `logsleuth runs`)")
    result = ScrapeResult(endpoints=[Endpoint(normalise_url(u)) for u in urls])
    # check every endpoint before anything is written
    first: dict[str, tuple] = {}
    get = _Fetcher(max_bytes, deadline)
    for ep in result.endpoints:
        ts = dt.datetime.now()
        first[ep.url] = (ts, _parse_response(ep.url, get(ep.url), ts, 0, 1))
    gpu_bin = shutil.which(nvidia_smi_binary) if nvidia_smi else None
    if nvidia_smi and gpu_bin is None:
        result.notes.append(f"{nvidia_smi_binary} not found on PATH: GPU sampling skipped")
    writer = _Writer(con, result, label, run)
    try:
        for ep in result.endpoints:
            writer.endpoint(ep, *first.pop(ep.url))
        _poll(writer, interval_s, get, gpu_bin, stop or threading.Event(), on_poll)
    except KeyboardInterrupt:
        result.interrupted = True  # Ctrl-C ends a scrape; what was committed stays
    if con is not None:
        try:
            con.execute("CHECKPOINT")
        except Exception:
            pass
    return result


@dataclass
class _Fetcher:
    """``fetch`` under one scrape's limits: its byte cap and its end."""

    max_bytes: int
    deadline: float | None

    def __call__(self, url: str) -> str:
        end = time.monotonic() + _TIMEOUT_S
        return fetch(url, max_bytes=self.max_bytes, deadline=end if self.deadline is None else min(end, self.deadline))


def _poll(writer: _Writer, interval_s: float, get: _Fetcher, gpu_bin: str | None,
          stop: threading.Event, on_poll) -> None:
    """Sample the GPUs and poll the endpoints still alive every ``interval_s`` until the
    deadline, ``stop`` or no endpoint is left; an endpoint that fails is dropped into
    ``result.lost``."""
    result, deadline = writer.result, get.deadline
    while True:
        if gpu_bin:
            out = _sample_gpus(gpu_bin)
            if out is None:
                result.notes.append("nvidia-smi failed: GPU sampling stopped")
                gpu_bin = None
            else:
                writer.gpus(out, dt.datetime.now())
        if on_poll:
            on_poll(result)
        wait = interval_s if deadline is None else min(interval_s, deadline - time.monotonic())
        if wait <= 0 or stop.wait(wait) or (deadline is not None and time.monotonic() >= deadline):
            return
        for ep in [e for e in result.endpoints if e.alive]:
            ts = dt.datetime.now()
            try:
                parsed = _parse_response(ep.url, get(ep.url), ts, ep.snapshots, ep.lines + 1)
            except BadInputError as exc:
                if deadline is not None and time.monotonic() >= deadline:
                    return  # the scrape's end came during this request: not the endpoint's fault
                ep.alive = False
                result.lost.append((ep.url, ep.snapshots, str(exc)))
                continue
            writer.endpoint(ep, ts, parsed)
        if not any(e.alive for e in result.endpoints):
            return


class _Writer:
    """Stores what one scrape polls, each poll in a transaction of its own: an endpoint's
    response into its source (made on its first poll), GPU samples into the nvidia-smi source."""

    def __init__(self, con, result: ScrapeResult, label: str | None, run: int | None):
        self.con, self.result, self.label, self.run = con, result, label, run
        self.started = dt.datetime.now()
        self._columns_checked = False

    def _ensure_columns(self) -> None:
        if not self._columns_checked:
            ensure_columns(self.con)
            self._columns_checked = True

    def endpoint(self, ep: Endpoint, ts: dt.datetime, parsed) -> None:
        from .dcgm import dcgm_gpu_samples

        con = self.con
        lines, kinds, metrics = parsed
        with transaction(con):
            self._ensure_columns()
            if not ep.source_id:
                host, port, netloc = _host_of(ep.url)
                ep.source_id = _new_source(con, netloc, "prometheus", self.label, ep.url, self.started)
                model = metrics["model"].drop_nulls()
                con.execute("INSERT INTO telemetry_sources (source_id, tool, host, instance, port, model, first_ts,"
                            " last_ts, run_id) VALUES (?, 'prometheus', ?, ?, ?, ?, ?, ?, ?)",
                            [ep.source_id, host, redact_name(netloc), port, model[0] if len(model) else None, ts, ts,
                             self.run])
            sid = pl.lit(ep.source_id, dtype=pl.Int32).alias("source_id")
            insert(con, "metrics", metrics.with_columns(sid))
            gpus = dcgm_gpu_samples(metrics)
            if gpus.height:
                insert(con, "gpu_samples", gpus.with_columns(sid))
            _store_lines(con, ep.source_id, lines, kinds, ep.lines + 1, self.run)
            con.execute("UPDATE telemetry_sources SET last_ts = ? WHERE source_id = ?", [ts, ep.source_id])
        ep.lines += len(lines)
        ep.snapshots += 1

    def gpus(self, lines: list[str], ts: dt.datetime) -> None:
        con, result = self.con, self.result
        header_needed = result.gpu_source_id is None
        body = lines if header_needed else lines[1:]  # the header once, as `nvidia-smi -l` prints it
        offset = 0 if header_needed else result.gpu_lines
        with transaction(con):
            if header_needed:
                result.gpu_source_id = _new_source(con, "nvidia-smi", "nvidia_smi_csv", self.label,
                                                   "nvidia-smi --query-gpu", self.started)
                con.execute("INSERT INTO telemetry_sources (source_id, tool, host, first_ts, last_ts, run_id)"
                            " VALUES (?, 'nvidia-smi', ?, ?, ?, ?)", [result.gpu_source_id, socket.gethostname(),
                                                                     ts, ts, self.run])
            samples, kinds = parse_gpu_text("nvidia_smi_csv", lines, "nvidia-smi")
            samples, body = redact_columns(samples), redact_lines(body)  # the logs' redaction policy
            if not header_needed:
                samples = samples.filter(pl.col("line_no") > 1)
                kinds = {i - 1: k for i, k in kinds.items() if i > 0}
            samples = samples.with_columns(pl.col("line_no") - (1 if not header_needed else 0) + offset,
                                           pl.lit(result.gpu_source_id, dtype=pl.Int32).alias("source_id"))
            insert(con, "gpu_samples", samples)
            _store_lines(con, result.gpu_source_id, body, {k + offset: v for k, v in kinds.items()}, offset + 1,
                         self.run)
            con.execute("UPDATE telemetry_sources SET last_ts = ? WHERE source_id = ?", [ts, result.gpu_source_id])
        result.gpu_lines = offset + len(body)
        result.gpu_samples += len(body) - (1 if header_needed else 0)
