"""DuckDB connection, schema creation and migrations, locking.

Contract: ``open_db(path, read_only=False, wait_s=...)`` returns a DuckDB connection
with the schema of ``schema.py`` and the views of ``queries/views/*.sql`` in place.
A file locked by another writer is retried until ``wait_s`` elapses (with a progress
callback), then ``DatabaseError``. A database written by a newer logsleuth, or a file
that is not a DuckDB database, is refused with ``DatabaseError``; nothing is changed.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

import duckdb

from .errors import DatabaseError
from .resources import data_path
from .schema import SCHEMA_VERSION, create_statements

DEFAULT_DB = "logsleuth.duckdb"
LOCK_WAIT_S = 30.0


def default_db_path() -> str:
    return os.environ.get("LOGSLEUTH_DB") or DEFAULT_DB


def _connect(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(path, read_only=read_only, config={"threads": max(1, os.cpu_count() or 1)})


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text or "being used by another" in text


def open_db(path: str | None = None, *, read_only: bool = False, wait_s: float = LOCK_WAIT_S,
            on_wait: Callable[[float], None] | None = None, create: bool = True) -> duckdb.DuckDBPyConnection:
    path = path or default_db_path()
    if path != ":memory:":
        p = Path(path)
        if p.is_dir():
            raise DatabaseError(f"{path}: is a directory, not a database file")
        if read_only and not p.exists():
            if not create:
                raise DatabaseError(f"{path}: no database yet", hint="run `logsleuth ingest FILE` first")
            con = _connect(path, read_only=False)  # create the empty schema once
            _ensure_schema(con, path)
            con.close()
    deadline = time.monotonic() + wait_s
    waited_notice = False
    while True:
        try:
            con = _connect(path, read_only)
            break
        except duckdb.Error as exc:
            if _is_lock_error(exc) and time.monotonic() < deadline:
                if on_wait and not waited_notice:
                    on_wait(wait_s)
                    waited_notice = True
                time.sleep(0.2)
                continue
            if _is_lock_error(exc):
                raise DatabaseError(f"{path}: database is locked by another logsleuth process",
                                    hint=f"waited {wait_s:.0f} s; retry when it finishes") from None
            raise DatabaseError(f"{path}: not a usable logsleuth database ({_first_line(exc)})") from None
    try:
        if read_only:
            _check_version(con, path)
        else:
            _ensure_schema(con, path)
    except DatabaseError:
        con.close()
        raise
    return con


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__


def _check_version(con, path: str) -> None:
    try:
        row = fetch_one(con.execute("SELECT value FROM meta WHERE key = 'schema_version'"))
    except duckdb.Error:
        raise DatabaseError(f"{path}: not a logsleuth database (no meta table)") from None
    if row and int(row[0]) > SCHEMA_VERSION:
        raise DatabaseError(
            f"{path}: written by a newer logsleuth (schema {row[0]} > {SCHEMA_VERSION})",
            hint="upgrade logsleuth or use another --db")


def _ensure_schema(con, path: str) -> None:
    try:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: not a usable database ({_first_line(exc)})") from None
    if "meta" in tables:
        _check_version(con, path)
    elif tables - {"meta"} and "sources" not in tables:
        raise DatabaseError(f"{path}: a DuckDB file that is not a logsleuth database",
                            hint="use another --db")
    con.execute("BEGIN TRANSACTION")
    try:
        for stmt in create_statements():
            con.execute(stmt)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        create_views(con)
        con.execute("COMMIT")
    except duckdb.Error as exc:
        con.execute("ROLLBACK")
        raise DatabaseError(f"{path}: cannot create schema ({_first_line(exc)})") from None


def create_views(con) -> None:
    """(Re)create the views shipped as SQL files in queries/views/, in name order."""
    folder = data_path("queries") / "views"
    for f in sorted(folder.glob("*.sql")):
        sql = f.read_text(encoding="utf-8")
        con.execute(f"CREATE OR REPLACE VIEW {f.stem} AS\n{_strip_comments(sql).rstrip().rstrip(';')}")


def _strip_comments(sql: str) -> str:
    return "\n".join(ln for ln in sql.splitlines() if not ln.lstrip().startswith("--"))


def fetch_frame(con, sql: str, params=None):
    """Run ``sql`` and return a polars DataFrame (works across duckdb 1.x and 2.x APIs)."""
    import polars as pl

    cur = con.execute(sql, params or [])
    if cur.description is None:
        return pl.DataFrame()
    for name in ("pl", "to_arrow_table", "fetch_arrow_table", "arrow"):
        fn = getattr(cur, name, None)
        if fn is None:
            continue
        import warnings

        with warnings.catch_warnings():  # duckdb 2 warns about a copy; results here are small
            warnings.simplefilter("ignore")
            out = fn()
        return out if isinstance(out, pl.DataFrame) else pl.from_arrow(out)
    raise RuntimeError("duckdb result cannot be converted to polars")


def fetch_one(cur):
    """First row or None, consuming the whole result (duckdb 2.x refuses new work on a
    connection that still holds an unfinished result)."""
    rows = cur.fetchall()
    return rows[0] if rows else None
