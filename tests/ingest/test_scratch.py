"""Scratch folders (logsleuth/scratch.py) do not outlive a killed process: the next one
sweeps the folders of dead processes of this host, and leaves everything else alone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from logsleuth import scratch
from logsleuth.errors import BadInputError


def test_a_killed_process_folder_is_swept_by_the_next(tmp_path):
    code = ("import sys, time; from logsleuth.scratch import scratch_dir; "
            "print(scratch_dir('logsleuth-test-', sys.argv[1]), flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    left = proc.stdout.readline().strip()
    assert os.path.isdir(left)
    (open(os.path.join(left, "part.duckdb"), "w")).write("x" * 1000)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    mine = scratch.scratch_dir("logsleuth-test-", str(tmp_path))
    assert not os.path.exists(left)
    assert os.listdir(tmp_path) == [os.path.basename(mine)]


def test_live_foreign_and_other_folders_are_kept(tmp_path):
    host = scratch._host()
    keep = [f"logsleuth-test-{host}-{os.getpid()}-abc",  # a live process (this one)
            f"logsleuth-test-otherhost-999999999-abc",  # another machine sharing the folder
            f"logsleuth-other-{host}-999999999-abc",  # another prefix
            "logsleuth-test-unrelated"]
    for name in keep:
        (tmp_path / name).mkdir()
    dead = tmp_path / f"logsleuth-test-{host}-999999999-abc"
    dead.mkdir()
    (dead / "f").write_text("x")
    assert scratch.sweep("logsleuth-test-", str(tmp_path)) == [str(dead)]
    assert sorted(os.listdir(tmp_path)) == sorted(keep)


def test_a_file_of_that_name_is_not_removed(tmp_path):
    host = scratch._host()
    f = tmp_path / f"logsleuth-test-{host}-999999999-abc"
    f.write_text("not a folder")
    assert scratch.sweep("logsleuth-test-", str(tmp_path)) == []
    assert f.exists()


def test_fleet_work_database_refuses_a_memory_cap_that_is_not_a_size(tmp_path, monkeypatch):
    from logsleuth.fleet import ranges

    monkeypatch.setenv("LOGSLEUTH_INGEST_MEMORY", "1GB'; INSTALL httpfs; --")
    with pytest.raises(BadInputError, match="expected a size"):
        ranges._open_work_db(tmp_path)
    assert not (tmp_path / "part.duckdb").exists()
