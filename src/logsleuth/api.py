"""The library API: everything the CLI does, without typer or rich.

Contract: functions take plain values and return plain values (dataclasses, lists of
dicts, polars frames); errors are ``LogsleuthError`` subclasses. ``open_db`` gives a
DuckDB connection that also opens in the duckdb CLI.
"""
from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Callable, Iterable

from .errors import BadInputError, QueryError
from .ingest.pipeline import IngestOptions, IngestResult, ingest_source
from .db.connection import default_db_path, fetch_frame, open_db

LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".md", ".gz", ".jsonl", ""}

__all__ = ["open_db", "expand_paths", "ingest_files", "query", "runs", "default_db_path", "IngestOptions"]


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given, globs expanded, directories walked for log-like files (sorted)."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        if any(ch in p for ch in "*?[") and not os.path.exists(p):
            hits = sorted(glob.glob(p, recursive=True))
            if not hits:
                raise BadInputError(f"{p}: no file matches this pattern")
            out.extend(h for h in hits if os.path.isfile(h))
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*")
                           if f.is_file() and not f.name.startswith(".")
                           and (f.suffix.lower() in LOG_SUFFIXES or f.name.endswith(".log.gz")))
            if not found:
                raise BadInputError(f"{p}: is a directory with no log files in it")
            out.extend(found)
            continue
        out.append(p)
    return out


def ingest_files(con, paths: Iterable[str], options: IngestOptions | None = None,
           on_file: Callable[[str], None] | None = None) -> list[IngestResult]:
    """Ingest each path in its own transaction; stops at the first bad input."""
    options = options or IngestOptions()
    results = []
    for p in expand_paths(paths):
        if on_file:
            on_file(p)
        results.append(ingest_source(con, p, options))
    return results


def query(con, sql: str, params: list | dict | None = None):
    """Run SQL and return a polars frame; errors become QueryError."""
    import duckdb

    try:
        return fetch_frame(con, sql, params)
    except duckdb.Error as exc:
        msg = str(exc).strip().splitlines()
        raise QueryError(f"SQL error: {msg[0] if msg else exc}") from None


def runs(con):
    return query(con, """SELECT run_id, source_name, label, engine, coalesce(engine_version, format_era) AS version,
                                model, tp_size, attention_backend, spec_method, end_state, gpu_name
                         FROM run_summary ORDER BY run_id""")
