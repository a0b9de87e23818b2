"""Schema 2 stores lines in two tables behind the ``lines`` view; a schema-1 database (one
``lines`` table) is upgraded in place when opened, also by a read-only command."""
from __future__ import annotations

import duckdb

import logsleuth
from logsleuth import api
from logsleuth.db import schema
from logsleuth.formats.grammar import default_grammars
from logsleuth import open_db  # the library opener: it hands the upgrade steps their derivations

from support.db import unsplit
from support.paths import SAMPLES


def _ingest(path) -> None:
    con = open_db(str(path))
    try:
        api.ingest_files(con, [str(SAMPLES / "sglang_tuned_v1.log")])
    finally:
        con.close()


def test_bulk_lines_are_split_off_and_the_view_has_every_line(tmp_path):
    db = tmp_path / "v2.duckdb"
    _ingest(db)
    con = duckdb.connect(str(db), read_only=True)
    data = (SAMPLES / "sglang_tuned_v1.log").read_bytes()
    n_file = data.count(b"\n") + (not data.endswith(b"\n"))
    other, bulk, total, distinct = con.execute(
        """SELECT (SELECT count(*) FROM lines_other), (SELECT count(*) FROM lines_bulk),
                  (SELECT count(*) FROM lines), (SELECT count(DISTINCT line_no) FROM lines)""").fetchone()
    assert total == distinct == n_file == other + bulk
    assert bulk > 0 and other > 0
    bulk = {p.name for g in default_grammars() for p in g.patterns if p.bulk}
    assert {"sgl_decode", "http_access", "vllm_request_lifecycle"} <= bulk
    in_bulk = {k for (k,) in con.execute("SELECT DISTINCT pattern FROM lines_bulk").fetchall()}
    in_other = {k for (k,) in con.execute("SELECT DISTINCT pattern FROM lines_other").fetchall()}
    assert in_bulk and in_bulk <= bulk
    assert not (in_other & bulk)
    assert con.execute("SELECT count(*) FROM lines_other WHERE kind IN ('decode_stats', 'prefill_stats')"
                       ).fetchone()[0] == 0


def _downgrade_to_v1(db) -> None:
    con = duckdb.connect(str(db))
    unsplit(con, "lines", views=("run_summary",))
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.execute("DROP TABLE schema_migrations")  # schema 1 predates the recorded migration steps
    con.close()


def test_schema1_database_is_upgraded_by_a_read_only_open(tmp_path):
    db = tmp_path / "old.duckdb"
    _ingest(db)
    before = open_db(str(db), read_only=True)
    want_lines = before.execute("SELECT count(*) FROM lines").fetchone()[0]
    want = sorted((f.rule_id, f.run_id) for f in logsleuth.diagnose(before))
    before.close()
    _downgrade_to_v1(db)

    con = open_db(str(db), read_only=True)
    try:
        version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert int(version) == schema.SCHEMA_VERSION
        assert con.execute("SELECT count(*) FROM lines").fetchone()[0] == want_lines
        assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'lines'"
                           ).fetchone()[0] == "VIEW"
        assert sorted((f.rule_id, f.run_id) for f in logsleuth.diagnose(con)) == want
    finally:
        con.close()
