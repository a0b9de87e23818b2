"""Telemetry figures for compare and the report (the SQL is queries/app/telemetry_*.sql).

Contract: ``gpu_figures(con, run_ids)`` -> {run_id: {gpu_util_serving (0..1),
power_w_serving (W per GPU), gpu_samples_serving, gpus, gpu_tools}};
``bench_latency(con, run_ids)`` -> {run_id: [{max_concurrency, ttft_p50_ms, ttft_p99_ms,
itl_p50_ms, itl_p99_ms, ...}, ...]} (one entry per bench result, by concurrency);
``overlay(con, run_ids)`` -> {run_id: {series: [(seconds since the run's first point,
value), ...]}} for series gpu_util, sm_clock_mhz, power_w, decode_tok_s on one time axis.
Runs without telemetry are absent. Nothing here renders.
"""
from __future__ import annotations

from ..db import queries

OVERLAY_SERIES = ("gpu_util", "sm_clock_mhz", "power_w", "decode_tok_s")


def gpu_figures(con, run_ids: list[int]) -> dict[int, dict]:
    return {r.pop("run_id"): r for r in queries.rows(con, "telemetry_figures", {"run_ids": list(run_ids)})}


def bench_latency(con, run_ids: list[int]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in queries.rows(con, "telemetry_bench_latency", {"run_ids": list(run_ids)}):
        out.setdefault(r.pop("run_id"), []).append(r)
    return out


def overlay(con, run_ids: list[int]) -> dict[int, dict[str, list[tuple[float, float]]]]:
    rows = queries.rows(con, "telemetry_overlay", {"run_ids": list(run_ids)})
    starts: dict[int, object] = {}
    for r in rows:
        t0 = starts.get(r["run_id"])
        starts[r["run_id"]] = r["ts"] if t0 is None or r["ts"] < t0 else t0
    out: dict[int, dict[str, list]] = {}
    for r in rows:
        x = (r["ts"] - starts[r["run_id"]]).total_seconds()
        out.setdefault(r["run_id"], {}).setdefault(r["series"], []).append((x, float(r["value"])))
    # only runs with GPU telemetry overlay anything (decode throughput alone is charted elsewhere)
    return {run: s for run, s in out.items() if any(k != "decode_tok_s" for k in s)}


#: overlay series -> legend label (with {peak} filled in) and colour
OVERLAY_STYLE = {
    "gpu_util": ("GPU utilisation (% busy)", "#2f6fdf"),
    "sm_clock_mhz": ("SM clock (% of {peak:,.0f} MHz)", "#d9822b"),
    "power_w": ("GPU power (% of {peak:,.0f} W)", "#c23b3b"),
    "decode_tok_s": ("decode throughput (% of {peak:,.1f} tok/s)", "#2e9e5b"),
}


def overlay_percent(series: dict[str, list[tuple[float, float]]]) -> list[tuple[str, str, list[tuple[float, float]]]]:
    """The overlay on one percent axis: (legend label, colour, points) per series present.
    Utilisation is already a share (x100); clocks, power and throughput are shown as a
    percentage of the run's own peak, named in the label, so that one axis carries four units
    and a dip in one lines up in time with the others."""
    out = []
    for key in OVERLAY_SERIES:
        pts = series.get(key) or []
        if not pts:
            continue
        if key == "gpu_util":
            out.append((OVERLAY_STYLE[key][0], OVERLAY_STYLE[key][1], [(x, 100.0 * y) for x, y in pts]))
            continue
        peak = max(y for _, y in pts)
        if peak <= 0:
            continue
        label, colour = OVERLAY_STYLE[key]
        out.append((label.format(peak=peak), colour, [(x, 100.0 * y / peak) for x, y in pts]))
    return out
