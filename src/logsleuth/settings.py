"""Settings read from the environment: the one place logsleuth reads environment variables
(a test in tests/architecture checks that no other module does).

Contract: pure functions, read at call time (never cached at import, so tests and
long-running processes see changes). Nothing here creates folders.

- ``user_config_dir()``: ``$XDG_CONFIG_HOME/logsleuth`` (default ``~/.config/logsleuth``);
  user grammars live in its ``parsers/`` folder, loaded after the shipped ones.
- ``user_cache_dir()``: ``$XDG_CACHE_HOME/logsleuth`` (default ``~/.cache/logsleuth``).
- ``grammar_cache_enabled()``: False when ``LOGSLEUTH_NO_GRAMMAR_CACHE`` is set (always
  re-check grammar files instead of trusting a stamp of an earlier check).
- ``database()``: ``LOGSLEUTH_DB`` (None when unset or empty); ``lock_timeout_text()``:
  ``LOGSLEUTH_LOCK_TIMEOUT`` as written (``db/connection.py`` checks it);
  ``ingest_memory(default)``: ``LOGSLEUTH_INGEST_MEMORY`` or ``default``; ``columns()``:
  ``COLUMNS`` as written (the CLI's output width); ``values(names)``: several variables at
  once, for a cache key.
"""
from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, fallback: str) -> Path:
    base = os.environ.get(var)
    # the XDG spec: a relative value is invalid and must be ignored
    if not base or not os.path.isabs(base):
        base = str(Path.home() / fallback)
    return Path(base) / "logsleuth"


def user_config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config")


def user_grammar_dir() -> Path:
    """Folder of the user's own grammar files (may not exist)."""
    return user_config_dir() / "parsers"


def user_cache_dir() -> Path:
    return _xdg("XDG_CACHE_HOME", ".cache")


def grammar_cache_enabled() -> bool:
    return not os.environ.get("LOGSLEUTH_NO_GRAMMAR_CACHE")


def database() -> str | None:
    return os.environ.get("LOGSLEUTH_DB") or None


def lock_timeout_text() -> str:
    return os.environ.get("LOGSLEUTH_LOCK_TIMEOUT", "").strip()


def ingest_memory(default: str) -> str:
    return os.environ.get("LOGSLEUTH_INGEST_MEMORY", default)


def columns() -> str:
    return os.environ.get("COLUMNS", "").strip()


def values(names) -> list[tuple[str, str | None]]:
    return [(k, os.environ.get(k)) for k in names]


def no_color() -> bool:
    """``NO_COLOR`` set and not empty (https://no-color.org): no escape codes at all."""
    return bool(os.environ.get("NO_COLOR", ""))


def color_forced() -> bool:
    """Colour forced by the environment (``FORCE_COLOR``, ``PY_COLORS``, CI's ``GITHUB_ACTIONS``),
    as typer's own help renderer reads it."""
    return bool(os.environ.get("GITHUB_ACTIONS") or os.environ.get("FORCE_COLOR") or os.environ.get("PY_COLORS"))
