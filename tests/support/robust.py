"""Helpers for the crash-safety and concurrency tests: a large generated log, and the real CLI
entry point run in a subprocess that says when it is half-way through an ingest (and can hold
there), so a test can kill, interrupt or race it at a known point.
"""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

from support.paths import ROOT, SAMPLES

#: runs ``logsleuth.cli.app.main`` and says MIDWAY on stderr once part of the file is stored
#: inside the open ingest transaction (the write lock held), then sleeps HOLD_S seconds, or
#: until the file HOLD_UNTIL exists (at most 120 s). Two paths store a file: the chunk path
#: (pipeline, 256 KiB chunks here: MIDWAY after chunk STOP_AT is handed on) and the batch frame
#: of a batch's small files (ingest/batch_frame.py, one store per engine for the whole batch:
#: MIDWAY after the first store, before the batch's run derivation and its COMMIT)
_CHILD = r"""
import os, sys, time
import importlib
ingest_mod = importlib.import_module("logsleuth.ingest.pipeline")  # the package also exports a function `ingest`
frame_mod = importlib.import_module("logsleuth.ingest.batch_frame")
_real, _real_store = ingest_mod.iter_chunks, frame_mod.store_chunk
STOP_AT, HOLD_S = int(os.environ["LS_STOP_AT"]), float(os.environ.get("LS_HOLD_S", "0"))
HOLD_UNTIL = os.environ.get("LS_HOLD_UNTIL")
_said = []
def _midway():
    if _said:
        return
    _said.append(1)
    sys.stderr.write("MIDWAY\n"); sys.stderr.flush()
    if HOLD_S:
        time.sleep(HOLD_S)
    t_end = time.monotonic() + 120
    while HOLD_UNTIL and not os.path.exists(HOLD_UNTIL) and time.monotonic() < t_end:
        time.sleep(0.05)
def _chunks(src, chunk_bytes=None):
    for n, chunk in enumerate(_real(src, 256 * 1024)):
        if n == STOP_AT + 1:
            _midway()
        yield chunk
def _store(*args, **kw):
    out = _real_store(*args, **kw)
    _midway()
    return out
ingest_mod.iter_chunks = _chunks
frame_mod.store_chunk = _store
from logsleuth.cli.app import main
sys.argv = ["logsleuth"] + sys.argv[1:]
main()
"""


def make_big_log(path: Path, n_decode: int = 60_000) -> Path:
    """An SGLang log: the start-up of a real sample, then ``n_decode`` decode lines (~150 B each)."""
    head = (SAMPLES / "sglang_tuned_v1.log").read_text(encoding="utf-8").split("\n")[:365]
    t0 = dt.datetime(2026, 2, 4, 14, 14, 17)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(head) + "\n")
        for i in range(n_decode):
            ts = (t0 + dt.timedelta(seconds=i // 10)).strftime("%Y-%m-%d %H:%M:%S")
            fh.write(f"[{ts} TP0] Decode batch, #running-req: 1, #token: {997 + i}, token usage: 0.00, "
                     f"cuda graph: True, gen throughput (token/s): {60 + i % 7}.49, #queue-req: 0, \n")
    return path


def env(**extra: str) -> dict:
    e = dict(os.environ)
    e.pop("LOGSLEUTH_DB", None)
    e.update(extra)
    return e


def spawn(*args: str, db: str, stop_at: int = 2, hold_s: float = 0.0, hold_until: str = "",
          **extra_env: str) -> subprocess.Popen:
    """Start ``logsleuth --db DB ARGS`` (patched as described above) in a subprocess."""
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, "--db", db, *args], cwd=str(ROOT),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env(LS_STOP_AT=str(stop_at), LS_HOLD_S=str(hold_s), LS_HOLD_UNTIL=hold_until, **extra_env))


def start_cli(*args: str, db: str, **extra_env: str) -> subprocess.Popen:
    """Start the plain ``logsleuth --db DB ARGS`` in a subprocess."""
    return subprocess.Popen([sys.executable, "-m", "logsleuth.cli.app", "--db", db, *args], cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(**extra_env))


def wait_for(proc: subprocess.Popen, marker: bytes = b"MIDWAY", timeout: float = 60.0) -> bytes:
    """Read the child's stderr until ``marker``; fail if it ends or times out first."""
    buf = b""
    deadline = time.monotonic() + timeout
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    try:
        while marker not in buf:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"no {marker!r} within {timeout} s; stderr so far: {buf[-2000:]!r}")
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                time.sleep(0.02)
                continue
            if not chunk:
                proc.wait()
                raise AssertionError(f"child ended (rc {proc.returncode}) before {marker!r}: {buf[-2000:]!r}")
            buf += chunk
    finally:
        os.set_blocking(fd, True)
    return buf


def finish(proc: subprocess.Popen, before: bytes = b"", timeout: float = 120.0) -> tuple[int, str]:
    """Wait for the child; return (exit code, its whole stderr)."""
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, (before + err).decode("utf-8", "replace")


def sources(db: str) -> list[tuple]:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT source_id, name, sha256, n_lines FROM sources ORDER BY source_id").fetchall()
    finally:
        con.close()


def counts(db: str) -> dict:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("sources", "runs", "lines", "config", "events", "decode_stats", "templates", "errors")}
    finally:
        con.close()
