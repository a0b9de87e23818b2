"""The fleet's SQL, kept as named files under ``queries/fleet/``.

Contract: ``fleet_sql(name)`` is the text of ``queries/fleet/NAME.sql``; ``fleet_fragment(name)``
the same without its comment lines, for a piece of SQL set inside another (``{placeholder}``).
"""
from __future__ import annotations

from functools import cache

from ..resources import data_path


@cache
def fleet_sql(name: str) -> str:
    return data_path(f"queries/fleet/{name}.sql").read_text(encoding="utf-8")


@cache
def fleet_fragment(name: str) -> str:
    return " ".join(ln for ln in fleet_sql(name).splitlines() if ln.strip() and not ln.lstrip().startswith("--"))
