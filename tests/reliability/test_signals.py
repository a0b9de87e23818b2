"""SIGTERM is handled like Ctrl-C (exit 130, a message, the ingest rolled back: tested with
Ctrl-C in test_crash_safety.py), and an interrupt that arrives while a COMMIT runs is held until the commit returns: the process then exits 130
saying the file was committed and is kept (DuckDB used to answer "Query interrupted", exit 70,
for a commit that had completed).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

import logsleuth
from support.paths import ROOT, SAMPLES
from support.robust import env, finish, sources, wait_for

#: the CLI with a COMMIT that takes LS_COMMIT_S seconds: it prints COMMITTING inside the
#: held section, sleeps, then commits for real
_SLOW_COMMIT = r"""
import contextlib, os, sys, time
import logsleuth.ingest.batch as batch
import logsleuth.ingest.pipeline as pipeline
import logsleuth.interrupts as interrupts
_real = interrupts.committing
@contextlib.contextmanager
def _slow(what):
    with _real(what):
        sys.stderr.write("COMMITTING\n"); sys.stderr.flush()
        time.sleep(float(os.environ.get("LS_COMMIT_S", "3")))
        yield
pipeline.committing = batch.committing = _slow  # one file alone, or a batch of small files
from logsleuth.cli.app import main
sys.argv = ["logsleuth"] + sys.argv[1:]
main()
"""


@pytest.fixture
def seeded_db(tmp_path) -> str:
    path = str(tmp_path / "sig.duckdb")
    con = logsleuth.open_db(path)
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "vllm_eagle3.log")])
    finally:
        con.close()
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupt_during_commit_keeps_the_file_and_says_so(seeded_db, tmp_path, sig):
    log = tmp_path / "small.log"
    shutil.copy(SAMPLES / "sglang_baseline.log", log)
    before = sources(seeded_db)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_COMMIT, "--db", seeded_db, "ingest", str(log)],
                            cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env(LS_COMMIT_S="3"))
    head = wait_for(proc, b"COMMITTING")
    proc.send_signal(sig)
    code, err = finish(proc, head)
    assert code == 130, err
    errors = [ln for ln in err.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and "committed" in errors[0] and "kept" in errors[0] and "small.log" in errors[0], err
    assert "Traceback" not in err and "Query interrupted" not in err
    after = sources(seeded_db)
    assert len(after) == len(before) + 1 and after[-1][1] == "small.log"


def test_committing_holds_signals_then_delivers(monkeypatch):
    from logsleuth import interrupts

    monkeypatch.setattr(interrupts, "_COMMITTED", [])
    monkeypatch.setattr(interrupts, "_LAST", None)
    with pytest.raises(interrupts.InterruptedAfterCommit) as info:
        with interrupts.committing("a.log"):
            os.kill(os.getpid(), signal.SIGINT)  # held: no KeyboardInterrupt in here
            inside = True
    assert inside and info.value.what == "a.log"
    assert interrupts.interrupt_message(info.value).startswith("interrupted after a.log was committed")
    with interrupts.committing("b.log"):
        pass
    monkeypatch.setattr(interrupts, "_LAST", None)
    assert interrupts.interrupt_message(KeyboardInterrupt()) == (
        "interrupted; any ingest in progress was rolled back; committed before it: a.log, b.log")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
