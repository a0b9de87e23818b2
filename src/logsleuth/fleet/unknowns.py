"""What the fleet view does not know, said once per kind with the hosts and how to give it.

Contract: ``unknowns(runs)`` (``runs`` as ``peers.peer_groups`` returns them) returns one dict per
kind of missing fact that concerns at least one host: ``what`` (gpu, date, host), ``hosts`` (sorted),
``n_hosts``, ``why`` (what the logs lack) and ``how`` (the option or report that supplies it).
An unknown GPU still groups peers (hosts whose GPU is unknown are peers of each other when the
rest of their configuration agrees), but the view says the grouping could not check it.
"""
from __future__ import annotations

UNKNOWN_HOST = "unknown"

HOW = {
    "gpu": "name it at ingest: `logsleuth ingest --dataset DIR --gpu 'H100 80GB' FILES` (one call per GPU type), "
           "or, for a database, an environment report beside the logs or `ingest --env nvidia-smi.txt`",
    "date": "vLLM prints no year and some logs no date: give it at ingest with --year YEAR; a log "
            "without any timestamp is filed under its file's modification day",
    "host": "the log names no host: give it at ingest with --host NAME or --host-from '{host}/*.log'",
}
WHY = {
    "gpu": "no log line, environment report or --gpu names the GPU",
    "date": "the year (or the whole date) was taken from the file's modification time",
    "host": "neither --host, --host-from nor a line of the log named the host",
}


def _date_unknown(r: dict) -> bool:
    basis = r.get("year_basis") or ""
    return r.get("started_at") is None or basis.startswith("file mtime")


def unknowns(runs: list[dict]) -> list[dict]:
    by_host: dict[str, list[dict]] = {}
    for r in runs:
        by_host.setdefault(r["host"], []).append(r)
    missing = {
        "gpu": [h for h, rs in by_host.items() if not any(r.get("gpu_name") for r in rs)],
        "date": [h for h, rs in by_host.items() if any(_date_unknown(r) for r in rs)],
        "host": [h for h in by_host if h == UNKNOWN_HOST],
    }
    return [{"what": k, "hosts": sorted(v), "n_hosts": len(v), "of_hosts": len(by_host), "why": WHY[k], "how": HOW[k]}
            for k, v in missing.items() if v]
