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
