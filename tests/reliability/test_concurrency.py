"""Concurrent use of one database: DuckDB lets one process write a file, and while it does no
other process may open it, not even read-only. A second ingest, `sql` or `diagnose` waits for
the lock (LOGSLEUTH_LOCK_TIMEOUT seconds) saying so on stderr, then either proceeds or fails
with one clear line and exit code 3. Nothing is ever half-written.
"""
from __future__ import annotations

import subprocess

import pytest

import logsleuth
from support.robust import SAMPLES, counts, finish, make_big_log, sources, spawn, start_cli, wait_for

SMALL = SAMPLES / "vllm_eagle3.log"
LOCKED = "database is locked by another process"


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "shared.duckdb")
    con = logsleuth.open_db(path)
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "eras" / "sglang_v0.3_hms.log")])
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    return make_big_log(tmp_path_factory.mktemp("big") / "big.log", 8_000)


def _consistent(db: str) -> None:
    """Every source has exactly its n_lines lines, numbered 1..n, once each."""
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        bad = con.execute("""
            SELECT s.source_id FROM sources s LEFT JOIN lines l USING (source_id)
            GROUP BY s.source_id, s.n_lines
            HAVING count(l.line_no) <> s.n_lines OR count(DISTINCT l.line_no) <> s.n_lines
                OR min(l.line_no) <> 1 OR max(l.line_no) <> s.n_lines""").fetchall()
    finally:
        con.close()
    assert bad == []


def test_lock_timeout_then_clear_error_for_ingest_sql_and_diagnose(db, big_log, tmp_path):
    before = sources(db)
    release = tmp_path / "release"
    writer = spawn("ingest", str(big_log), db=db, stop_at=1, hold_until=str(release))
    head = wait_for(writer)
    try:
        for args in (("ingest", str(SMALL)), ("sql", "SELECT count(*) FROM sources"), ("diagnose",)):
            p = start_cli(*args, db=db, LOGSLEUTH_LOCK_TIMEOUT="0.5")
            code, err = finish(p, timeout=60)
            assert code == 3, (args, err)
            lines = err.strip().splitlines()
            assert "waiting up to 0.5 s (LOGSLEUTH_LOCK_TIMEOUT)" in lines[0], err
            assert lines[-1].startswith("Error: ") and LOCKED in lines[-1], err
            assert "Traceback" not in err
    finally:
        release.touch()
    code, err = finish(writer, head)
    assert code == 0, err
    assert [s[1] for s in sources(db)] == [s[1] for s in before] + ["big.log"]
    _consistent(db)


def test_waiters_proceed_when_the_writer_finishes(db, big_log, tmp_path):
    release = tmp_path / "release"
    writer = spawn("ingest", str(big_log), db=db, stop_at=1, hold_until=str(release))
    head = wait_for(writer)
    second = start_cli("ingest", str(SMALL), db=db, LOGSLEUTH_LOCK_TIMEOUT="90")
    reader = start_cli("sql", "SELECT count(*) AS n FROM sources", "--format", "csv", db=db,
                       LOGSLEUTH_LOCK_TIMEOUT="90")
    try:
        got = [wait_for(p, b"waiting up to 90 s", timeout=60) for p in (second, reader)]
    finally:
        release.touch()
    assert finish(writer, head)[0] == 0
    code, err = finish(second, got[0])
    assert code == 0, err
    out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0
    assert out.decode().split()[-1] in {"2", "3"}  # before or after the second ingest
    assert [s[1] for s in sources(db)] == ["sglang_v0.3_hms.log", "big.log", SMALL.name]
    _consistent(db)


def test_two_ingests_of_the_same_file_store_it_once(db):
    procs = [start_cli("ingest", str(SMALL), db=db, LOGSLEUTH_LOCK_TIMEOUT="90") for _ in range(2)]
    results = [finish(p, timeout=120) for p in procs]
    assert [code for code, _ in results] == [0, 0], results
    assert sum("already ingested" in err for _, err in results) == 1
    assert [s[1] for s in sources(db)] == ["sglang_v0.3_hms.log", SMALL.name]
    _consistent(db)


def test_sql_is_read_only_unless_write(cli, db):
    before = counts(db)
    r = cli("sql", "DELETE FROM sources", db=db)
    assert r.returncode == 4, r.stderr
    assert r.stderr.decode().startswith("Error: SQL error:") and "read-only" in r.stderr.decode()
    assert counts(db) == before
    r = cli("sql", "--write", "UPDATE sources SET label = 'x'", db=db)
    assert r.returncode == 0, r.stderr


def test_bad_lock_timeout_is_a_usage_error(cli, db):
    r = cli("runs", db=db, env={"LOGSLEUTH_LOCK_TIMEOUT": "soon"})
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "Error: LOGSLEUTH_LOCK_TIMEOUT='soon': expected a number of seconds >= 0"
