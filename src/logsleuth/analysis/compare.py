"""Compare runs side by side: the figures people tune by, and the settings that differ.

Contract: ``compare(con, selectors)`` returns a :class:`CompareResult` of plain data (no
rich, no typer). A selector is a run id, a source file name (with or without its
extension, or its path) or an ingest ``--label``; no selector means every run. Benchmark
runs (bench sources) are folded into the server run that has the same label, otherwise
they keep a column of their own. ``config`` lists only the settings whose values differ
between the server runs (analysis/config_diff.py).

The rows are the table ``METRICS``: one :class:`Metric` per row (key, title, group, unit,
which value is better, and the function that reads it from a loader), or a family that
expands to several rows once the data is known (concurrency bands, benchmark levels,
finding counts). A loader (``LOADERS``) fetches one kind of data for all compared runs
once, from a named query in ``queries/app/`` or a library function. A new figure is one
``Metric`` entry, and a new data source one ``LOADERS`` entry.
Findings come from ``rules.diagnose`` when that module is importable; their absence is
noted, not an error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..db import queries
from ..errors import LogsleuthError, UsageError
from .metric import Metric, Value
from .severity import SEVERITIES
from .config_diff import ConfigRow, Equivalents, config_diff, load_equivalents  # noqa: F401  (re-exported)
from .timeline import startup_phases  # noqa: F401  (re-exported: compare's time to ready falls back on it)
from .selectors import resolve_runs  # noqa: F401  (re-exported: the one resolver)
from .compare_telemetry import LOADERS as TELEMETRY_LOADERS, telemetry_rows

#: concurrency bands by running requests: (label, low, high inclusive; None = open)
BANDS: list[tuple[str, int, int | None]] = [
    ("1", 1, 1), ("2-4", 2, 4), ("5-16", 5, 16), ("17-64", 17, 64), ("65-256", 65, 256), (">256", 257, None),
]


@dataclass
class Column:
    """One column of the comparison: a server run (with the bench runs folded in), or a bench run alone."""

    run_id: int
    name: str
    source: str | None
    label: str | None
    engine: str | None
    kind: str  # "server" | "bench"
    bench_run_ids: list[int] = field(default_factory=list)

    @property
    def run_ids(self) -> list[int]:
        return [self.run_id] + self.bench_run_ids


@dataclass
class Row:
    key: str
    title: str
    group: str
    unit: str | None
    values: list  # aligned with CompareResult.columns
    better: str | None = None  # "higher" | "lower": which value is the better one (for highlighting)


@dataclass
class CompareResult:
    columns: list[Column]
    rows: list[Row]
    config: list[ConfigRow]
    bands: list[str]
    band_samples: dict = field(default_factory=dict)  # column name -> {band: n}
    notes: list[str] = field(default_factory=list)
    findings: list = field(default_factory=list)  # rules.Finding objects for the compared runs

    def value(self, key: str, column: int | str):
        """Value of a metric row for a column given by run id or column name."""
        return _cell(self.rows, lambda r: r.key, key, self._col(column))

    def config_value(self, name: str, column: int | str):
        """Value of a differing setting for a column given by run id or column name."""
        return _cell(self.config, lambda r: r.name, name, self._col(column))

    def _col(self, column: int | str) -> int:
        for i, c in enumerate(self.columns):
            if (isinstance(column, int) and c.run_id == column) or c.name == column:
                return i
        raise KeyError(column)

    def as_dict(self) -> dict:
        runs = []
        for i, c in enumerate(self.columns):
            runs.append({
                "run_id": c.run_id, "name": c.name, "source": c.source, "label": c.label, "engine": c.engine,
                "kind": c.kind, "bench_run_ids": c.bench_run_ids,
                "metrics": {r.key: _jsonable(r.values[i]) for r in self.rows},
                "band_samples": self.band_samples.get(c.name, {}),
                "config": {r.name: _jsonable(r.values[i]) for r in self.config},
            })
        return {
            "runs": runs,
            "metrics": [{"key": r.key, "title": r.title, "group": r.group, "unit": r.unit, "better": r.better}
                        for r in self.rows],
            "config_diff": [{"name": r.name, "title": r.title, "kind": r.kind, "note": r.note,
                             "keys": {c.name: k for c, k in zip(self.columns, r.keys) if k is not None}}
                            for r in self.config],
            "bands": self.bands,
            "notes": self.notes,
        }


def _cell(rows: list, name_of: Callable[[Any], str], name: str, idx: int):
    """``values[idx]`` of the first row called ``name``; KeyError names a missing row."""
    for r in rows:
        if name_of(r) == name:
            return r.values[idx]
    raise KeyError(name)


def _jsonable(v):
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else round(v, 4)
    return v


# --------------------------------------------------------------------------- run selection

# --------------------------------------------------------------------------- loaders

@dataclass
class Context:
    """What the metrics read: the compared columns and the loaded data, each loader run once."""

    con: Any
    columns: list[Column]
    findings: list | None  # None: not counted
    _cache: dict = field(default_factory=dict)

    @property
    def server_ids(self) -> list[int]:
        return [c.run_id for c in self.columns if c.kind == "server"]

    def get(self, loader: str):
        if loader not in self._cache:
            self._cache[loader] = LOADERS[loader](self)
        return self._cache[loader]


def _load_summary(ctx: Context) -> dict[int, dict]:
    run_ids = [i for c in ctx.columns for i in c.run_ids]
    return {r["run_id"]: r for r in queries.rows(ctx.con, "compare_runs", {"run_ids": run_ids})}


def _load_bands(ctx: Context) -> dict:
    """{"medians": {(run_id, band): tok/s}, "samples": {(run_id, band): n}, "observed": [band, ...]}."""
    rows = queries.rows(ctx.con, "compare_bands", {
        "run_ids": ctx.server_ids, "band_labels": [b for b, _, _ in BANDS],
        "band_lows": [lo for _, lo, _ in BANDS], "band_highs": [hi for _, _, hi in BANDS]}) if ctx.server_ids else []
    medians = {(r["run_id"], r["band"]): r["med"] for r in rows}
    return {"medians": medians, "samples": {(r["run_id"], r["band"]): r["n"] for r in rows},
            "observed": [b for b, _, _ in BANDS if any(k[1] == b for k in medians)]}


def _load_bench(ctx: Context) -> dict:
    """{"by_column": {column name: {level: result row}}, "levels": [level, ...]}; the last block per level wins."""
    by_run: dict[int, list[dict]] = {}
    for b in queries.rows(ctx.con, "compare_bench_results", {"run_ids": [i for c in ctx.columns for i in c.run_ids]}):
        by_run.setdefault(b["run_id"], []).append(b)
    by_column = {}
    for c in ctx.columns:
        per = {}
        for rid in c.run_ids:
            for b in by_run.get(rid, []):
                per[_bench_level(b)] = b
        by_column[c.name] = per
    levels = sorted({lv for per in by_column.values() for lv in per}, key=_level_sort)
    return {"by_column": by_column, "levels": levels}


def _load_finding_counts(ctx: Context) -> dict[tuple[int, str], int]:
    """(column run id, severity) -> findings on the column's runs."""
    owner = {i: c.run_id for c in ctx.columns for i in c.run_ids}
    counts: dict[tuple[int, str], int] = {}
    for f in ctx.findings or []:
        rid = owner.get(getattr(f, "run_id", None))
        if rid is not None:
            counts[(rid, f.severity)] = counts.get((rid, f.severity), 0) + 1
    return counts


