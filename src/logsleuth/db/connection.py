"""DuckDB connection, schema creation and migrations, locking.

Contract: ``open_db(path, read_only=False, wait_s=...)`` returns a DuckDB connection
with the schema of ``schema.py`` and the views of ``queries/views/*.sql`` in place.
DuckDB lets one process write a file, and while it does no other process may open it,
not even read-only. A locked file is retried until ``wait_s`` elapses (default: the
``LOGSLEUTH_LOCK_TIMEOUT`` environment variable in seconds, else 30), with the
``on_wait(wait_s)`` callback called once when the wait starts and
``on_progress(waited_s)`` every few seconds after; then ``DatabaseLockedError``. A
database written by a newer logsleuth, or a file that is not a DuckDB database (checked
by its magic bytes before DuckDB touches it), is refused with ``DatabaseError``;
nothing is changed. Crash safety comes from DuckDB's transactions: each ingest is one
transaction, so a killed process leaves the file as it was before that ingest. New files
are written in the storage format of DuckDB 1.5 (``STORAGE_COMPATIBILITY``) so that the
duckdb CLI from PyPI opens them; schema upgrades are the named steps of ``migrations.py``.
``with transaction(con):`` is one transaction (rolled back if the block raises);
``fetch_one(cursor)`` the first row or None.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import duckdb

from .. import settings
from ..errors import DatabaseError, DatabaseLockedError, NoRunsError, UsageError
from ..private import narrow_umask
from ..resources import data_path
from .migrations import Derivations, migrate  # noqa: F401  (Derivations: open_db's type)
from .schema import SCHEMA_VERSION

DEFAULT_DB = "logsleuth.duckdb"
LOCK_WAIT_S = 30.0
LOCK_TIMEOUT_ENV = "LOGSLEUTH_LOCK_TIMEOUT"
#: seconds between "still waiting" progress callbacks
LOCK_PROGRESS_EVERY_S = 5.0
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file
_FOREIGN_MAGIC = [(b"SQLite format 3\x00", "an SQLite database"), (b"\x1f\x8b", "gzip data"),
                  (b"PK\x03\x04", "a zip archive"), (b"PAR1", "a Parquet file")]


def default_db_path() -> str:
    return settings.database() or DEFAULT_DB


def lock_timeout() -> float:
    """Seconds to wait for a locked database: $LOGSLEUTH_LOCK_TIMEOUT, else 30."""
    raw = settings.lock_timeout_text()  # (the variable LOCK_TIMEOUT_ENV names)
    if not raw:
        return LOCK_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise UsageError(f"{LOCK_TIMEOUT_ENV}={raw!r}: expected a number of seconds >= 0")
    return value


#: the oldest DuckDB release that must read our files: the duckdb CLI on PyPI (1.5.x) reads
#: storage versions 64-68, DuckDB 2.x writes 69 unless told otherwise. Applies to files
#: created by this connection; a file keeps the storage version it was created with.
STORAGE_COMPATIBILITY = "v1.5.0"


def _connect(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    # no extension downloads: a log database never needs one, and `sql` must not fetch code
    return duckdb.connect(path, read_only=read_only, config={
        "threads": max(1, os.cpu_count() or 1), "autoinstall_known_extensions": False,
        "storage_compatibility_version": STORAGE_COMPATIBILITY})


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return ("could not set lock" in text or "conflicting lock" in text
            or "being used by another" in text or "resource temporarily unavailable" in text)


def _check_file(path: str) -> None:
    """Refuse, before DuckDB opens it, a file that is not a DuckDB database."""
    p = Path(path)
    if p.is_dir():
        raise DatabaseError(f"{path}: is a directory, not a database file")
    if not p.exists():
        return
    if not p.is_file():
        raise DatabaseError(f"{path}: not a regular file, cannot be a database")
    try:
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot read the database file: {exc.strerror or exc}") from None
    if not head:
        raise DatabaseError(f"{path}: empty file, not a DuckDB database",
                            hint="delete it or use another --db")
    if head[8:12] != _DUCKDB_MAGIC:
        what = next((name for magic, name in _FOREIGN_MAGIC if head.startswith(magic)), None)
        if what:
            raise DatabaseError(f"{path}: is {what}, not a DuckDB database", hint="use another --db")
        raise DatabaseError(f"{path}: not a DuckDB database file (corrupt, or another format)",
                            hint="use another --db")


def _connect_waiting(path: str, read_only: bool, wait_s: float, on_wait, on_progress) -> duckdb.DuckDBPyConnection:
    start = time.monotonic()
    deadline = start + wait_s
    next_progress = start + LOCK_PROGRESS_EVERY_S
    waited_notice = False
    while True:
        try:
            return _connect(path, read_only)
        except duckdb.Error as exc:
            if "different configuration" in str(exc):
                raise DatabaseError(f"{path}: already open in this process in another mode (read-only vs "
                                    "writable)", hint="close the other connection first") from None
            if not _is_lock_error(exc):
                raise DatabaseError(f"{path}: not a usable logsleuth database ({_first_line(exc)})") from None
            now = time.monotonic()
            if now >= deadline:
                raise DatabaseLockedError(
                    f"{path}: database is locked by another process (another logsleuth ingest?)",
                    hint=f"waited {wait_s:g} s; retry when it finishes, or set {LOCK_TIMEOUT_ENV}") from None
            if not waited_notice:
                waited_notice = True
                if on_wait:
                    on_wait(wait_s)
            elif on_progress and now >= next_progress:
                next_progress = now + LOCK_PROGRESS_EVERY_S
                on_progress(now - start)
            time.sleep(min(0.2, max(0.0, deadline - now)))


def open_db(path: str | None = None, *, read_only: bool = False, wait_s: float | None = None,
            on_wait: Callable[[float], None] | None = None, create: bool = True,
            on_progress: Callable[[float], None] | None = None,
            derived: "Derivations | None" = None) -> duckdb.DuckDBPyConnection:
    """``derived``: what the upgrade steps of an older database need from above ``db/``
    (``migrations.Derivations``; ``api.open_db`` gives it)."""
    path = path or default_db_path()
    if wait_s is None:
        wait_s = lock_timeout()
    if path != ":memory:":
        _check_file(path)
        if not read_only or not Path(path).exists():
            narrow_umask()  # the database and its WAL: owner-only (private.py)
        if read_only and not Path(path).exists():
            if not create:
                raise NoRunsError(f"no runs: {path} does not exist yet", hint="run `logsleuth ingest FILE` first")
            con = _connect_waiting(path, False, wait_s, on_wait, on_progress)  # create the empty schema once
            try:
                _ensure_schema(con, path, derived)
            finally:
                con.close()
    con = _connect_waiting(path, read_only, wait_s, on_wait, on_progress)
    try:
        if read_only:
            if not _schema_current(con, path):  # upgrade once, then reopen read-only
                con.close()
                con = _connect_waiting(path, False, wait_s, on_wait, on_progress)
                _ensure_schema(con, path, derived)
                con.close()
                con = _connect_waiting(path, True, wait_s, on_wait, on_progress)
        else:
            _ensure_schema(con, path, derived)
    except BaseException:
        con.close()
        raise
    return con


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__


def _check_version(con, path: str) -> int:
    """Schema version of an existing database (refusing a newer one)."""
    try:
        row = fetch_one(con.execute("SELECT value FROM meta WHERE key = 'schema_version'"))
    except duckdb.CatalogException:
        raise DatabaseError(f"{path}: not a logsleuth database (no meta table)", hint="use another --db") from None
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: corrupt or unreadable database ({_first_line(exc)})") from None
    if row and int(row[0]) > SCHEMA_VERSION:
        raise DatabaseError(
            f"{path}: written by a newer logsleuth (schema {row[0]} > {SCHEMA_VERSION})",
            hint="upgrade logsleuth or use another --db")
    return int(row[0]) if row else SCHEMA_VERSION


def _ensure_schema(con, path: str, derived=None) -> None:
    try:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: not a usable database ({_first_line(exc)})") from None
    version = SCHEMA_VERSION
    if "meta" in tables:
        if _schema_current(con, path):  # the usual open: one read, no transaction, nothing rewritten
            return
        version = _check_version(con, path)
    elif tables - {"meta"} and "sources" not in tables:
        raise DatabaseError(f"{path}: a DuckDB file that is not a logsleuth database",
                            hint="use another --db")
    try:
        with transaction(con):
            migrate(con, tables, version, derived)  # named steps of db/migrations.py, each recorded
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            create_views(con)
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_stamp', ?)", [schema_stamp()])
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: cannot create schema ({_first_line(exc)})") from None


def schema_stamp() -> str:
    """A digest of everything ``_ensure_schema`` writes (schema version, migration steps,
    table declarations, view SQL): equal stamps mean an open has nothing to create."""
    import hashlib

    from .migrations import STEPS
    from .schema import create_statements

    h = hashlib.sha256(str(SCHEMA_VERSION).encode())
    for part in [s.name for s in STEPS] + create_statements():
        h.update(b"\0" + part.encode())
    for f in sorted((data_path("queries") / "views").glob("*.sql")):
        h.update(b"\0" + f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _schema_current(con, path: str) -> bool:
    """Whether the database already has this logsleuth's schema and views (its stamp);
    a newer schema is refused as by ``_check_version``."""
    if _check_version(con, path) != SCHEMA_VERSION:
        return False
    row = fetch_one(con.execute("SELECT value FROM meta WHERE key = 'schema_stamp'"))
    return bool(row) and row[0] == schema_stamp()


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


@contextmanager
def transaction(con):
    """``BEGIN`` before the block, ``COMMIT`` after it; ``ROLLBACK`` when it raises (any
    exception, Ctrl-C too), then the exception goes on. A failed ``COMMIT`` (a full disk)
    has ended the transaction already, so the ``ROLLBACK`` after it may fail: ignored."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise
