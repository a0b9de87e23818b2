"""A command imports only what it uses: ``runs``, ``sql``, ``schema``, ``rules`` and ``--help``
print a few rows and must not pay for polars, pyarrow or numpy (each costs more to import than
Python's own start and DuckDB together). Checked by running the real entry point in a fresh
interpreter and reading ``sys.modules`` when it exits."""
from __future__ import annotations

import subprocess
import sys

import pytest

from support.cli import run_cli
from support.paths import ROOT, SAMPLES

HEAVY = ("polars", "pyarrow", "numpy")


@pytest.fixture(scope="module")
def one_run_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("fixed") / "one.duckdb")
    res = run_cli("ingest", str(SAMPLES / "sglang_tuned_v1.log"), db=db)
    assert res.returncode == 0, res.stderr
    return db


def _modules_after(argv: list[str]) -> tuple[int, set[str], str]:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: sys.__stderr__.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
            "from logsleuth.cli.launch import main\n"
            f"sys.argv = ['logsleuth', *{argv!r}]\n"
            "main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    line = [ln for ln in out.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, out.stderr[-2000:]
    return out.returncode, set(line[-1].split()[1:]), out.stdout


@pytest.mark.parametrize("args", [
    ["runs"], ["runs", "--format", "json"], ["sql", "SELECT run_id, started_at, INTERVAL 1 DAY AS i FROM runs"],
    ["sql", "--format", "csv", "SELECT * FROM runs"], ["schema"], ["schema", "runs"], ["rules"],
], ids=lambda a: " ".join(a))
def test_light_commands_import_no_frame_library(one_run_db, args):
    code, modules, out = _modules_after(["--db", one_run_db, *args])
    assert code == 0 and out.strip()
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_help_imports_no_frame_library():
    code, modules, out = _modules_after(["--help"])
    assert code == 0 and "ingest" in out
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
