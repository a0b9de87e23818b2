"""Sandboxed, read-only SQL: what ``sql`` (without ``--write``) and the diagnose rules may do.

Contract:
* ``sandbox(con, allow_files=False)`` turns off extension download and loading and, unless
  ``allow_files``, every file-system access of DuckDB (``COPY ... TO``, ``EXPORT
  DATABASE``, ``ATTACH``, ``INSTALL``/``LOAD``, ``read_csv``/``read_text``/``glob``...),
  then locks the configuration so that SQL cannot switch them back on. The setting
  belongs to the database instance: call it on a connection the caller owns and closes.
  The database file itself stays readable (and writable when opened so).
* ``select_only(sql)`` is None when ``sql`` is exactly one query statement (``SELECT``,
  ``WITH``, ``FROM``, ``SUMMARIZE``...), else the reason it is not; the rule loader
  refuses other rules, so a rule file cannot hold ``DELETE``/``DROP``/``COPY``/``ATTACH``.
* ``read_only_cursor(con)`` is a cursor inside a ``READ ONLY`` transaction that is rolled
  back on exit: a rule cannot write even on a writable connection.
* ``user_query(con, sql, params)`` runs a user's statement and returns a ``Table`` of
  Python values (no polars import); an empty statement is a ``QueryError``.
  ``table_to_polars`` makes a frame of it where a caller wants one: columns polars cannot
  hold come back as text rather than crashing.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

import duckdb

from ..errors import QueryError
from ..table import Table, interval_text

#: settings applied before the lock; order matters (the lock comes last)
_ALWAYS = (
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
)
_NO_FILES = (
    "SET enable_external_access = false",  # also refuses LOAD of extensions
)


def sandbox(con, allow_files: bool = False) -> bool:
    """Restrict ``con``'s database instance (see the module docstring). A fleet dataset's
    connection (``fleet/views.py``) names its root and part files in variables: those files
    stay readable (a local dataset: exactly the listed files), and nothing else does.
    True when ``con`` is such a dataset without file access: DuckDB's allowance to read a
    path is also one to write it, so the caller refuses writing statements
    (``dataset_refusal``)."""
    root, files = con.execute("SELECT getvariable('logsleuth_dataset_root'), "
                              "getvariable('logsleuth_dataset_files')").fetchone()
    if root and not allow_files:
        if "://" in root and not root.startswith("file://"):
            con.execute("SET allowed_directories = [$root]", {"root": root.rstrip("/") + "/"})
        elif files:
            con.execute("SET allowed_paths = $files", {"files": files})
    for stmt in _ALWAYS + (() if allow_files else _NO_FILES):
        con.execute(stmt)
    con.execute("SET lock_configuration = true")
    return bool(root) and not allow_files


#: statements a query of a dataset may run without --allow-files: reads, and changes to the
#: in-memory catalog the dataset's views live in (gone when the command ends). COPY, EXPORT,
#: ATTACH, PRAGMA (``COPY FROM DATABASE``), CALL (``CHECKPOINT``), PREPARE/EXECUTE are not.
_DATASET_KINDS = {"SELECT", "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "TRANSACTION", "SET",
                  "VARIABLE_SET", "CREATE_FUNC", "MERGE_INTO"}
_EXPLAIN = re.compile(r"\s*EXPLAIN\s+(?:ANALY[SZ]E\s+|\([^)]*\)\s*)?", re.IGNORECASE)


def dataset_refusal(statements: list[str]) -> str | None:
    """Why one of ``statements`` may not run on a read-only dataset, or None."""
    for text in statements:
        bad = next((k for k in _kinds(text) if k not in _DATASET_KINDS), None)
        if bad:
            return f"a dataset is read-only: {bad} statements may write files ({text.strip()[:80]})"
    return None


def _kinds(text: str, depth: int = 0) -> list[str]:
    """The statement kinds of ``text``; for EXPLAIN [ANALYZE], those of what it explains
    (EXPLAIN ANALYZE runs it)."""
    kinds = [s.type.name for s in duckdb.extract_statements(text)]
    m = _EXPLAIN.match(text)
    if kinds == ["EXPLAIN"] and m and depth < 3:
        return _kinds(text[m.end():], depth + 1)
    return kinds


def is_sandboxed(con) -> bool:
    """Whether file access is off and locked on ``con`` (both, or it is not a sandbox)."""
    row = con.execute("SELECT current_setting('enable_external_access'), "
                      "current_setting('lock_configuration')").fetchall()[0]
    return (not row[0]) and bool(row[1])


#: the example query the "no SQL" errors of the API and the CLI suggest
SQL_EXAMPLE = 'e.g. logsleuth sql "SELECT * FROM runs"'


def select_only(sql: str) -> str | None:
    """None when ``sql`` is one query statement; else a short reason."""
    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        return f"SQL does not parse: {_first_line(exc)}"
    if len(stmts) != 1:
        kinds = ", ".join(s.type.name for s in stmts) or "none"
        return f"expected exactly one SELECT statement, found {len(stmts)} ({kinds})"
    if stmts[0].type != duckdb.StatementType.SELECT:
        return f"expected a SELECT statement, found {stmts[0].type.name}"
    return None


@contextmanager
def read_only_cursor(con) -> Iterator:
    """A cursor of ``con`` in a READ ONLY transaction, rolled back (and closed) on exit."""
    cur = con.cursor()
    try:
        cur.execute("BEGIN TRANSACTION READ ONLY")
        yield cur
    finally:
        try:
            cur.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the statement failed and ended the transaction already
        cur.close()


def user_query(con, sql: str, params: list | dict | None = None) -> Table:
    """A user's SQL and its result as a ``Table`` of Python values (see the module docstring);
    errors are QueryError. No polars here: ``sql`` prints a few rows and should not pay for it."""
    if not sql.strip() or not _has_statement(sql):
        raise QueryError("empty SQL statement", hint=SQL_EXAMPLE)
    try:
        return Table.from_cursor(con.execute(sql, params or []))
    except duckdb.Error as exc:
        text = str(exc)
        hint = ("file access is off by default: --allow-files turns it on" if "disabled by configuration" in text
                else "the database is opened read-only: --write allows changes" if "read-only mode" in text
                else None)
        raise QueryError(f"SQL error: {_first_line(exc)}", hint=hint) from None


def table_to_polars(table: Table):
    """A user query's ``Table`` as a polars frame; a column polars cannot type (a union's
    mixed members, intervals beside text) is kept as text rather than failing."""
    import polars as pl

    cols = []
    for i, name in enumerate(table.columns):
        values = [r[i] for r in table.rows]
        try:
            cols.append(pl.Series(name, values, strict=False))
        except Exception:  # rows of a user query result, not log lines: a Python pass is fine here
            cols.append(pl.Series(name, [_text(v) for v in values], dtype=pl.Utf8))
    return pl.DataFrame(cols)


def _text(v) -> str | None:
    """One value as DuckDB would print it where Python's own text differs (intervals)."""
    if v is None:
        return None
    if hasattr(v, "total_seconds") and hasattr(v, "days"):  # INTERVAL arrives as a timedelta
        return interval_text(v)
    return str(v)


def _has_statement(sql: str) -> bool:
    try:
        return bool(duckdb.extract_statements(sql))
    except duckdb.Error:
        return True  # let execution report the syntax error with its position


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
