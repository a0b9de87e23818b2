"""A full disk during a write: the database is put back as it was, its file shrunk back.

Contract:
* ``snapshot(con)`` checkpoints the database (so every committed change is in the file and
  its write-ahead log is empty) and records the file's size; ``None`` for an in-memory
  database or when it cannot checkpoint (another transaction open); ``DiskFullError``
  when the checkpoint itself finds no space (nothing of the coming write was done).
* ``is_disk_full(exc)`` is true for ENOSPC / EDQUOT in any form (an ``OSError``, DuckDB's
  IO or fatal errors naming "No space left on device" or "Disk quot").
* ``recover(con, snap, what)`` closes ``con``, truncates the database file to its recorded
  size and removes the write-ahead log the failed write left, then returns the
  ``DiskFullError`` to raise (exit 3) saying the database is as it was. The caller's
  connection is closed afterwards: the database must be opened again.
Why truncating is safe: DuckDB changes a database file's header only at the end of a
successful checkpoint, and the header is rewritten in place (no new space needed), so after
a failed write the header still describes the state at ``snapshot``; blocks past the
recorded size belong only to the failed transaction (or its unfinished checkpoint), and the
log holds nothing else since the snapshot's checkpoint emptied it.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ..errors import BadInputError

_MARKERS = ("no space left on device", "disk quota exceeded", "not enough space", "out of disk space")


class DiskFullError(BadInputError):
    """The disk filled up while writing; nothing of that write was kept (exit 3)."""


@dataclass(frozen=True)
class Snapshot:
    path: str
    size: int
    wal_size: int | None  # None: no log file at snapshot time


def database_path(con) -> str | None:
    """File of ``con``'s current database (None for in-memory)."""
    try:
        row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
                          ).fetchall()
    except Exception:
        return None
    path = row[0][0] if row else None
    return path if path and path != ":memory:" else None


def snapshot(con) -> Snapshot | None:
    path = database_path(con)
    if path is None:
        return None
    try:
        con.execute("CHECKPOINT")
    except Exception as exc:
        if is_disk_full(exc):
            raise DiskFullError(f"{path}: no space left on the disk; nothing was written",
                                hint="free some disk space (or use --db on another disk)") from None
        return None  # e.g. another transaction is open: no snapshot, no repair
    wal = path + ".wal"
    return Snapshot(path, os.path.getsize(path), os.path.getsize(wal) if os.path.exists(wal) else None)


def is_disk_full(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:  # the error, and what it was raised from
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(exc).lower()
        if any(m in text for m in _MARKERS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def recover(con, snap: Snapshot, what: str) -> DiskFullError:
    """Put the database back (see the module docstring); the error to raise."""
    try:
        con.close()
    except Exception:
        pass
    restored = True
    try:
        if os.path.getsize(snap.path) > snap.size:
            os.truncate(snap.path, snap.size)
        wal = snap.path + ".wal"
        if snap.wal_size is None:
            if os.path.exists(wal):
                os.unlink(wal)
        elif os.path.getsize(wal) > snap.wal_size:
            os.truncate(wal, snap.wal_size)
    except OSError:
        restored = False
    state = ("the database is as it was before" if restored
             else "the database could not be shrunk back; free some space and run any command to repair it")
    return DiskFullError(f"{what}: no space left on the disk of {snap.path}; nothing of it was stored, {state}",
                         hint="free some disk space (or use --db on another disk) and run the ingest again")
