"""The hardware of runs: GPU (or NPU) context from environment reports and log hints.

Contract: ``gpu_contexts(con, runs, explicit, env_files)`` returns, for each (run_id,
source_id) of ``runs``, the runs-row fields ``gpu_name``, ``gpu_count``, ``gpu_cc``,
``gpu_sm``, ``gpu_vendor``, ``gpu_memory_gib``, ``gpu_interconnect`` and ``gpu_source``, with a
fixed number of statements for any number of runs: the environment reports given with
``--env`` (else the ones nearest to each log by folder), the hint lines of each run (parsers/
env_reports.toml [hints] prefilter) and Huawei Ascend evidence (queries/derive/npu_evidence.sql),
resolved by gpus/resolve.py. ``store_env_report`` keeps an environment report's facts;
``refresh_gpu_for_directory`` recomputes the context of the runs a newly arrived report is
nearest to.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ..gpus import env_report, hints as gpu_hints
from ..gpus.resolve import resolve_gpu
from .sql import run_set

GPU_COLUMNS = ["gpu_name", "gpu_count", "gpu_cc", "gpu_sm", "gpu_vendor", "gpu_memory_gib", "gpu_interconnect",
               "gpu_source"]


def store_env_report(con, source_id, src) -> None:
    text = src.real_path.read_bytes()[: 4 * 1024 * 1024]
    if src.compressed:
        import gzip

        text = gzip.decompress(src.real_path.read_bytes())[: 4 * 1024 * 1024]
    facts = env_report.parse_env_report(text.decode("utf-8", "replace"))
    con.execute(
        "INSERT INTO env_reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [source_id, facts.kind, facts.vendor, facts.gpu_name, facts.gpu_count, facts.compute_capability,
         facts.sm, facts.memory_gib, facts.interconnect, facts.driver_version, facts.cuda_version,
         facts.torch_version, facts.torch_cuda, facts.nccl_version, json.dumps(facts.engine_versions),
         json.dumps(facts.env)])
    con.execute("UPDATE sources SET engine = 'env' WHERE source_id = ?", [source_id])


def report_distance(log_folder: Path, report_folder: Path) -> float | None:
    """How near an environment report is to a log: its own folder (0), a subfolder of it such as
    ``env/`` (0.5), an ancestor (1, 2, ...); None when the report lives elsewhere (a sibling
    folder of logs from other machines says nothing about this log's)."""
    anc = [log_folder, *log_folder.parents]
    if report_folder in anc:
        return float(anc.index(report_folder))
    if report_folder.parent == log_folder:
        return 0.5
    return None


def _reports(con) -> list:
    return con.execute("""SELECT e.kind, e.vendor, e.gpu_name, e.gpu_count, e.gpu_cc, e.gpu_sm, e.gpu_memory_gib,
                                 e.interconnect, e.torch_cuda, e.nccl_version, e.env, s.path
                          FROM env_reports e JOIN sources s USING (source_id) ORDER BY s.source_id""").fetchall()


def nearest_reports(reports: list, path: str, env_files=()) -> list:
    """The environment reports given with --env (when any), else the ones nearest to a log
    (all at the smallest distance). ``reports``: rows of every stored report."""
    if env_files:
        wanted = {str(Path(f).resolve()) for f in env_files}
        return [row for row in reports if str(Path(row[11]).resolve()) in wanted]
    folder = Path(path).resolve().parent if path else None
    scored = []
    for row in reports:
        d = report_distance(folder, Path(row[11]).resolve().parent) if folder else None
        if d is not None:
            scored.append((d, row))
    if not scored:
        return []
    best = min(d for d, _ in scored)
    return [row for d, row in scored if d == best]


def _facts(rows: list) -> list:
    return [env_report.EnvFacts(kind=row[0], vendor=row[1], gpu_name=row[2], gpu_count=row[3],
                                compute_capability=row[4], sm=row[5], memory_gib=row[6], interconnect=row[7],
                                torch_cuda=row[8], nccl_version=row[9], env=json.loads(row[10] or "{}"))
            for row in rows]


def gpu_contexts(con, runs: list[tuple[int, int]], explicit, env_files=()) -> dict[int, dict]:
    """run_id -> GPU fields of the runs row, for each (run_id, source_id) of ``runs``."""
    if not runs:
        return {}
    run_ids = [rid for rid, _ in runs]
    source_ids = sorted({sid for _, sid in runs})
    paths = dict(run_set(con, "", sources=source_ids, text="SELECT source_id, path FROM sources WHERE {sources}"))
    reports = _reports(con)
    by_folder: dict = {}  # the logs of one folder share their nearest reports
    near = {}
    for sid in source_ids:
        path = paths.get(sid) or ""
        if not reports:
            near[sid] = []
            continue
        key = Path(path).resolve().parent if path else None
        if key not in by_folder:
            by_folder[key] = nearest_reports(reports, path, env_files)
        near[sid] = by_folder[key]
    likes = gpu_hints.prefilter_likes()  # parsers/env_reports.toml [hints] prefilter
    lines: dict[int, list[str]] = {}
    for rid, raw in run_set(con, "gpu_hint_lines", runs=run_ids,
                            fmt={"likes": " OR ".join("raw LIKE ?" for _ in likes)}, params=likes):
        lines.setdefault(rid, []).append(raw)
    npu = {} if explicit else {rid: (name, how) for rid, name, how in run_set(con, "npu_evidence", runs=run_ids)}
    out = {}
    for rid, sid in runs:
        ctx = resolve_gpu(explicit, _facts(near[sid]), gpu_hints.gpu_hints_from_text(lines.get(rid, [])))
        if rid in npu:  # Huawei Ascend NPUs are named as the log names them, never guessed as a GPU vendor
            name, how = npu[rid]
            ctx.vendor = "ascend"
            ctx.name = name or (ctx.name if ctx.name and "ascend" in ctx.name.lower() else "Huawei Ascend NPU")
            ctx.cc = ctx.sm = None
            ctx.source = f"log_hint:npu ({how})"
        source = ctx.source
        if source and source.startswith("env_report"):  # say which report, so the attachment is visible
            source += " from " + ", ".join(sorted({row[11] for row in near[sid]})) + \
                (" (--env)" if env_files else " (nearest by folder)")
        out[rid] = {"gpu_name": ctx.name, "gpu_count": ctx.count, "gpu_cc": ctx.cc, "gpu_sm": ctx.sm,
                    "gpu_vendor": ctx.vendor, "gpu_memory_gib": ctx.memory_gib, "gpu_interconnect": ctx.interconnect,
                    "gpu_source": source}
    return out


def refresh_gpu_for_directory(con, report_path: str, explicit) -> None:
    """An environment report arrived: recompute the GPU context of runs whose logs it is
    nearest to (same folder, an ancestor's, or a sibling subfolder such as env/)."""
    report_folder = Path(report_path).resolve().parent
    near = {sid for sid, path in con.execute(
        "SELECT source_id, path FROM sources WHERE source_id IN (SELECT source_id FROM runs)").fetchall()
        if report_distance(Path(path).resolve().parent, report_folder) is not None}  # once per source, not per run
    runs = [(run_id, source_id) for run_id, source_id in
            con.execute("SELECT run_id, source_id FROM runs ORDER BY run_id").fetchall() if source_id in near]
    if not runs:
        return
    ctx = gpu_contexts(con, runs, explicit)
    ids = [rid for rid, _ in runs]
    frame = pl.DataFrame({"run_id": ids, **{c: [ctx[r][c] for r in ids] for c in GPU_COLUMNS}},
                         schema={"run_id": pl.Int64, "gpu_name": pl.Utf8, "gpu_count": pl.Int64, "gpu_cc": pl.Utf8,
                                 "gpu_sm": pl.Utf8, "gpu_vendor": pl.Utf8, "gpu_memory_gib": pl.Float64,
                                 "gpu_interconnect": pl.Utf8, "gpu_source": pl.Utf8})
    sets = ", ".join(f"{c} = g.{c}" for c in GPU_COLUMNS)
    run_set(con, "", runs=ids, frames={"derive_gpu": frame},
            text=f"UPDATE runs SET {sets} FROM derive_gpu g WHERE {{runs@runs}} AND runs.run_id = g.run_id")
