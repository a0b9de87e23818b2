"""Small look-ups into an ingested database that several test files share."""
from __future__ import annotations


def source_id(con, name: str, label: str | None = None) -> int:
    """source_id of the ingested file called ``name`` (the last part of its path)."""
    row = con.execute("SELECT source_id FROM sources WHERE name = ?", [name]).fetchone()
    assert row, label or f"{name} not ingested"
    return row[0]


def typed_row_counts(con, sid: int) -> tuple:
    """(decode, prefill, spec, bench, errors, fatal errors) rows of one source."""
    return con.execute("""SELECT
        (SELECT count(*) FROM decode_stats WHERE source_id = $1),
        (SELECT count(*) FROM prefill_stats WHERE source_id = $1),
        (SELECT count(*) FROM spec_stats WHERE source_id = $1),
        (SELECT count(*) FROM bench_results WHERE source_id = $1),
        (SELECT count(*) FROM errors WHERE source_id = $1),
        (SELECT count(*) FROM errors WHERE source_id = $1 AND fatal)""", [sid]).fetchone()


def unsplit(con, name: str, views: tuple = ()) -> None:
    """Turn the view ``name`` over ``{name}_other`` and ``{name}_bulk`` back into one table in
    line order, as a schema before that split stored it (``views`` that read it are dropped
    first): the start of a test that an older database is upgraded when opened."""
    con.execute(f"CREATE TABLE {name}_unsplit AS SELECT * FROM {name} ORDER BY source_id, line_no")
    for view in (*views, name):
        con.execute(f"DROP VIEW {view}")
    con.execute(f"DROP TABLE {name}_other")
    con.execute(f"DROP TABLE {name}_bulk")
    con.execute(f"ALTER TABLE {name}_unsplit RENAME TO {name}")