#: loader name -> function of the context returning its data for every compared run
LOADERS: dict[str, Callable[[Context], Any]] = {
    "summary": _load_summary,  # queries/app/compare_runs.sql: run_summary + runs, by run id
    "timeline": lambda ctx: startup_phases(ctx.con, ctx.server_ids),  # by run id
    "bands": _load_bands,  # queries/app/compare_bands.sql
    "bench": _load_bench,  # queries/app/compare_bench_results.sql
    "finding_counts": _load_finding_counts,
    **TELEMETRY_LOADERS,  # compare_telemetry.py: GPU figures while serving, bench-file latencies
}


# --------------------------------------------------------------------------- the metrics


def _round(v, digits=1):
    if v is None:
        return None
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return None
        return round(v, digits)
    return v


def attr(name: str) -> Value:
    """An attribute of the column itself (every column)."""
    return lambda ctx, c: getattr(c, name)


def loaded(loader: str, name: str, digits: int | None = None, servers_only: bool = True) -> Value:
    """Field ``name`` of the column's run in a loader keyed by run id (rounded to ``digits``)."""
    def value(ctx: Context, c: Column):
        if servers_only and c.kind != "server":
            return None
        v = (ctx.get(loader).get(c.run_id) or {}).get(name)
        return _round(v, digits) if digits is not None else v
    return value


