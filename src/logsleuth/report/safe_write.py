"""Write an output file all at once or not at all.

Contract: ``write_atomic(path, data)`` writes ``data`` to a temporary file beside ``path``
and renames it over ``path`` only when every byte is on disk: a full disk, a kill or an
interrupt leaves either the old file (or none) and no partial or 0-byte file, and the
temporary file is removed. A full disk raises ``DiskFullError`` (exit 3); other write
errors are re-raised as ``OSError`` for the caller to word.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..db.diskfull import DiskFullError, is_disk_full


def write_atomic(path: str | Path, data: bytes) -> None:
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():  # keep the permissions of the file being replaced
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if is_disk_full(exc):
            raise DiskFullError(f"{path}: no space left on the disk; nothing was written",
                                hint="free some disk space or write elsewhere") from None
        raise
