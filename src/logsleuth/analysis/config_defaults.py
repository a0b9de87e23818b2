"""The default values of engine settings (``parsers/config_defaults.toml``), for ``show``.

Contract: ``default_pairs(engine)`` is the list of ``key=value`` texts of ``engine``'s
defaults (every value of a key whose default moved between releases), the form the
``run_config`` query compares a run's settings with; an engine without defaults gives [].
"""
from __future__ import annotations

import tomllib
from functools import lru_cache

from ..resources import data_path


@lru_cache(maxsize=None)
def _table() -> dict:
    return tomllib.loads(data_path("parsers/config_defaults.toml").read_text(encoding="utf-8"))


def default_pairs(engine: str | None) -> list[str]:
    """``key=value`` of every default of ``engine`` (none for an unknown engine)."""
    out = []
    for key, value in (_table().get(engine or "", {}) or {}).items():
        for v in value if isinstance(value, list) else [value]:
            out.append(f"{key}={v}")
    return out
