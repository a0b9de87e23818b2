"""What a command read, so that what it writes never lands on it.

Contract: ``refuse_overwriting(con, out)`` raises ``UsageError`` (exit 2) when the output
path ``out`` is the database file ``con`` has open, a file under the fleet dataset ``con``
views, or an ingested source; paths are compared resolved (links, ``..``) and by device and
inode (a hard link or another spelling of the same file is caught too). Anything else
returns None and nothing is touched.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from .queries import sql


def _identity(path: str | Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def refuse_overwriting(con, out: str | Path) -> None:
    target = Path(out).expanduser().resolve()
    target_id = _identity(target)
    for (raw,) in con.execute(sql("input_paths")).fetchall():
        if "://" in raw and not raw.startswith("file://"):
            continue  # an object store: never the local path of an output
        given = Path(raw.removeprefix("file://")).expanduser().resolve()
        same = target == given or (target_id is not None and target_id == _identity(given))
        if same or (given.is_dir() and target.is_relative_to(given)):
            raise UsageError(f"{out}: is an input of this command ({raw}); refusing to overwrite it",
                             hint="write the output elsewhere")
