"""The ``logsleuth`` command's entry point: answer a help request from a cache, else run the app.

Contract: ``main()`` is what the console script and ``python -m logsleuth`` run. A help
request (``--help`` or ``-h`` before any ``--``) whose output an earlier run saved, for the
same arguments, logsleuth version and source files, terminal size and colour settings, is
printed from the cache (settings.user_cache_dir()/help) and exits 0 without importing typer
or rich. Anything else runs the typer app (cli/app.py ``main``); a help request that was not
cached runs it too, and the bytes it printed to stdout are saved when it exits 0.

Why: building the help costs ~0.3 s of imports (typer 0.07 s, typer's rich help renderer
0.21 s, our command modules 0.03 s) on top of Python's own start, every time, for text that
only changes when logsleuth or the terminal does. A cache that cannot be read or written is
ignored: the help is then built as before.
"""
from __future__ import annotations

import hashlib
import os
import sys

#: environment variables that change what typer/rich print (colour, width, help style)
_ENV_KEYS = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TTY_COMPATIBLE",
             "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES", "_TYPER_FORCE_DISABLE_TERMINAL",
             "TYPER_USE_RICH", "LOGSLEUTH_DB", "LOGSLEUTH_DATASET")


def is_help_request(args: list[str]) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg in ("--help", "-h"):
            return True
    return False


def _source_stamp() -> list:
    """(file, size, mtime) of every module of the package: a changed command, option or help
    text changes the key."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamp = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                stamp.append((os.path.relpath(os.path.join(folder, name), root), st.st_size, st.st_mtime_ns))
    return stamp


def _terminal() -> list:
    """What rich measures: whether each standard stream is a terminal, and its size."""
    out = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
            size = os.get_terminal_size(fd) if os.isatty(fd) else None
            out.append((os.isatty(fd), tuple(size) if size else None))
        except (AttributeError, OSError, ValueError):
            out.append((None, None))
    return out


def help_cache_path(args: list[str]) -> str:
    from .. import settings
    from ..settings import user_cache_dir
    from ..version import __version__

    key = repr((__version__, sys.version_info[:2], args, _source_stamp(), _terminal(),
                settings.values(_ENV_KEYS)))
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(str(user_cache_dir()), "help", f"{digest}.txt")


class _Tee:
    """stdout that also keeps what was written (everything else is the real stream's)."""

    def __init__(self, stream):
        self._stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        n = self._stream.write(text)  # first: click probes with bytes, which a text stream refuses
        self.parts.append(text)
        return n

    def __getattr__(self, name):
        return getattr(self._stream, name)


#: first line of a cache entry, before the sha256 of the text that follows it
_MAGIC = "logsleuth-help-1"


def _save(path: str, text: str) -> None:
    from ..errors import LogsleuthError
    from ..report.safe_write import write_atomic  # whole or absent: a concurrent reader never sees half a help

    data = text.encode("utf-8", "surrogateescape")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, f"{_MAGIC} {hashlib.sha256(data).hexdigest()}\n".encode() + data)
    except (OSError, LogsleuthError):  # (a full disk included): the help was printed, only not kept
        pass


def _cached(path: str) -> str | None:
    """The saved help, or None when absent or damaged (its checksum does not match)."""
    try:
        with open(path, "rb") as fh:
            head, _, data = fh.read().partition(b"\n")
    except OSError:
        return None
    if not data or head != f"{_MAGIC} {hashlib.sha256(data).hexdigest()}".encode():
        return None
    return data.decode("utf-8", "surrogateescape")


def main() -> None:
    args = sys.argv[1:]
    path = help_cache_path(args) if is_help_request(args) else None
    if path is not None:
        text = _cached(path)
        if text is not None:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:  # `| head`: the reader has what it wanted
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (no second error at exit)
            sys.exit(0)
    from .app import main as run_app

    if path is None:
        run_app()
        return
    tee = sys.stdout = _Tee(sys.stdout)
    try:
        run_app()
    except SystemExit as done:
        if done.code in (0, None) and tee.parts:
            _save(path, "".join(tee.parts))
        raise
    finally:
        sys.stdout = tee._stream