def summary(name: str, digits: int | None = None) -> Value:
    """A run_summary field of a server column."""
    return loaded("summary", name, digits)


def _version(ctx: Context, c: Column):
    r = ctx.get("summary")[c.run_id]
    return r.get("engine_version") or r.get("format_era")


def _gpu(ctx: Context, c: Column) -> str | None:
    r = ctx.get("summary")[c.run_id]
    if c.kind != "server" or not r.get("gpu_name"):
        return None
    n = r.get("gpu_count")
    return f"{n}x {r['gpu_name']}" if n and n > 1 else r["gpu_name"]


def _graph_coverage(ctx: Context, c: Column):
    share = summary("no_graph_share")(ctx, c)
    return None if share is None else round(1 - share, 3)


def _time_to_ready(ctx: Context, c: Column):
    v = summary("time_to_ready_s", 1)(ctx, c)
    if v is None and c.kind == "server":  # vLLM prints no "ready" time: take it from the milestones
        v = loaded("timeline", "ready_s", 1)(ctx, c)
    return v


def _band_rows(ctx: Context) -> list[Metric]:
    """Median generation throughput per band of running requests seen in any run (band 1 is the
    single-stream row)."""
    bands = ctx.get("bands")

    def value(b):
        return lambda ctx, c: _round(bands["medians"].get((c.run_id, b)), 1) if c.kind == "server" else None
    return [Metric(f"gen_tok_s_{_band_key(b)}", f"gen throughput @ {b} running", "throughput", "tok/s", "higher",
                   value(b)) for b in bands["observed"] if b != "1"]


#: per benchmark level: (result field, title, unit, digits, better)
BENCH_FIGURES = [("output_tok_s", "output throughput", "tok/s", 1, "higher"),
                 ("median_ttft_ms", "TTFT median", "ms", 1, "lower"),
                 ("median_tpot_ms", "TPOT median", "ms", 2, "lower"),
                 ("median_itl_ms", "ITL median", "ms", 2, "lower")]


def _bench_rows(ctx: Context) -> list[Metric]:
    """Benchmark results, one block of rows per concurrency level (or request rate)."""
    bench = ctx.get("bench")

    def value(lv, key, digits):
        return lambda ctx, c: _round((bench["by_column"][c.name].get(lv) or {}).get(key), digits)
    return [Metric(f"bench_{_band_key(lv)}_{key}", f"bench {lv}: {title}", "benchmark", unit, better,
                   value(lv, key, digits))
            for lv in bench["levels"] for key, title, unit, digits, better in BENCH_FIGURES]


def _finding_rows(ctx: Context) -> list[Metric]:
    if ctx.findings is None:
        return []
    counts = ctx.get("finding_counts")
    return [Metric(f"findings_{sev}", f"findings: {sev}", "findings", None, None,
                   lambda ctx, c, sev=sev: counts.get((c.run_id, sev), 0)) for sev in SEVERITIES]


