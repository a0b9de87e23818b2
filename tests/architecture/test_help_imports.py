"""``logsleuth --help`` stays fast: rendering the help (of the app and of its commands)
imports none of the data stack. polars, duckdb, pyarrow and numpy are imported by the
command functions that need them, never by the CLI modules or help rendering; typer and
rich (with click) are the only heavy imports help needs.

Runs the real entry point in a fresh interpreter and prints, after the help, which of the
data-stack modules are in ``sys.modules``.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.paths import ROOT

HEAVY = ("polars", "duckdb", "pyarrow", "numpy")
CODE = """
import sys
from logsleuth.cli.app import main
sys.argv = ["logsleuth", *{args!r}]
try:
    main()
except SystemExit:
    pass
print("IMPORTED", sorted(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["ingest", "--help"], ["diagnose", "--help"],
                                  ["formats", "--help"], ["watch", "--help"], ["--version"]])
def test_help_imports_no_data_stack(args):
    env = {**os.environ, "COLUMNS": "100"}
    out = subprocess.run([sys.executable, "-c", CODE.format(args=args, heavy=HEAVY)], capture_output=True,
                         text=True, cwd=str(ROOT), env=env, timeout=120)
    assert "Usage" in out.stdout or "logsleuth" in out.stdout, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "IMPORTED []", out.stdout[-500:] + out.stderr
