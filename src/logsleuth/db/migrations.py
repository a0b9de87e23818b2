"""Schema migrations: a list of named steps, each recorded in ``schema_migrations`` when applied.

Contract: ``migrate(con, existing_tables, version)`` brings a database whose tables are
``existing_tables`` and whose ``meta.schema_version`` is ``version`` up to the current
schema inside the caller's transaction: it runs every step of ``STEPS`` not yet recorded
(in list order), creates missing tables from ``schema.py`` and records each step with
the time it was applied. A new database gets its tables directly; its steps are recorded
as built in, never run. A step is a function of the connection, the set of tables
present before it ran and the ``Derivations`` the opener gave; it must be written against
the state its predecessor left.

Steps that rebuild derived data (per-run aggregates, the bulk event kinds of the grammars)
get it from ``Derivations``, handed down by the layer that opens the database
(``derive/upgrades.py`` through ``api.open_db``): ``db/`` sits below ``derive/`` and
``formats/`` and never imports them. Opening an old database without them is refused.

To change the schema incompatibly: add a step at the end of ``STEPS`` and bump
``schema.SCHEMA_VERSION`` to the step's ``version``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import DatabaseError
from .schema import create_statements

#: the table recording applied steps (name, applied_at)
MIGRATIONS_TABLE = "schema_migrations"


@dataclass(frozen=True)
class Derivations:
    """What upgrade steps need from the layers above ``db/``."""

    rollup: Callable  # (con, run_ids) -> None: per-run aggregates (derive/rollup.py)
    bulk_event_kinds: Callable  # () -> list[str]: kinds the shipped grammars' bulk event patterns emit


def _needs(derived: Derivations | None) -> Derivations:
    if derived is None:
        raise DatabaseError("this database was written by an older logsleuth and needs an upgrade "
                            "that only the library's opener can run", hint="open it with logsleuth.open_db")
    return derived


@dataclass(frozen=True)
class Step:
    name: str
    version: int  # the schema version the database has once this step ran
    doc: str
    run: Callable  # (con, tables: set[str], derived: Derivations | None) -> None


def _split_lines(con, tables: set[str], derived: Derivations | None) -> None:
    # schema 1 kept every line in one physical `lines` table; schema 2 splits them into
    # lines_other + lines_bulk behind the `lines` view. The old table becomes lines_other
    # (every line stays readable through the view); decode_primary is filled from
    # decode_stats so rules that read it see the old runs too.
    if "lines" in tables:
        con.execute("DROP VIEW IF EXISTS run_summary")  # depends on lines; recreated with the views
        con.execute("ALTER TABLE lines RENAME TO lines_other")
    for stmt in create_statements():
        con.execute(stmt)
    if "decode_stats" in tables:
        con.execute("INSERT INTO decode_primary BY NAME SELECT * FROM decode_stats WHERE primary_rank")


def _run_rollup(con, tables: set[str], derived: Derivations | None) -> None:
    # schema 3 keeps per-run aggregates in run_rollup (derive/rollup.py), which run_summary
    # and the rules read: the runs of an older database get theirs computed here, once
    rollup = _needs(derived).rollup
    for stmt in create_statements():
        con.execute(stmt)
    rollup(con, [r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()])


def _split_events(con, tables: set[str], derived: Derivations | None) -> None:
    # schema 4 splits the events table into events_other + events_bulk behind the `events`
    # view. The rows of the kinds the shipped grammars' bulk event patterns emit (HTTP access
    # lines, request logs) go to events_bulk; the others, in their order, to events_other.
    # (Rows of a bulk pattern of a user's grammar stay in events_other: the view still has them.)
    if "events" not in tables or "events" not in _current_tables(con):  # (a view already: nothing to split)
        return
    kinds = sorted(_needs(derived).bulk_event_kinds())
    con.execute("ALTER TABLE events RENAME TO events_v3")
    for stmt in create_statements():
        con.execute(stmt)
    bulk = "list_contains($kinds, kind)"
    con.execute(f"INSERT INTO events_other BY NAME SELECT * FROM events_v3 WHERE NOT coalesce({bulk}, false)",
                {"kinds": kinds})
    con.execute(f"INSERT INTO events_bulk BY NAME SELECT * FROM events_v3 WHERE {bulk}", {"kinds": kinds})
    con.execute("DROP TABLE events_v3")


def _decode_seq(con, tables: set[str], derived: Derivations | None) -> None:
    # schema 4 numbers each scheduler's timed reports in decode_primary (seq, see
    # queries/derive/decode_primary.sql): the rows copied before it get theirs here
    for stmt in create_statements():
        con.execute(stmt)
    con.execute("""UPDATE decode_primary SET seq = n.seq FROM (
        SELECT source_id, line_no, row_number() OVER (PARTITION BY source_id, run_id,
               coalesce(engine_idx, dp_rank, -1) ORDER BY line_no) AS seq
        FROM decode_primary WHERE ts IS NOT NULL) n
        WHERE decode_primary.source_id = n.source_id AND decode_primary.line_no = n.line_no""")


def _queue_stretches(con, tables: set[str], derived: Derivations | None) -> None:
    # schema 5 keeps each run's saturated stretches (queue_stretches, from decode_primary.seq) and
    # the thresholds they were found with in run_rollup: computed here for the existing runs
    rollup = _needs(derived).rollup
    for stmt in create_statements():
        con.execute(stmt)
    rollup(con, [r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()])


STEPS: list[Step] = [
    Step("0002_split_lines", 2, "lines split into lines_other + lines_bulk; decode_primary filled",
         _split_lines),
    Step("0003_run_rollup", 3, "run_rollup: per-run aggregates computed for the existing runs", _run_rollup),
    Step("0004_split_events", 4, "events split into events_other + events_bulk (per-request events)",
         _split_events),
    Step("0005_decode_seq", 4, "decode_primary.seq: each scheduler's timed reports numbered in line order",
         _decode_seq),
    Step("0006_queue_stretches", 5, "queue_stretches: the saturated stretches of the existing runs",
         _queue_stretches),
]


def applied(con) -> set[str]:
    """Names of the steps recorded in this database."""
    return {r[0] for r in con.execute(f"SELECT name FROM {MIGRATIONS_TABLE}").fetchall()}


def migrate(con, tables: set[str], version: int, derived: Derivations | None = None) -> list[str]:
    """Apply the pending steps; return the names of the steps that ran (not the ones only
    recorded). ``tables`` are the tables present before anything was done; ``version``
    the database's schema version (the current one for a new database)."""
    fresh = not (tables - {"meta"})
    done = set() if MIGRATIONS_TABLE not in tables else applied(con)
    con.execute(f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
                "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    ran = []
    for step in STEPS:
        if step.name in done:
            continue
        # a database older than the migrations table: steps at or below its version are
        # already in its shape and only get recorded
        if not fresh and step.version > version:
            step.run(con, tables, derived)
            ran.append(step.name)
            tables = tables | _current_tables(con)
        con.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES (?, current_timestamp::TIMESTAMP)",
                    [step.name])
    for stmt in create_statements():  # new tables (schema additions that need no step)
        con.execute(stmt)
    return ran


def _current_tables(con) -> set[str]:
    return {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE'").fetchall()}
