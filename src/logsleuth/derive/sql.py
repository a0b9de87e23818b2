"""Load the SQL of run derivation from ``queries/derive/<name>.sql`` (and its data files) by name.

Contract: ``sql(name)`` returns the text of ``queries/derive/<name>.sql`` (cached; ``--`` comment
lines kept, DuckDB ignores them); ``data(name)`` parses ``queries/derive/<name>.toml``. Only
``derive/`` modules call these: the derivation's SQL lives beside the rules, in the data folder.
"""
from __future__ import annotations

import tomllib
from functools import lru_cache

from ..resources import data_path


@lru_cache(maxsize=None)
def sql(name: str) -> str:
    return data_path(f"queries/derive/{name}.sql").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def data(name: str) -> dict:
    with open(data_path(f"queries/derive/{name}.toml"), "rb") as fh:
        return tomllib.load(fh)
