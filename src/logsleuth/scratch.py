"""Scratch folders that do not outlive their process, even one killed with SIGKILL.

Contract: ``scratch_dir(prefix, base=None)`` creates a private folder named
``{prefix}{host}-{pid}-{random}`` in ``base`` (default: the temporary folder) and first
removes the folders of the same prefix that a process of this host left behind and that
no longer runs (its pid is gone). The caller still removes its own folder when done; the
sweep is for the runs that could not (``kill -9``, a power cut, an OOM kill). Folders of
other hosts (a temporary folder shared between machines or containers) and of live
processes are never touched.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile


def _host() -> str:
    name = socket.gethostname() or "host"
    return "".join(c if c.isalnum() else "_" for c in name)[:40]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (another user's): not ours to judge
    return True


def sweep(prefix: str, base: str) -> list[str]:
    """Remove ``prefix`` folders in ``base`` left by dead processes of this host; their paths."""
    mine = f"{prefix}{_host()}-"
    removed = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(mine):
            continue
        pid_text = name[len(mine):].split("-", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        path = os.path.join(base, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path) and os.stat(path).st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except OSError:
            continue
    return removed


def scratch_dir(prefix: str, base: str | None = None) -> str:
    base = base or tempfile.gettempdir()
    sweep(prefix, base)
    return tempfile.mkdtemp(prefix=f"{prefix}{_host()}-{os.getpid()}-", dir=base)
