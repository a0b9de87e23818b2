"""Schema migrations are named steps, each recorded in ``schema_migrations`` when applied."""
from __future__ import annotations

import duckdb

from logsleuth.db import migrations
from logsleuth import open_db  # the library opener: it hands the upgrade steps their derivations
from logsleuth.db.schema import SCHEMA_VERSION


def _recorded(path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
    finally:
        con.close()


def test_steps_are_named_ordered_and_reach_the_current_version():
    names = [s.name for s in migrations.STEPS]
    assert len(names) == len(set(names)) and all(s.doc for s in migrations.STEPS)
    versions = [s.version for s in migrations.STEPS]
    assert versions == sorted(versions) and versions[-1] == SCHEMA_VERSION
    assert names[0] == "0002_split_lines"


def test_a_new_database_records_every_step_without_running_one(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(migrations, "STEPS", [
        migrations.Step(s.name, s.version, s.doc, lambda con, tables, _n=s.name: ran.append(_n))
        for s in migrations.STEPS])
    open_db(str(tmp_path / "new.duckdb")).close()
    assert ran == []
    assert _recorded(tmp_path / "new.duckdb") == [s.name for s in migrations.STEPS]


def test_a_pending_step_runs_once_and_is_recorded(tmp_path, monkeypatch):
    db = tmp_path / "old.duckdb"
    open_db(str(db)).close()
    ran = []

    def add_column(con, tables, derived):
        ran.append(sorted(tables & {"runs", "sources"}))
        con.execute("ALTER TABLE runs ADD COLUMN IF NOT EXISTS test_note VARCHAR")

    step = migrations.Step("9999_test_note", SCHEMA_VERSION + 1, "a test column on runs", add_column)
    monkeypatch.setattr(migrations, "STEPS", [*migrations.STEPS, step])
    # the database says it is at the current version; the new step is past it, so it runs
    con = open_db(str(db))
    con.close()
    con = open_db(str(db))  # and only once
    con.close()
    assert ran == [["runs", "sources"]]
    assert "9999_test_note" in _recorded(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        cols = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                          "WHERE table_name = 'runs'").fetchall()}
        applied_at = con.execute("SELECT applied_at FROM schema_migrations WHERE name = '9999_test_note'"
                                 ).fetchone()[0]
    finally:
        con.close()
    assert "test_note" in cols and applied_at is not None


def test_a_database_older_than_the_migrations_table_records_what_it_already_is(tmp_path):
    db = tmp_path / "v2.duckdb"
    open_db(str(db)).close()
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE schema_migrations")  # as written before steps were recorded,
    con.execute("DELETE FROM meta WHERE key = 'schema_stamp'")  # and before opens were stamped
    con.close()
    open_db(str(db)).close()
    assert _recorded(db) == [s.name for s in migrations.STEPS]
