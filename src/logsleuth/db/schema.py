"""The DuckDB schema contract: tables, columns and views users write SQL against.

Contract: ``TABLES`` maps each table to its ordered ``(column, DuckDB type)`` pairs, read
from the data file ``queries/tables.toml`` (the declarations are data: one "name TYPE" per
column, shared groups of columns as ``@group``, named types such as ``log_text``); the
store creates the tables from here (``create_statements``) and the pipeline fills frames by
these names (missing columns become NULL). Column names carry units (``_s``, ``_ms``,
``_tok_s``); ratios are 0..1. ``SCHEMA_VERSION`` is bumped on any incompatible change; a
database written by a newer logsleuth is refused rather than misread. Everything here is
read-only (tuples, ``MappingProxyType``).
"""
from __future__ import annotations

import tomllib
from types import MappingProxyType

from ..resources import data_path

SCHEMA_VERSION = 5  # 5: queue_stretches (saturated stretches per run, found at ingest); 4: events split into events_other + events_bulk behind the `events` view; 3: run_rollup (per-run aggregates, filled for existing runs); 2: lines split into lines_other + lines_bulk behind the `lines` view; decode_primary

#: the column declarations (see the file's header)
TABLES_FILE = "queries/tables.toml"

#: physical line stores behind the ``lines`` view (queries/views/lines.sql): ``lines_bulk``
#: holds the high-volume periodic lines (decode/prefill/spec stats, HTTP access log; patterns
#: with ``bulk = true``), ``lines_other`` everything else, a few percent of a busy log. Rules
#: that search raw text read ``lines_other`` and stay fast on multi-GB logs.
LINE_TABLES = ("lines_other", "lines_bulk")

#: event stores behind the ``events`` view (queries/views/events.sql): ``events_bulk`` holds
#: the events of the per-request lines (HTTP access lines, request logs; event patterns with
#: ``bulk = true``), ``events_other`` the rest (milestones, notices), a few thousand rows:
#: rules that look for a milestone read it and no longer scan millions of access events.
EVENT_TABLES = ("events_other", "events_bulk")


def _columns(items: list[str], data: dict) -> tuple[tuple[str, str], ...]:
    """``"name TYPE"`` items as (name, DuckDB type) pairs, ``@group`` expanded in place."""
    out: list[tuple[str, str]] = []
    for item in items:
        if item.startswith("@"):
            out += _columns(data["groups"][item[1:]], data)
            continue
        name, _, typ = item.partition(" ")
        head, _, rest = typ.strip().partition(" ")
        out.append((name, " ".join(p for p in (data["types"].get(head, head), rest) if p)))
    return tuple(out)


def _load(rel: str) -> tuple[MappingProxyType, tuple]:
    with open(data_path(rel), "rb") as fh:
        data = tomllib.load(fh)
    tables = {name: _columns(items, data) for name, items in data["tables"].items()}
    return MappingProxyType(tables), _columns(data["groups"]["bench_json"], data)


#: table -> ((column, DuckDB type), ...) in creation order; BENCH_JSON_COLUMNS: the
#: bench_results columns only the JSON result files fill (added in place to older databases)
TABLES, BENCH_JSON_COLUMNS = _load(TABLES_FILE)

#: tables whose rows come from one source; deleted together on --replace
PER_SOURCE_TABLES = ("source_state", "metrics", "gpu_samples", "bench_requests", "telemetry_sources", "env_reports",
                     "lines_other", "lines_bulk", "templates", "config", "events_other", "events_bulk", "decode_stats",
                     "decode_primary", "prefill_stats", "spec_stats", "errors", "bench_results", "run_rollup", "queue_stretches", "runs",
                     "sources")


def columns(table: str) -> list[str]:
    return [c for c, _ in TABLES[{"lines": "lines_other", "events": "events_other"}.get(table, table)]]


def create_statements() -> list[str]:
    out = []
    for table, cols in TABLES.items():
        body = ", ".join(f'"{c}" {t}' for c, t in cols)
        out.append(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
        # columns added after a database was created reach it on the next writable open
        out.extend(f'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS "{c}" {t}' for c, t in cols
                   if "PRIMARY KEY" not in t and "UNIQUE" not in t)
    return out
