"""Opening a database checks its schema cheaply: a stamp of what the schema holds (version,
migration steps, tables, view SQL) is kept in ``meta``; a database whose stamp is current is
opened with one read and nothing rewritten, one whose stamp is stale gets its views again."""
from __future__ import annotations

import logsleuth
from logsleuth.db import connection


def test_a_current_database_is_not_rewritten(tmp_path, monkeypatch):
    path = str(tmp_path / "s.duckdb")
    logsleuth.open_db(path).close()

    def refuse(con):  # nothing may be (re)created on an open of a current database
        raise AssertionError("views recreated on a current database")

    monkeypatch.setattr(connection, "create_views", refuse)
    for read_only in (False, True):
        con = logsleuth.open_db(path, read_only=read_only)
        assert con.execute("SELECT count(*) FROM run_summary").fetchone() == (0,)
        con.close()


def test_a_stale_stamp_recreates_the_views(tmp_path):
    path = str(tmp_path / "s.duckdb")
    con = logsleuth.open_db(path)
    con.execute("UPDATE meta SET value = 'from an older logsleuth' WHERE key = 'schema_stamp'")
    con.execute("DROP VIEW run_summary")
    con.close()
    con = logsleuth.open_db(path, read_only=True)  # read-only: upgraded once, then reopened read-only
    try:
        assert con.execute("SELECT count(*) FROM run_summary").fetchone() == (0,)
        stamp = con.execute("SELECT value FROM meta WHERE key = 'schema_stamp'").fetchone()[0]
        assert stamp == connection.schema_stamp()
    finally:
        con.close()
