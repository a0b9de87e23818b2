"""The per-run rollup: aggregates several readers need, computed once per run at ingest.

Contract: ``build_rollup(con, run_ids)`` (re)writes the ``run_rollup`` rows of ``run_ids``
with one set-based statement (queries/derive/rollup.sql) plus two deletes: the rows of those
runs, and rows whose run no longer exists (an append or a re-derivation renumbered them). It
runs after the runs' tables are complete (``decode_primary`` copied, spec rows normalised),
at the end of run derivation; an append that grows runs calls it again through the same path.
``run_summary`` (queries/views/run_summary.sql) and the rules read these rows instead of
aggregating ``decode_primary``, ``spec_stats``, ``errors`` and every line of every run on
each read: a diagnose on a multi-GB database reads a few rows per run for them.
"""
from __future__ import annotations

from .sql import sql


def build_rollup(con, run_ids) -> None:
    """Write the ``run_rollup`` rows of ``run_ids`` (any iterable of run ids; none: no-op)."""
    ids = sorted({int(r) for r in run_ids if r is not None})
    con.execute("DELETE FROM run_rollup WHERE run_id NOT IN (SELECT run_id FROM runs)")
    if not ids:
        return
    con.execute("DELETE FROM run_rollup WHERE list_contains($run_ids, run_id)", {"run_ids": ids})
    con.execute("INSERT INTO run_rollup BY NAME " + sql("rollup"), {"run_ids": ids})


def missing_runs(con) -> list[int]:
    """Runs without a rollup row (a database written before the rollup existed)."""
    return [r[0] for r in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollup) ORDER BY run_id").fetchall()]
