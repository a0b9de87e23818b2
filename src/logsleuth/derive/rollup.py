"""The per-run rollup: aggregates several readers need, computed once per run at ingest.

Contract: ``build_rollup(con, run_ids)`` (re)writes the ``run_rollup`` rows of ``run_ids``
with one set-based statement (queries/derive/rollup.sql) plus two deletes: the rows of those
runs, and rows whose run no longer exists (an append or a re-derivation renumbered them). It
runs after the runs' tables are complete (``decode_primary`` copied, spec rows normalised),
at the end of run derivation; an append that grows runs calls it again through the same path.
The same call finds each run's saturated stretches (``queue_stretches``, queries/derive/
queue_stretches.sql, with the thresholds of queue_stretches.toml, recorded in the rollup row).
``run_summary`` (queries/views/run_summary.sql) and the rules read these rows instead of
aggregating ``decode_primary``, ``spec_stats``, ``errors`` and every line of every run on
each read: a diagnose on a multi-GB database reads a few rows per run for them.
"""
from __future__ import annotations

from .sql import data, sql


def build_rollup(con, run_ids) -> None:
    """Write the ``run_rollup`` rows of ``run_ids`` (any iterable of run ids; none: no-op)."""
    ids = sorted({int(r) for r in run_ids if r is not None})
    for table in ("run_rollup", "queue_stretches"):
        con.execute(f"DELETE FROM {table} WHERE run_id NOT IN (SELECT run_id FROM runs)")
    if not ids:
        return
    for table in ("run_rollup", "queue_stretches"):
        con.execute(f"DELETE FROM {table} WHERE list_contains($run_ids, run_id)", {"run_ids": ids})
    con.execute("INSERT INTO run_rollup BY NAME " + sql("rollup"), {"run_ids": ids})
    limits = data("queue_stretches")
    params = {"run_ids": ids, "kv_full": float(limits["kv_full"]), "kv_busy_at_cap": float(limits["kv_busy_at_cap"])}
    con.execute("INSERT INTO queue_stretches BY NAME " + sql("queue_stretches"), params)
    con.execute("UPDATE run_rollup SET stretch_kv_full = $kv_full, stretch_kv_busy = $kv_busy_at_cap "
                "WHERE list_contains($run_ids, run_id)", params)


def missing_runs(con) -> list[int]:
    """Runs without a rollup row (a database written before the rollup existed)."""
    return [r[0] for r in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollup) ORDER BY run_id").fetchall()]
