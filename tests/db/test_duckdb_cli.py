"""A database logsleuth writes opens in the duckdb shell from PyPI (``duckdb-cli`` 1.5.x,
which reads storage versions 64-68 while the duckdb 2 Python package writes 69 by default)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import logsleuth
from support.paths import SAMPLES


def _duckdb_shell() -> str:
    try:
        import duckdb_cli
    except ImportError:
        pytest.skip("duckdb-cli is not installed (pip install -e '.[test]')")
    binary = Path(duckdb_cli.__file__).with_name("duckdb")  # the binary ships inside the package
    if not binary.is_file():
        found = shutil.which("duckdb")
        if not found:
            pytest.skip("duckdb-cli package without its binary")
        return found
    return str(binary)


def test_written_database_opens_in_the_duckdb_shell(tmp_path):
    shell = _duckdb_shell()
    db = tmp_path / "shared.duckdb"
    con = logsleuth.open_db(str(db))
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "vllm_eagle3.log")])
        want = logsleuth.query(con, "SELECT run_id, engine, spec_method, end_state FROM run_summary").rows()
    finally:
        con.close()
    r = subprocess.run([shell, "-readonly", "-csv", "-noheader", str(db),
                        "-c", "SELECT run_id, engine, spec_method, end_state FROM run_summary"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = [tuple(line.split(",")) for line in r.stdout.strip().splitlines()]
    assert got == [tuple(str(v) for v in row) for row in want]
    version = subprocess.run([shell, "-version"], capture_output=True, text=True, timeout=60).stdout
    assert version.startswith("v1.")  # the point of the test: an older shell than the library


def test_a_database_in_the_newer_storage_format_still_opens(tmp_path):
    """Files created before the compatibility setting (DuckDB 2's own format) keep working."""
    import duckdb

    db = tmp_path / "newer.duckdb"
    duckdb.connect(str(db)).close()  # an empty file in the library's default (newest) format
    con = logsleuth.open_db(str(db))
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "vllm_eagle3.log")])
    finally:
        con.close()
    con = logsleuth.open_db(str(db), read_only=True)
    try:
        assert logsleuth.runs(con).height == 1
    finally:
        con.close()
