"""Fixtures of the watch tests: a database that already knows a healthy start of the seed
story's model (sglang_tuned_v1.log), and a runner that drives `logsleuth watch --plain
--format jsonl` in a subprocess while a replayer writes the log it follows."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from support.paths import ROOT, SAMPLES  # noqa: E402

SEED = SAMPLES / "sglang_baseline.log"  # run 1 (lines 1-103) killed at 41/64 shards; run 2 from line 104
HEALTHY = SAMPLES / "sglang_tuned_v1.log"  # earlier healthy starts of the same model and box


@pytest.fixture(scope="session")
def _history_template(tmp_path_factory) -> Path:
    import logsleuth

    path = tmp_path_factory.mktemp("watch-history") / "history.duckdb"
    con = logsleuth.open_db(str(path))
    logsleuth.ingest_files(con, [str(HEALTHY)])
    con.close()
    return path


@pytest.fixture
def history_db(_history_template, tmp_path) -> str:
    """A copy (per test) of a database holding the healthy starts of sglang_tuned_v1.log."""
    dst = tmp_path / "watch.duckdb"
    shutil.copy(_history_template, dst)
    return str(dst)


class WatchProcess:
    """`logsleuth watch` in a subprocess; its jsonl notices collected as they come."""

    def __init__(self, db: str, paths: list[str], *args: str, stdin=None):
        cmd = [sys.executable, "-m", "logsleuth", "--db", db, "watch", *paths, "--plain", "--format", "jsonl",
               "--poll", "0.05", *args]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin, env=env,
                                     cwd=str(ROOT))
        self.notices: list[dict] = []
        self.raw: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            text = line.decode("utf-8", "replace")
            self.raw.append(text)
            self.notices.append(json.loads(text))

    def wait_for(self, pred, timeout: float = 60.0) -> dict:
        """The first notice matching ``pred`` (polls; fails after ``timeout`` seconds)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for n in list(self.notices):
                if pred(n):
                    return n
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no matching notice; got: {[n.get('event') for n in self.notices]}\n"
                             f"stderr: {self.stderr_text()}")

    def finish(self, timeout: float = 90.0) -> int:
        rc = self.proc.wait(timeout)
        self._reader.join(10)
        return rc

    def stderr_text(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode("utf-8", "replace")

    def events(self, name: str, **match) -> list[dict]:
        return [n for n in self.notices if n.get("event") == name and all(n.get(k) == v for k, v in match.items())]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def watch_process():
    started: list[WatchProcess] = []

    def start(db: str, paths: list[str], *args: str, stdin=None) -> WatchProcess:
        w = WatchProcess(db, paths, *args, stdin=stdin)
        started.append(w)
        w.wait_for(lambda n: n.get("event") == "watching", timeout=60)
        return w

    yield start
    for w in started:
        w.kill()
