"""The fleet's read-side SQL, kept as named files under ``queries/fleet/``."""
from __future__ import annotations

from functools import cache

from ..resources import data_path


@cache
def fleet_sql(name: str) -> str:
    return data_path(f"queries/fleet/{name}.sql").read_text(encoding="utf-8")
