"""Telemetry rows of ``logsleuth compare`` (entries of analysis/compare.py's METRICS table).

Contract: ``LOADERS`` (``telemetry_gpu``, ``telemetry_bench``) fetch, once per compare, the
figures of telemetry/loaders.py for the compared server runs; ``telemetry_rows(ctx)``
expands to the rows that have data in at least one run: mean GPU utilisation and power per
GPU while serving, then client-side TTFT and ITL p50/p99 per concurrency from the bench
result files linked to each run. No telemetry anywhere: no rows.
"""
from __future__ import annotations

import math

from ..telemetry.loaders import bench_latency, gpu_figures
from .metric import Metric

LOADERS = {
    "telemetry_gpu": lambda ctx: gpu_figures(ctx.con, ctx.server_ids),  # queries/app/telemetry_figures.sql
    "telemetry_bench": lambda ctx: bench_latency(ctx.con, ctx.server_ids),  # queries/app/telemetry_bench_latency.sql
}

#: bench file figure -> (title, digits)
BENCH_LATENCY = [("ttft_p50_ms", "TTFT p50", 1), ("ttft_p99_ms", "TTFT p99", 1),
                 ("itl_p50_ms", "ITL p50", 2), ("itl_p99_ms", "ITL p99", 2)]


def _level(row: dict) -> str:
    c = row.get("max_concurrency")
    if c is not None and math.isfinite(c):
        return f"c={int(c)}"
    rate = row.get("request_rate")
    return f"rate={rate:g}/s" if rate is not None and math.isfinite(rate) else "rate=inf"


def _round(v, digits):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else round(v, digits)


def telemetry_rows(ctx) -> list:
    gpu, bench = ctx.get("telemetry_gpu"), ctx.get("telemetry_bench")
    rows = []

    def gpu_value(key, digits):
        return lambda ctx, c: _round((gpu.get(c.run_id) or {}).get(key), digits) if c.kind == "server" else None
    if gpu:
        rows += [Metric("gpu_util_serving", "GPU utilisation while serving", "telemetry", "0..1", "higher",
                        gpu_value("gpu_util_serving", 3)),
                 Metric("gpu_power_w_serving", "GPU power while serving (per GPU)", "telemetry", "W", None,
                        gpu_value("power_w_serving", 1))]
    by_level: dict[int, dict[str, dict]] = {}
    for run_id, results in bench.items():
        for r in results:  # the last result per level wins, as for the log's bench blocks
            by_level.setdefault(run_id, {})[_level(r)] = r
    levels = sorted({lv for per in by_level.values() for lv in per},
                    key=lambda lv: (not lv.startswith("c="), float(lv.split("=")[1].rstrip("/s")) if
                                    lv.split("=")[1] not in ("inf", "inf/s") else math.inf))

    def bench_value(lv, key, digits):
        return lambda ctx, c: _round(((by_level.get(c.run_id) or {}).get(lv) or {}).get(key), digits) \
            if c.kind == "server" else None
    rows += [Metric(f"telemetry_bench_{lv.replace('=', '').replace('/s', '').replace('.', '_')}_{key}",
                    f"bench file {lv}: {title}", "telemetry", "ms", "lower", bench_value(lv, key, digits))
             for lv in levels for key, title, digits in BENCH_LATENCY]
    return rows
