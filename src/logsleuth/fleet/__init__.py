"""Fleet: many hosts' logs parsed (locally or on a Ray cluster) into a Parquet dataset.

Contract: ``ingest_dataset(dir, paths, ...)`` writes the same tables as a database ingest,
as Parquet files partitioned by host and date (hive style), one set of files per source,
and commits them by swapping a small manifest (``manifest.py``); ``open_dataset(dir)``
gives a DuckDB connection whose views carry the database's table names, so the rules,
compare, report and ad-hoc SQL run unchanged; ``fleet_summary(con)`` answers per-host and
cross-host questions. Ray and pyarrow filesystems are imported only when used.
"""
from __future__ import annotations

__all__ = ["ingest_dataset", "open_dataset", "fleet_summary", "DatasetResult", "FleetSummary"]


def __getattr__(name: str):
    if name in {"ingest_dataset", "DatasetResult"}:
        from . import driver

        return getattr(driver, name)
    if name == "open_dataset":
        from .views import open_dataset

        return open_dataset
    if name in {"fleet_summary", "FleetSummary"}:
        from . import summary

        return getattr(summary, name)
    raise AttributeError(f"module 'logsleuth.fleet' has no attribute {name!r}")
