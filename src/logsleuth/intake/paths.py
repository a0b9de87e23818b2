"""Which files an ingest reads: paths as given, globs expanded, folders walked for inputs.

Contract: ``expand_paths(paths, on_note)`` returns files in ingest order: a path as given
(``-`` is stdin), a glob's matches (``**`` never loops on a symbolic-link loop), a folder's
files that are logs or telemetry by their content (``select.py``; each file skipped is told
to ``on_note`` with the reason, never printed), and a rotated set oldest first.
``checked_files`` also checks every file before any database is opened. ``LOG_SUFFIXES``:
the names ``watch`` follows in a folder.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from ..errors import BadInputError

LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".md", ".gz", ".jsonl", "",
                ".json", ".csv", ".prom", ".metrics"}  # + telemetry files beside the logs


def _glob(pattern: str) -> list[str]:
    from ..walk import glob_paths  # ** never loops on a symlink loop

    hits = sorted(glob_paths(pattern))
    if not hits:
        raise BadInputError(f"{pattern}: no file matches this pattern")
    return [h for h in hits if os.path.isfile(h)]


def _walk(folder: Path, on_note: Callable[[str], None] | None) -> list[str]:
    # which files are inputs is decided by their content (select.py), not their names
    from .select import select_logs

    found, skipped = select_logs(sorted(str(f) for f in folder.rglob("*")
                                        if f.is_file() and not f.name.startswith(".")))
    for f, why in skipped:
        if on_note is not None:
            on_note(f"note: skipped {f}: {why}")
    if not found:
        raise BadInputError(f"{folder}: is a directory with no log files in it")
    return found


def expand_paths(paths: Iterable[str], on_note: Callable[[str], None] | None = None) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
        elif any(ch in p for ch in "*?[") and not os.path.exists(p):
            out.extend(_glob(p))
        elif Path(p).is_dir():
            out.extend(_walk(Path(p), on_note))
        else:
            out.append(p)
    from ..ingest.source import order_rotated  # on use: the ingest modules load polars (~0.4 s)

    return order_rotated(out)  # a rotated set oldest first (server.log.2.gz, server.log.1, server.log)


def checked_files(paths: Iterable[str], on_note: Callable[[str], None] | None = None) -> list[str]:
    from ..ingest.read import check_input

    files = expand_paths(paths, on_note)
    for p in files:
        if p != "-":
            check_input(p)
    return files
