"""The real CLI in a subprocess under a memory and time bound, with what it cost.

``run_bounded(*args, db=..., timeout=..., mem_mb=...)`` runs ``logsleuth ARGS``, kills it
when its resident memory passes ``mem_mb`` (watched every 20 ms: a runaway child never
takes the host's memory; an address-space limit would break DuckDB's and polars'
reservations) or after ``timeout`` seconds; returns a ``Bounded`` with the exit code (None when it
had to be killed), stdout, stderr, the wall time and the child's peak RSS in MiB.
``send`` (signal, after seconds) delivers a signal while it runs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from support.paths import ROOT


@dataclass
class Bounded:
    code: int | None
    out: str
    err: str
    seconds: float
    peak_mib: float
    signalled_at: float | None = None  # wall time the signal was sent


def run_bounded(*args: str, db: str | None = None, timeout: float = 30, mem_mb: int = 1500,
                send: tuple[int, float] | None = None, env: dict | None = None) -> Bounded:
    cmd = [sys.executable, "-m", "logsleuth.cli.app", *(["--db", db] if db else []), *args]
    full_env = {k: v for k, v in os.environ.items() if k != "LOGSLEUTH_DB"} | (env or {})

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=str(ROOT))
        code, usage, sent, hwm = _wait(proc, t0, timeout, send, mem_mb)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        # the child's own high-water mark, sampled while it ran: ru_maxrss of a child also counts
        # the parent's resident size at fork (Linux keeps it across exec), so a big test worker
        # (pytest -n) would be charged to a small child
        return Bounded(code, out.read().decode(errors="replace"), err.read().decode(errors="replace"), seconds,
                       hwm or usage.ru_maxrss / 1024, sent)


def _rss_mib(pid: int, field: str = "VmRSS") -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(ln.split()[1]) / 1024 for ln in fh if ln.startswith(field + ":")), 0.0)
    except OSError:
        return 0.0


def _wait(proc, t0: float, timeout: float, send, mem_mb: int):
    sent, hwm = None, 0.0
    while True:
        hwm = max(hwm, _rss_mib(proc.pid, "VmHWM"))  # before wait4 reaps it (a zombie has no memory map)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, sent, hwm
        now = time.monotonic() - t0
        if send and sent is None and now >= send[1]:
            proc.send_signal(send[0])
            sent = now
        if now > timeout or _rss_mib(proc.pid) > mem_mb:
            proc.send_signal(signal.SIGKILL)
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return None, usage, sent, hwm
        time.sleep(0.02)
