"""Named read-side queries: ``queries/app/<name>.sql``, loaded by name and run.

Contract: ``sql(name)`` returns the text of ``queries/app/<name>.sql`` (raising
``LookupError`` for an unknown name: a programming error, not a user's); ``frame(con,
name, params)`` runs it with DuckDB ``$named`` parameters and returns a polars frame;
``rows(con, name, params)`` returns a list of dicts without importing polars (for the few
rows a findings header needs). The files are plain SQL with a ``--`` comment header that
says what they return, so each one also runs as is in the duckdb shell once its
parameters are set. Only the library calls these; the CLI never sees SQL.
"""
from __future__ import annotations

from pathlib import Path

from ..resources import data_path
from .connection import fetch_frame


def folder() -> Path:
    """The folder of the named queries (``queries/app``)."""
    return data_path("queries") / "app"


def names() -> list[str]:
    """Names of every shipped query, sorted."""
    return sorted(p.stem for p in folder().glob("*.sql"))


def sql(name: str) -> str:
    """The SQL text of query ``name``."""
    path = folder() / f"{name}.sql"
    if not path.is_file():
        raise LookupError(f"no query named {name!r} in {folder()}")
    return path.read_text(encoding="utf-8")


def frame(con, name: str, params: dict | None = None):
    """Run query ``name`` with ``$named`` ``params``; a polars DataFrame."""
    return fetch_frame(con, sql(name), params or {})


def table(con, name: str, params: dict | None = None):
    """Run query ``name``; its result as a ``logsleuth.table.Table`` (no polars import)."""
    from ..table import Table

    return Table.from_cursor(con.execute(sql(name), params or {}))


def rows(con, name: str, params: dict | None = None) -> list[dict]:
    """Run query ``name``; its rows as dicts (no polars import)."""
    cur = con.execute(sql(name), params or {})
    cols = [d[0] for d in cur.description or []]
    return [dict(zip(cols, r)) for r in cur.fetchall()]
