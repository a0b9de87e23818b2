"""run_rollup (derive/rollup.py): the per-run aggregates the rules and run_summary read are
computed at ingest, agree with the base tables, follow --replace, and are filled in for the
runs of a database written before the rollup existed (migration 0003). Appends are covered by
tests/ingest/test_incremental.py, which compares every per-source table (run_rollup too)."""
from __future__ import annotations

import duckdb
import pytest

import logsleuth
from logsleuth.db import migrations

from support.paths import SAMPLES

FILES = ["sglang_baseline.log", "vllm_eagle3.log", "sglang_eagle3.log", "vllm_kimi_k25.log"]


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("rollup") / "db.duckdb"
    con = logsleuth.open_db(str(path))
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / f) for f in FILES])
    finally:
        con.close()
    return path


def _rows(con, sql: str) -> list:
    return con.execute(sql).fetchall()


def test_every_run_has_one_rollup_row_that_agrees_with_the_base_tables(db_path):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        assert _rows(con, "SELECT run_id, source_id FROM run_rollup ORDER BY 1") == \
            _rows(con, "SELECT run_id, source_id FROM runs ORDER BY 1")
        # counted directly from the tables, not through the rollup's SQL
        want = _rows(con, """
            SELECT r.run_id,
                   (SELECT count(*) FROM lines l WHERE l.run_id = r.run_id),
                   (SELECT count(*) FROM lines l WHERE l.run_id = r.run_id AND l.kind = 'unparsed'),
                   (SELECT nullif(count(*), 0) FROM decode_primary d WHERE d.run_id = r.run_id AND d.primary_rank),
                   (SELECT max(queued_reqs) FROM decode_primary d WHERE d.run_id = r.run_id AND d.primary_rank),
                   (SELECT nullif(count(*), 0) FROM errors e WHERE e.run_id = r.run_id),
                   (SELECT min(line_no) FROM spec_stats s WHERE s.run_id = r.run_id AND s.accept_len IS NOT NULL)
            FROM runs r ORDER BY 1""")
        got = _rows(con, """SELECT run_id, n_lines, n_unparsed, decode_samples, max_queued_reqs, n_errors,
                                   first_spec_line FROM run_rollup ORDER BY 1""")
        assert got == want
        assert any(r[3] for r in got) and any(r[6] for r in got)  # decode and spec runs are in the set
        # the single-stream evidence line is one of the run's single-stream lines
        bad = _rows(con, """SELECT o.run_id FROM run_rollup o WHERE o.single_stream_line IS NOT NULL AND NOT EXISTS (
                              SELECT 1 FROM decode_primary d WHERE d.run_id = o.run_id AND d.line_no = o.single_stream_line
                                AND d.running_reqs = 1 AND d.gen_tok_s > 0)""")
        assert bad == []
    finally:
        con.close()


def _copy(db_path, tmp_path, name: str):
    """A copy of the session's database that a test may change."""
    path = tmp_path / name
    path.write_bytes(db_path.read_bytes())
    return path


def test_replace_leaves_no_rollup_row_of_the_old_runs(db_path, tmp_path):
    con = logsleuth.open_db(str(_copy(db_path, tmp_path, "db.duckdb")))
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / FILES[0])],
                               logsleuth.IngestOptions(replace=True))
        assert _rows(con, "SELECT run_id FROM run_rollup ORDER BY 1") == _rows(con, "SELECT run_id FROM runs ORDER BY 1")
    finally:
        con.close()


def test_a_database_without_rollup_gets_it_on_open(db_path, tmp_path):
    path = _copy(db_path, tmp_path, "old.duckdb")
    con = duckdb.connect(str(path))
    try:
        want = _rows(con, "SELECT * FROM run_rollup ORDER BY run_id")
        summary = _rows(con, "SELECT * FROM run_summary ORDER BY run_id")
        # what a schema-2 database looks like: no rollup rows, step 0003 not recorded
        con.execute("DELETE FROM run_rollup")
        con.execute(f"DELETE FROM {migrations.MIGRATIONS_TABLE} WHERE name = '0003_run_rollup'")
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    finally:
        con.close()
    con = logsleuth.open_db(str(path), read_only=True)  # read-only opens upgrade once too
    try:
        assert _rows(con, "SELECT * FROM run_rollup ORDER BY run_id") == want
        assert _rows(con, "SELECT * FROM run_summary ORDER BY run_id") == summary
    finally:
        con.close()