#: the rows of the comparison, in order: a Metric, or a function expanding to Metrics
METRICS: list[Metric | Callable[[Context], list[Metric]]] = [
    Metric("run_id", "run id", "run", None, None, attr("run_id")),
    Metric("source", "source", "run", None, None, attr("source")),
    Metric("label", "label", "run", None, None, attr("label")),
    Metric("engine", "engine", "run", None, None, attr("engine")),
    Metric("version", "version", "run", None, None, _version),
    Metric("model", "model", "run", None, None, summary("model")),
    Metric("gpu", "GPU", "run", None, None, _gpu),
    Metric("end_state", "end state", "run", None, None, summary("end_state")),
    Metric("tp_size", "TP", "parallel", None, None, summary("tp_size")),
    Metric("dp_size", "DP", "parallel", None, None, summary("dp_size")),
    Metric("attention_backend", "attention backend", "kernels", None, None, summary("attention_backend")),
    Metric("cuda_graph", "CUDA graphs configured", "kernels", None, None, summary("cuda_graph")),
    Metric("cuda_graph_coverage", "CUDA graph coverage of decode steps", "kernels", "0..1", None, _graph_coverage),
    Metric("spec_method", "speculative method", "speculative", None, None, summary("spec_method")),
    Metric("num_spec_tokens", "speculative tokens/step", "speculative", None, None, summary("num_spec_tokens")),
    Metric("mean_accept_len", "acceptance length", "speculative", "tokens/step", "higher",
           summary("mean_accept_len", 2)),
    Metric("draft_accept_rate", "draft acceptance rate", "speculative", "0..1", "higher",
           summary("draft_accept_rate", 3)),
    Metric("kv_cache_tokens", "KV cache tokens", "memory", "tokens", None, summary("kv_cache_tokens")),
    Metric("weight_load_s", "weight loading", "startup", "s", "lower", summary("weight_load_s", 1)),
    Metric("cuda_graph_capture_s", "CUDA graph capture", "startup", "s", "lower", summary("cuda_graph_capture_s", 1)),
    Metric("time_to_ready_s", "time to ready", "startup", "s", "lower", _time_to_ready),
    Metric("decode_samples", "decode samples", "throughput", None, None, summary("decode_samples")),
    Metric("single_stream_tok_s", "single-stream decode (1 running)", "throughput", "tok/s", "higher",
           summary("single_stream_tok_s", 1)),
    _band_rows,
    Metric("peak_gen_tok_s", "peak gen throughput", "throughput", "tok/s", "higher", summary("peak_gen_tok_s", 1)),
    _bench_rows,
    telemetry_rows,  # compare_telemetry.py: GPU utilisation/power while serving, TTFT/ITL p50/p99 per concurrency
    _finding_rows,
]


def expand_metrics(ctx: Context, table: list | None = None) -> list[Metric]:
    out: list[Metric] = []
    for entry in METRICS if table is None else table:
        out.extend([entry] if isinstance(entry, Metric) else entry(ctx))
    return out


# --------------------------------------------------------------------------- compare

def _load_findings(con, run_ids: list[int], notes: list[str]):
    try:
        from .rules import diagnose
    except ImportError:
        notes.append("findings not counted: the rules module is not available")
        return None
    try:
        return diagnose(con, run_ids=run_ids)
    except LogsleuthError as exc:
        notes.append(f"findings not counted: {exc}")
        return None


