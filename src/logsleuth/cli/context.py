"""What every command shares: the global options, the database opener, notes and errors.

Contract: ``state.db``, ``state.dataset`` and ``state.debug`` are the global options (``--db`` or
``--dataset``, ``--debug``)
of the invocation being run: the app's callback stores them in the root click context
(``ctx.obj``) and ``state`` reads them from there, so nothing is kept in module state
between invocations (outside one: None and False). ``debug_requested(argv)`` tells the
entry point, after the context is gone, whether ``--debug`` was given.
``open_database(read_only=..., create=...)`` opens ``state.db``
(a database, or with ``--dataset`` a fleet dataset) through ``logsleuth.api`` and says on stderr when it waits for a lock; ``note``
and ``error`` write one line to stderr; ``with_database(call, ...)`` makes one library call on a
connection it opens and closes. Command modules (``app.py``, ``scrape.py``,
``watch.py``...) import these from here, so no command module imports ``app.py`` (which
registers them) and there is no import cycle.
"""
from __future__ import annotations

import sys


def _options() -> dict:
    # typer vendors click: its own context stack, not the click package's
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj if isinstance(obj, dict) else {}


def database_name() -> str:
    """The database (or dataset) this invocation uses, as the user would name it."""
    if state.db:
        return state.db
    from ..api import default_db_path

    return default_db_path()


class GlobalOptions:
    """A read-only view of the global options of the invocation being run."""

    @property
    def db(self) -> str | None:
        return _options().get("db")

    @property
    def dataset(self) -> bool:
        """``--dataset DIR`` was given (``db`` then names the dataset folder)."""
        return bool(_options().get("dataset"))

    @property
    def debug(self) -> bool:
        return bool(_options().get("debug"))


state = GlobalOptions()  # holds nothing: each attribute is read from the current context


def debug_requested(argv: list[str]) -> bool:
    """Whether ``--debug`` is among the options of ``argv`` (before a ``--``)."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "--debug" in args


def error(msg: str) -> None:
    sys.stderr.write(f"Error: {msg}\n")


def note(msg: str) -> None:
    sys.stderr.write(f"{msg}\n")


def open_database(read_only: bool = False, create: bool = True):
    """A connection to ``state.db`` (default ./logsleuth.duckdb), waiting for a lock."""
    from ..api import open_dataset, open_db

    if state.dataset:  # --dataset DIR: the folder must hold a dataset (no database file is made there)
        return open_dataset(state.db)
    name = database_name()
    return open_db(state.db, read_only=read_only, create=create,
                   on_wait=lambda s: note(f"{name}: locked by another process (an ingest?); "
                                          f"waiting up to {s:g} s (LOGSLEUTH_LOCK_TIMEOUT) ..."),
                   on_progress=lambda w: note(f"{name}: still locked, waited {w:.0f} s ..."))


def with_database(call, *args, read_only: bool = True, needs_runs: bool = False, **kwargs):
    """``call(con, *args, **kwargs)`` on a connection to ``state.db`` (read-only unless
    told otherwise), closed afterwards: the one library call of a command. ``needs_runs``:
    the command reads runs, so a missing database is not created and a database without
    runs is refused (exit 2, "run `logsleuth ingest FILE` first") before the call."""
    con = open_database(read_only=read_only, create=not needs_runs)
    try:
        if needs_runs:
            from ..api import require_runs

            require_runs(con, where=database_name())
        return call(con, *args, **kwargs)
    finally:
        con.close()
