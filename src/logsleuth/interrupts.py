"""Ctrl-C and SIGTERM: one way to stop, and a message that says what was kept.

Contract:
* ``install_sigterm()`` makes SIGTERM raise ``KeyboardInterrupt`` in the main thread, as
  Ctrl-C does: both roll back the write in progress and exit 130 with a message (SIGTERM
  used to end the process with 143 and no word).
* ``committing(what)`` is a context for a COMMIT: SIGINT and SIGTERM that arrive while it
  runs are held and delivered when it returns, as ``InterruptedAfterCommit`` when the
  commit finished. An interrupt thus lands before the commit (rolled back) or after it
  (kept), never inside it, where DuckDB answered "Query interrupted" for a commit that had
  in fact completed. Only the main thread can hold signals; elsewhere it does nothing.
* ``interrupted_query(exc)``: whether ``exc`` is DuckDB's answer to a signal that arrived
  while a statement ran on the main thread (``RuntimeError("Query interrupted")``, the
  ``KeyboardInterrupt`` itself is not raised): an interrupt, like ``KeyboardInterrupt``.
* ``interrupt_message(exc)`` is the one-line message for an interrupt: whether the write in
  progress was committed, and which ones were committed before it in this process.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

_COMMITTED: list[str] = []  # what this process committed (ingested files), in order
_LAST = None  # the last InterruptedAfterCommit raised (the CLI may only see an exit code 130)


class InterruptedAfterCommit(KeyboardInterrupt):
    """An interrupt that arrived during a COMMIT, delivered once the commit finished."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def install_sigterm() -> None:
    """SIGTERM like Ctrl-C (main thread only: where Python runs signal handlers)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)


@contextmanager
def committing(what: str):
    if threading.current_thread() is not threading.main_thread():
        yield
        _COMMITTED.append(what)
        return
    pending: list[int] = []

    def hold(signum, frame):
        pending.append(signum)

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        old[sig] = signal.signal(sig, hold)
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    _COMMITTED.append(what)  # reached only when the commit returned
    if pending:
        global _LAST
        _LAST = InterruptedAfterCommit(what)
        raise _LAST


def interrupted_query(exc: BaseException) -> bool:
    """Whether ``exc`` is a DuckDB statement stopped by Ctrl-C/SIGTERM (see the contract)."""
    if type(exc).__name__ == "InterruptException" or (
            type(exc) is RuntimeError and str(exc).strip() == "Query interrupted"):
        return True
    # a signal inside the Python callback DuckDB runs to find the frame an insert reads (its
    # replacement scan of ``_logsleuth_*`` names) surfaces as that frame being missing: those
    # names are always bound when the statement starts, so only an interrupt can lose them
    return type(exc).__name__ == "CatalogException" and "_logsleuth_" in str(exc) and "does not exist" in str(exc)


def _after_commit(exc: BaseException | None) -> BaseException | None:
    """The InterruptedAfterCommit in ``exc`` or what it was raised from (click wraps a
    KeyboardInterrupt into Abort)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, InterruptedAfterCommit):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def interrupt_message(exc: BaseException | None = None) -> str:
    exc = _after_commit(exc) or _LAST or exc
    if isinstance(exc, InterruptedAfterCommit):
        done = f"interrupted after {exc.what} was committed: it is kept"
    else:
        done = "interrupted; any ingest in progress was rolled back"
    before = [w for w in _COMMITTED if not (isinstance(exc, InterruptedAfterCommit) and w == exc.what)]
    if before:
        names = ", ".join(before[:3]) + (f" and {len(before) - 3} more" if len(before) > 3 else "")
        done += f"; committed before it: {names}"
    return done