def compare(con, selectors: Iterable[str | int] | None = None, *, findings: bool | list = True,
            equivalents: Equivalents | None = None) -> CompareResult:
    """Compare the selected runs. ``findings``: True to run the rules, False to skip them, or a
    list of already computed ``Finding`` objects."""
    run_ids = resolve_runs(con, selectors)
    if not run_ids:
        raise UsageError("no runs in the database", hint="run `logsleuth ingest FILE` first")
    # benchmark runs labelled like a selected server run come along with it
    run_ids += [r["run_id"] for r in queries.rows(con, "compare_bench_companions", {"run_ids": run_ids})
                if r["run_id"] not in run_ids]
    eq = equivalents or load_equivalents()
    notes: list[str] = []
    ctx = Context(con=con, columns=[], findings=None)
    ctx._cache["summary"] = info = {r["run_id"]: r for r in queries.rows(con, "compare_runs", {"run_ids": run_ids})}
    ctx.columns = _columns(run_ids, info)
    if findings is True:
        ctx.findings = _load_findings(con, [i for c in ctx.columns for i in c.run_ids], notes)
    elif findings:
        ctx.findings = list(findings)
    rows = [Row(key=m.key, title=m.title, group=m.group, unit=m.unit, values=[m.value(ctx, c) for c in ctx.columns],
                better=m.better) for m in expand_metrics(ctx)]
    bands = ctx.get("bands")
    band_samples = {c.name: {b: bands["samples"][(c.run_id, b)] for b in bands["observed"]
                             if (c.run_id, b) in bands["samples"]} for c in ctx.columns}
    config = config_diff(con, ctx.columns, info, eq)
    if len(ctx.server_ids) < 2:
        notes.append("fewer than two server runs: no configuration differences to show")
    return CompareResult(columns=ctx.columns, rows=rows, config=config, bands=bands["observed"],
                         band_samples=band_samples, notes=notes, findings=list(ctx.findings or []))


def _columns(run_ids: list[int], info: dict) -> list[Column]:
    """Server runs first (in selection order), then bench runs: folded into the server run of their
    label that served last, else a column of their own."""
    def is_bench(rid: int) -> bool:
        return info[rid]["engine"] == "bench" or info[rid]["source_kind"] == "bench"

    def column(rid: int, kind: str) -> Column:
        r = info[rid]
        return Column(run_id=rid, name="", source=r["source_name"], label=r["label"], engine=r["engine"], kind=kind)

    columns = [column(rid, "server") for rid in run_ids if rid in info and not is_bench(rid)]
    for rid in (rid for rid in run_ids if rid in info and is_bench(rid)):
        label = info[rid]["label"]
        targets = [c for c in columns if c.kind == "server" and label and c.label == label]
        if targets:
            target = sorted(targets, key=lambda c: (info[c.run_id]["end_state"] == "served", c.run_id))[-1]
            target.bench_run_ids.append(rid)
        else:
            columns.append(column(rid, "bench"))
    _name_columns(columns)
    return columns


def _name_columns(columns: list[Column]) -> None:
    """Short unique names: the label, else the source file stem; run id added where needed."""
    base = {}
    for c in columns:
        stem = (c.source or f"run{c.run_id}")
        if "." in stem:
            stem = stem.rsplit(".", 1)[0]
        base[c.run_id] = c.label or stem
    counts: dict[str, int] = {}
    for c in columns:
        counts[base[c.run_id]] = counts.get(base[c.run_id], 0) + 1
    for c in columns:
        b = base[c.run_id]
        c.name = b if counts[b] == 1 else f"{b}#{c.run_id}"


# --------------------------------------------------------------------------- bands and levels

def band_of(running: int | None) -> str | None:
    if running is None:
        return None
    for label, lo, hi in BANDS:
        if running >= lo and (hi is None or running <= hi):
            return label
    return None


def _band_key(b: str) -> str:
    return b.replace(">", "gt").replace("-", "_").replace("=", "").replace(" ", "").replace(".", "_")


def _bench_level(b: dict) -> str:
    mc = b.get("max_concurrency")
    if mc is not None and not (isinstance(mc, float) and (math.isinf(mc) or math.isnan(mc))):
        return f"C={int(mc) if float(mc).is_integer() else mc}"
    rr = b.get("request_rate")
    if rr is not None and not (isinstance(rr, float) and (math.isinf(rr) or math.isnan(rr))):
        return f"rate={rr:g}"
    return "C=?"


def _level_sort(lv: str):
    try:
        return (0 if lv.startswith("C=") else 1, float(lv.split("=", 1)[1]))
    except ValueError:
        return (2, 0.0)
