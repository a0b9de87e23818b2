"""Files that hold log text are private to their owner.

Contract: ``narrow_umask()`` removes the group and other bits from the process umask (an
umask of 022 becomes 077), once and for the rest of the process: called when a database is
opened for writing or a dataset is written, so the database, DuckDB's write-ahead log
(created later, on the first write, by DuckDB itself) and the part files are created
readable by their owner only. Log lines carry prompts, paths and host names; a 0644
database in a shared folder handed them to every user of the host. A file that already
exists keeps its mode.
"""
from __future__ import annotations

import os
import threading

_LOCK = threading.Lock()


def narrow_umask() -> None:
    with _LOCK:
        current = os.umask(0o077)
        os.umask(current | 0o077)
