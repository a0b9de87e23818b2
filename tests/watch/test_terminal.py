"""The live view in a real terminal (tmux): what a person watching the seed story's launch
sees at the 4-minute mark, then after the kill, then after Ctrl-C. Skipped without tmux
(.ci/run can `apt-get install tmux`)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from replayer import Replayer

from conftest import SEED
from support.paths import ROOT

pytestmark = pytest.mark.slow  # drives the live view in tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")


def _pane(session: str) -> str:
    """The screen as a person reads it: panel borders dropped, wrapped lines joined."""
    text = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
    return " ".join(text.replace("│", " ").split())


def _wait_pane(session: str, pred, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = _pane(session)
        if pred(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"pane never matched; last screen:\n{text}")


def test_live_view_in_tmux(history_db, tmp_path):
    log = tmp_path / "server.log"
    rc_file = tmp_path / "rc"
    session = f"logsleuth-watch-{os.getpid()}"
    cmd = (f"cd {shlex.quote(str(ROOT))} && PYTHONPATH=src {shlex.quote(sys.executable)} -m logsleuth "
           f"--db {shlex.quote(history_db)} watch {shlex.quote(str(log))} --poll 0.1 --store-every 2 --speed 100; "
           f"echo $? > {shlex.quote(str(rc_file))}; sleep 60")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "40", cmd], check=True)
    try:
        _wait_pane(session, lambda t: "waiting" in t or "server.log" in t)
        time.sleep(0.5)  # the watcher has loaded its grammars and history once the view is up
        Replayer(str(SEED), str(log), 100.0, stop_after=101).start().wait(60)
        # the bar at its last update before the kill: shards, GB/s, ETA, the previous start
        screen = _wait_pane(session, lambda t: "41/64" in t)
        assert "run 1 · moonshotai/Kimi-K2.5 · TP 8 · sglang" in screen
        assert "loading weights" in screen and "GB/s" in screen and "left" in screen
        assert "previous run of this model: 7m27s" in screen
        # the server was killed: the silence outgrows the bar's pace and the panel says so
        screen = _wait_pane(session, lambda t: "STALLED" in t)
        assert "last line 101" in screen and "not a hang" not in screen
        # a finding arrives with its evidence line (rules re-run on the stored lines)
        screen = _wait_pane(session, lambda t: "custom_allreduce_disabled" in t)
        assert "line 36" in screen
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        end = time.monotonic() + 60
        while time.monotonic() < end and not rc_file.exists():
            time.sleep(0.1)
        assert rc_file.read_text().strip() == "130"
        assert "everything read so far is stored" in _pane(session)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
