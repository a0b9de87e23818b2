"""The entry point answers a repeated help request from its cache (cli/launch.py): the same
bytes as the live help, without importing typer or rich; a different terminal width, other
arguments or an unusable cache folder never serve a wrong or missing help."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from logsleuth.cli.launch import is_help_request
from support.paths import ROOT


def _run(args, cache, columns=100, importtime=False):
    env = {**os.environ, "COLUMNS": str(columns), "XDG_CACHE_HOME": str(cache)}
    env.pop("NO_COLOR", None)
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "logsleuth", *args]
    return subprocess.run(cmd, capture_output=True, cwd=str(ROOT), env=env, timeout=120)


def _help_files(cache):
    folder = cache / "logsleuth" / "help"
    return sorted(folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("args", [["--help"], ["ingest", "-h"], ["formats", "check", "--help"]])
def test_cached_help_is_the_live_help_without_typer(tmp_path, args):
    live = _run(args, tmp_path)
    assert live.returncode == 0 and b"Usage" in live.stdout, live.stderr
    assert len(_help_files(tmp_path)) == 1
    cached = _run(args, tmp_path, importtime=True)
    assert cached.returncode == 0
    assert cached.stdout == live.stdout
    imported = cached.stderr.decode()
    assert "typer" not in imported and "rich" not in imported and "polars" not in imported


def test_other_width_or_arguments_get_their_own_help(tmp_path):
    wide = _run(["--help"], tmp_path, columns=120)
    narrow = _run(["--help"], tmp_path, columns=70)
    assert wide.stdout != narrow.stdout
    assert max(len(x) for x in narrow.stdout.decode().splitlines()) <= 70
    sub = _run(["runs", "--help"], tmp_path, columns=70)
    assert b"logsleuth runs" in sub.stdout
    assert len(_help_files(tmp_path)) == 3
    assert _run(["--help"], tmp_path, columns=70).stdout == narrow.stdout


def test_only_help_that_succeeded_is_cached(tmp_path):
    assert _run(["--version"], tmp_path).returncode == 0
    bad = _run(["no-such-command", "--help"], tmp_path)
    assert bad.returncode == 2
    assert _help_files(tmp_path) == []


def test_unusable_cache_folder_still_prints_help(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = _run(["--help"], blocker)
    assert out.returncode == 0 and b"Usage" in out.stdout
    assert out.stderr == b""


def test_corrupt_cache_entry_is_rebuilt_not_shown(tmp_path):
    live = _run(["--help"], tmp_path)
    (entry,) = _help_files(tmp_path)
    entry.write_bytes(b"\xff\xfe garbage")
    again = _run(["--help"], tmp_path)
    assert again.returncode == 0
    assert again.stdout == live.stdout


def test_help_request_detection():
    assert is_help_request(["--help"]) and is_help_request(["ingest", "-h"])
    assert not is_help_request(["sql", "--", "--help"])
    assert not is_help_request(["ingest", "a.log"])
