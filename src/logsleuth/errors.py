"""Error family and exit codes of logsleuth.

Contract: library code raises a subclass of ``LogsleuthError``; the CLI turns it into a
one-line ``Error: ...`` on stderr and the exit code carried by the exception. Nothing in
here imports typer or rich.
"""
from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Documented process exit codes (docs/commands.md "Exit codes")."""

    OK = 0
    FINDINGS = 1  # diagnose found something at or above --fail-on
    USAGE = 2
    BAD_INPUT = 3
    QUERY_ERROR = 4
    INTERNAL = 70
    INTERRUPTED = 130


class LogsleuthError(Exception):
    """Base class; ``exit_code`` tells the CLI how to exit."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # one line, hint appended
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class BadInputError(LogsleuthError):
    """The input file or stream cannot be ingested (missing, binary, corrupt...)."""

    exit_code = ExitCode.BAD_INPUT


class UsageError(LogsleuthError):
    exit_code = ExitCode.USAGE


class NoRunsError(UsageError):
    """A command that reads runs found none: no database at the path, or one with nothing
    ingested. A usage error (exit 2), never an empty answer that looks like a clean bill."""


class QueryError(LogsleuthError):
    """A SQL query (user's or a rule's) failed."""

    exit_code = ExitCode.QUERY_ERROR


class DatabaseError(LogsleuthError):
    """The database is locked, corrupt or from a newer schema."""

    exit_code = ExitCode.BAD_INPUT


class DatabaseLockedError(DatabaseError):
    """Another process held the database longer than the lock timeout
    (``LOGSLEUTH_LOCK_TIMEOUT``); nothing was changed."""


class GrammarError(LogsleuthError):
    """A grammar (parsers/*.toml) or rule file (queries/rules/*.sql) is invalid.

    The message is compiler-style: file, key, what is wrong, and for regexes the
    pattern with a caret under the bad position.
    """

    exit_code = ExitCode.BAD_INPUT
