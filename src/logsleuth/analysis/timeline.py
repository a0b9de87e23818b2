"""The startup timeline of a run: its phases (init, weights, compile, KV cache, graph capture,
ready) with start and end seconds from the run's start, for ``show``, ``compare`` and the report.

Contract: ``startup_phases(con, run_ids)`` -> ``{run_id: {"phases": [{"phase", "start_s", "end_s"}],
"ready_s", "approximate", "started_at"}}``. Built from the timestamped milestones of rank 0 (any
rank when rank 0 has none): each milestone ends a segment of its phase. Runs whose milestones carry
no timestamps get consecutive bars from the durations in ``runs`` (``approximate`` is then true).
The SQL is queries/app/timeline_*.sql.
"""
from __future__ import annotations

from ..db import queries

#: milestone kind -> the phase that the milestone ends
PHASE_OF = {
    "dist_init_begin": "init", "weights_begin": "init",
    "weights_loaded": "weights", "weights_load_time": "weights",
    "dynamo_transform": "compile", "compile_graph": "compile", "torch_compile": "compile",
    "kv_cache_memory": "KV cache", "kv_cache_allocated": "KV cache", "kv_cache_tokens": "KV cache",
    "kv_blocks": "KV cache", "memory_pool_end": "KV cache",
    "cuda_graph_begin": "KV cache", "cuda_graph_draft_begin": "KV cache",
    "cuda_graph_end": "graph capture", "cuda_graph_draft_end": "graph capture",
    "init_engine": "ready", "app_startup_complete": "ready", "api_server_start": "ready", "server_ready": "ready",
}
#: the milestones that say the server is ready; the last one seen wins (SGLang's "ready to roll"
#: follows uvicorn's startup line)
READY_KINDS = ("server_ready", "api_server_start", "app_startup_complete")


def startup_phases(con, run_ids: list[int]) -> dict[int, dict]:
    """Startup timeline per run (see the module docstring)."""
    if not run_ids:
        return {}
    runs = {r["run_id"]: r for r in queries.rows(con, "timeline_runs", {"run_ids": list(run_ids)})}
    by_run: dict[int, list[dict]] = {}
    for e in queries.rows(con, "timeline_events", {"run_ids": list(run_ids), "kinds": list(PHASE_OF)}):
        by_run.setdefault(e["run_id"], []).append(e)
    return {rid: _timeline(runs[rid], by_run.get(rid, [])) for rid in run_ids if rid in runs}


def _timeline(run: dict, events: list[dict]) -> dict:
    if any(e["rank0"] for e in events):
        events = [e for e in events if e["rank0"]]
    t0 = run["started_at"] or (events[0]["ts"] if events else None)
    if events and t0 is not None:
        phases, ready_s = _phases_from_milestones(events, t0)
        approximate = False
    else:
        phases, ready_s = _phases_from_durations(run), None
        approximate = bool(phases)
    if ready_s is None and run["time_to_ready_s"] is not None:
        ready_s = float(run["time_to_ready_s"])
    if ready_s is not None:  # the timeline ends when the server is ready
        phases = [p for p in phases if p["start_s"] < ready_s or p["phase"] == "ready"]
    for p in phases:
        p["start_s"], p["end_s"] = round(p["start_s"], 3), round(p["end_s"], 3)
    return {"phases": phases, "ready_s": None if ready_s is None else round(ready_s, 3),
            "approximate": approximate, "started_at": t0}


def _phases_from_milestones(events: list[dict], t0) -> tuple[list[dict], float | None]:
    """Each milestone ends a segment of its phase; consecutive segments of one phase merge."""
    phases: list[dict] = []
    ready_s = None
    prev = 0.0
    for e in events:
        t = (e["ts"] - t0).total_seconds()
        if t < prev:  # a milestone of another rank printed late: no going back in time
            continue
        phase = PHASE_OF[e["kind"]]
        if t > prev:
            if phases and phases[-1]["phase"] == phase and phases[-1]["end_s"] == prev:
                phases[-1]["end_s"] = t
            else:
                phases.append({"phase": phase, "start_s": prev, "end_s": t})
        prev = t
        if e["kind"] in READY_KINDS:
            ready_s = t
    return phases, ready_s


def _phases_from_durations(run: dict) -> list[dict]:
    """Consecutive bars from the durations of the runs table (milestones without timestamps)."""
    phases: list[dict] = []
    t = 0.0
    for phase, d in (("weights", run["weight_load_s"]), ("graph capture", run["cuda_graph_capture_s"])):
        if d:
            phases.append({"phase": phase, "start_s": t, "end_s": t + float(d)})
            t += float(d)
    return phases
