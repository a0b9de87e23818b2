"""`logsleuth watch` options and exit codes that need no replay; a folder with a file that
appears late, in-process; `--exit-on finding=SEVERITY`."""
from __future__ import annotations

import json
import threading
import time

import pytest

from logsleuth.watch.session import EXIT_FINDING, EXIT_OK, Watch, WatchOptions, parse_exit_on
from logsleuth.watch.store import Store

from support.cli import run_in_process
from support.paths import SAMPLES


@pytest.mark.parametrize("args,needle", [
    (["--format", "xml"], "'xml' is not one of text, jsonl"),
    (["--exit-on", "soon"], "--exit-on soon"),
    (["--exit-on", "finding=loud"], "severity must be one of"),
    (["--poll", "0"], "--poll 0"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, args, needle):
    code, out, err = run_in_process("watch", str(tmp_path / "x.log"), *args, db=str(tmp_path / "w.duckdb"))
    assert code == 2 and out == ""
    assert "Error: " in err and needle in err and "Traceback" not in err


def test_parse_exit_on():
    assert parse_exit_on(["ready", "finding=critical"]) == (True, False, "critical")
    assert parse_exit_on(["crash", "finding"]) == (False, True, "warning")


def test_timeout_on_a_missing_file_says_it_waits(tmp_path):
    code, out, err = run_in_process("watch", str(tmp_path / "later.log"), "--plain", "--format", "jsonl",
                                    "--timeout", "0.3", "--poll", "0.05", db=str(tmp_path / "w.duckdb"))
    events = [json.loads(x)["event"] for x in out.splitlines()]
    assert code == 6 and events[0] == "watching" and "note" in events and events[-1] == "timeout"


class _NoStore(Store):
    """Storing is covered by the replay tests; here only the following is."""

    def sync(self, paths, rotated=None):
        return []

    def history(self):
        return None


def test_folder_picks_up_a_log_that_appears_later(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    notices: list[dict] = []
    w = Watch(WatchOptions([str(folder)], str(tmp_path / "w.duckdb"), poll_s=0.02, timeout_s=30,
                           exit_on=["crash"]), notices.append, store=_NoStore(str(tmp_path / "w.duckdb")))
    data = (SAMPLES / "eras" / "sglang_capture_oom.log").read_bytes()

    def write_later():
        while not any(n["event"] == "watching" for n in notices):
            time.sleep(0.01)
        (folder / "server.log").write_bytes(data)

    threading.Thread(target=write_later, daemon=True).start()
    assert w.run() == 5
    assert any(n["event"] == "run" and n["source"].endswith("server.log") for n in notices)
    assert any(n["event"] == "end" and n["state"] == "crashed" for n in notices)


@pytest.mark.slow  # a replay until the finding appears, ~20 s
def test_exit_on_finding(tmp_path):
    log = tmp_path / "oom.log"
    log.write_bytes((SAMPLES / "eras" / "sglang_capture_oom.log").read_bytes())
    code, out, err = run_in_process("watch", str(log), "--plain", "--format", "jsonl", "--poll", "0.05",
                                    "--store-every", "0.1", "--timeout", "60", "--exit-on", "finding=critical",
                                    db=str(tmp_path / "w.duckdb"))
    notices = [json.loads(x) for x in out.splitlines()]
    assert code == EXIT_FINDING, err
    last = [n for n in notices if n["event"] == "finding"]
    assert last and last[-1]["severity"] == "critical" and last[-1]["line"]
    assert EXIT_OK == 0


def test_binary_file_and_fifo_are_refused(tmp_path):
    import os

    blob = tmp_path / "blob.log"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    code, out, err = run_in_process("watch", str(blob), "--plain", "--timeout", "5", db=str(tmp_path / "w.duckdb"))
    assert code == 3 and err.startswith("Error: ") and "blob.log" in err
    fifo = tmp_path / "f.log"
    os.mkfifo(fifo)
    code, out, err = run_in_process("watch", str(fifo), "--plain", "--timeout", "5", db=str(tmp_path / "w.duckdb"))
    assert code == 3 and "FIFO" in err
