"""The ingest's own SQL, kept as named files under ``queries/ingest/`` (read once per process)."""
from __future__ import annotations

from functools import cache

from ..resources import data_path


@cache
def ingest_sql(name: str) -> str:
    return data_path(f"queries/ingest/{name}.sql").read_text(encoding="utf-8")
