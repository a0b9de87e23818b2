"""Compare runs side by side: the figures people tune by, and the settings that differ.

Contract: ``compare(con, selectors)`` returns a :class:`CompareResult` of plain data (no
rich, no typer). A selector is a run id, a source file name (with or without its
extension, or its path) or an ingest ``--label``; no selector means every run. Benchmark
runs (bench sources) are folded into the server run that has the same label, otherwise
they keep a column of their own. ``config`` lists only the settings whose values differ
between the server runs, under canonical names taken from
``queries/reports/config_equivalents.toml`` (SGLang and vLLM spellings of one setting
share a row). ``startup_phases(con, run_ids)`` gives the startup timeline of each run
(phases with start and end seconds from the run's start) for ``show`` and ``report``.
Findings come from ``rules.diagnose`` when that module is importable; their absence is
noted, not an error.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import LogsleuthError, UsageError
from ..resources import data_path

#: concurrency bands by running requests: (label, low, high inclusive; None = open)
BANDS: list[tuple[str, int, int | None]] = [
    ("1", 1, 1), ("2-4", 2, 4), ("5-16", 5, 16), ("17-64", 17, 64), ("65-256", 65, 256), (">256", 257, None),
]
SEVERITIES = ("critical", "warning", "info")
_MISSING = object()  # a key the run's config does not carry at all
# explicit settings beat resolved ones beat the environment
_ORIGIN_RANK = {"server_args": 0, "cli_args": 0, "engine_config": 1, "env": 2}


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
class ConfigRow:
    name: str  # canonical name (or the raw key / env variable name)
    title: str
    kind: str  # "setting" | "env" | "raw"
    values: list  # display-ready plain values aligned with the columns; None = not set / unknown
    keys: list  # the raw config key each value came from (None where there is none)
    note: str | None = None


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
        idx = self._col(column)
        for r in self.rows:
            if r.key == key:
                return r.values[idx]
        raise KeyError(key)

    def config_value(self, name: str, column: int | str):
        idx = self._col(column)
        for r in self.config:
            if r.name == name:
                return r.values[idx]
        raise KeyError(name)

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


def _jsonable(v):
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else round(v, 4)
    return v


# --------------------------------------------------------------------------- run selection

def resolve_runs(con, selectors: Iterable[str | int] | None = None) -> list[int]:
    """Run ids for the selectors, in the order given (duplicates dropped); all runs if none."""
    rows = con.execute("""SELECT r.run_id, r.label, s.name, s.path, s.label
                          FROM runs r JOIN sources s USING (source_id) ORDER BY r.run_id""").fetchall()
    sels = [s for s in (selectors or []) if s is not None and str(s).strip() != ""]
    if not sels:
        return [r[0] for r in rows]
    out: list[int] = []
    for sel in sels:
        text = str(sel).strip()
        hits: list[int] = []
        if text.isdigit():
            hits = [r[0] for r in rows if r[0] == int(text)]
        if not hits:
            base = Path(text).name
            for run_id, rlabel, name, path, slabel in rows:
                name = name or ""
                if text in (rlabel, slabel) or base == name or text == path or (
                        name and "." in name and base == name.rsplit(".", 1)[0]) or (
                        path and Path(path).name == base):
                    hits.append(run_id)
        if not hits:
            raise UsageError(f"no run matches '{text}'",
                             hint="name a run id, a source file name or a --label; see `logsleuth runs`")
        out.extend(h for h in hits if h not in out)
    return out


# --------------------------------------------------------------------------- equivalents

@dataclass
class Setting:
    name: str
    title: str
    keys: list[str]
    inverted: list[str]
    runs_column: str | None
    kind: str
    note: str | None


@dataclass
class Equivalents:
    settings: list[Setting]
    env_prefixes: list[str]
    env_keys: set[str]
    ignore: set[str]

    def mapped_keys(self) -> set[str]:
        return {k for s in self.settings for k in s.keys + s.inverted}

    def is_env(self, key: str) -> bool:
        return key in self.env_keys or any(key.startswith(p) for p in self.env_prefixes)


def load_equivalents(path: str | Path | None = None) -> Equivalents:
    p = Path(path) if path else data_path("queries/reports/config_equivalents.toml")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LogsleuthError(f"{p}: cannot read the config equivalents ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise LogsleuthError(f"{p.name}: not valid TOML: {exc}") from None
    settings = []
    for name, s in (data.get("settings") or {}).items():
        kind = s.get("kind", "str")
        if kind not in ("bool", "int", "float", "str"):
            raise LogsleuthError(f"{p.name}: settings.{name}.kind '{kind}' is not bool, int, float or str")
        if not s.get("keys") and not s.get("inverted"):
            raise LogsleuthError(f"{p.name}: settings.{name} has neither keys nor inverted")
        settings.append(Setting(name=name, title=s.get("title", name), keys=list(s.get("keys", [])),
                                inverted=list(s.get("inverted", [])), runs_column=s.get("runs_column"),
                                kind=kind, note=s.get("note")))
    env = data.get("env") or {}
    return Equivalents(settings=settings, env_prefixes=list(env.get("prefixes", [])),
                       env_keys=set(env.get("keys", [])), ignore=set((data.get("ignore") or {}).get("keys", [])))


_NULLS = {"", "none", "null", "nil"}


def _norm(value, kind: str):
    """Normalised value (for display and JSON) of a config string; None for unset/None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and kind in ("int", "float"):
        return _norm(str(value), kind)
    text = str(value).strip().strip("'\"")
    low = text.lower()
    if low in _NULLS:
        return None
    if kind == "bool":
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        return text
    if kind in ("int", "float"):
        try:
            f = float(text.replace(",", ""))
        except ValueError:
            return text
        if kind == "int" and f.is_integer():
            return int(f)
        return round(f, 6)
    if kind == "raw":
        if low in ("true", "false"):
            return low == "true"
        try:
            f = float(text)
            return int(f) if f.is_integer() and "." not in text and "e" not in low else f
        except ValueError:
            return text
    return text


def _cmp_key(v):
    if v is _MISSING:
        return ("<missing>",)
    if isinstance(v, str):
        return ("s", v.lower())
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    return ("o", repr(v))


# --------------------------------------------------------------------------- compare

def _q(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def _round(v, digits=1):
    if v is None:
        return None
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return None
        return round(v, digits)
    return v


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
    labels = [r[0] for r in con.execute(
        """SELECT DISTINCT r.label FROM runs r JOIN sources s USING (source_id)
           WHERE list_contains(?, r.run_id) AND r.label IS NOT NULL
             AND r.engine IS DISTINCT FROM 'bench' AND s.kind IS DISTINCT FROM 'bench'""", [run_ids]).fetchall()]
    if labels:
        run_ids += [r[0] for r in con.execute(
            """SELECT r.run_id FROM runs r JOIN sources s USING (source_id)
               WHERE list_contains(?, r.label) AND (r.engine = 'bench' OR s.kind = 'bench')
               ORDER BY r.run_id""", [labels]).fetchall() if r[0] not in run_ids]
    eq = equivalents or load_equivalents()
    notes: list[str] = []
    info = {r["run_id"]: r for r in _q(con, """
        SELECT v.*, r.ordinal, r.gpu_count, r.spec_draft_model, r.context_len, r.started_at, r.pp_size,
               r.cuda_graph_max_bs, r.max_running_requests, r.kv_cache_dtype, r.quantization,
               s.kind AS source_kind, s.label AS source_label
        FROM run_summary v JOIN runs r USING (run_id) JOIN sources s ON s.source_id = r.source_id
        WHERE list_contains(?, v.run_id)""", [run_ids])}
    bench_rows = _q(con, """
        SELECT run_id, line_no, tool, backend, max_concurrency, request_rate, successful_requests, output_tok_s,
               median_ttft_ms, mean_ttft_ms, p99_ttft_ms, median_tpot_ms, mean_tpot_ms, median_itl_ms,
               mean_itl_ms, p99_itl_ms
        FROM bench_results
        WHERE list_contains(?, run_id) AND (output_tok_s IS NOT NULL OR median_ttft_ms IS NOT NULL
                                            OR mean_ttft_ms IS NOT NULL)
        ORDER BY run_id, line_no""", [run_ids])
    bench_by_run: dict[int, list[dict]] = {}
    for b in bench_rows:
        bench_by_run.setdefault(b["run_id"], []).append(b)

    def is_bench(rid: int) -> bool:
        r = info[rid]
        return r["engine"] == "bench" or r["source_kind"] == "bench"

    server_ids = [rid for rid in run_ids if rid in info and not is_bench(rid)]
    bench_ids = [rid for rid in run_ids if rid in info and is_bench(rid)]
    columns: list[Column] = []
    by_id: dict[int, Column] = {}
    for rid in server_ids:
        r = info[rid]
        col = Column(run_id=rid, name="", source=r["source_name"], label=r["label"], engine=r["engine"], kind="server")
        columns.append(col)
        by_id[rid] = col
    for rid in bench_ids:
        label = info[rid]["label"]
        targets = [c for c in columns if c.kind == "server" and label and c.label == label]
        if targets:
            # the server run of that label that served last
            target = sorted(targets, key=lambda c: (info[c.run_id]["end_state"] == "served", c.run_id))[-1]
            target.bench_run_ids.append(rid)
            continue
        r = info[rid]
        col = Column(run_id=rid, name="", source=r["source_name"], label=label, engine=r["engine"], kind="bench")
        columns.append(col)
        by_id[rid] = col
    _name_columns(columns, info)

    # concurrency bands (median gen tok/s of decode lines with that many running requests)
    band_rows = _q(con, f"""
        SELECT run_id, {_band_case()} AS band, count(*) AS n, median(gen_tok_s) AS med
        FROM decode_stats
        WHERE primary_rank AND running_reqs >= 1 AND gen_tok_s > 0 AND list_contains(?, run_id)
        GROUP BY ALL""", [server_ids]) if server_ids else []
    band_med = {(b["run_id"], b["band"]): b["med"] for b in band_rows}
    band_n = {(b["run_id"], b["band"]): b["n"] for b in band_rows}
    observed = [b for b, _, _ in BANDS if any(k[1] == b for k in band_med)]

    # findings
    if findings is True:
        found = _load_findings(con, [i for c in columns for i in c.run_ids], notes)
    elif findings:
        found = list(findings)
    else:
        found = None
    counts: dict[tuple[int, str], int] = {}
    if found is not None:
        owner = {i: c.run_id for c in columns for i in c.run_ids}
        for f in found:
            rid = owner.get(getattr(f, "run_id", None))
            if rid is not None:
                counts[(rid, f.severity)] = counts.get((rid, f.severity), 0) + 1

    rows: list[Row] = []

    def add(key, title, group, unit, fn, better=None):
        rows.append(Row(key=key, title=title, group=group, unit=unit, values=[fn(c) for c in columns],
                        better=better))

    def srv(c: Column, k: str, digits: int | None = None):
        if c.kind != "server":
            return None
        v = info[c.run_id].get(k)
        return _round(v, digits) if digits is not None else v

    tls = startup_phases(con, [c.run_id for c in columns if c.kind == "server"])

    def ready_s(c: Column):
        v = srv(c, "time_to_ready_s", 1)
        if v is None and c.kind == "server":  # vLLM prints no "ready" time: take it from the milestones
            v = _round((tls.get(c.run_id) or {}).get("ready_s"), 1)
        return v

    add("run_id", "run id", "run", None, lambda c: c.run_id)
    add("source", "source", "run", None, lambda c: c.source)
    add("label", "label", "run", None, lambda c: c.label)
    add("engine", "engine", "run", None, lambda c: c.engine)
    add("version", "version", "run", None,
        lambda c: info[c.run_id].get("engine_version") or info[c.run_id].get("format_era"))
    add("model", "model", "run", None, lambda c: srv(c, "model"))
    add("gpu", "GPU", "run", None, lambda c: _gpu(info[c.run_id]) if c.kind == "server" else None)
    add("end_state", "end state", "run", None, lambda c: srv(c, "end_state"))
    add("tp_size", "TP", "parallel", None, lambda c: srv(c, "tp_size"))
    add("dp_size", "DP", "parallel", None, lambda c: srv(c, "dp_size"))
    add("attention_backend", "attention backend", "kernels", None, lambda c: srv(c, "attention_backend"))
    add("cuda_graph", "CUDA graphs configured", "kernels", None, lambda c: srv(c, "cuda_graph"))
    add("cuda_graph_coverage", "CUDA graph coverage of decode steps", "kernels", "0..1",
        lambda c: None if srv(c, "no_graph_share") is None else round(1 - info[c.run_id]["no_graph_share"], 3))
    add("spec_method", "speculative method", "speculative", None, lambda c: srv(c, "spec_method"))
    add("num_spec_tokens", "speculative tokens/step", "speculative", None, lambda c: srv(c, "num_spec_tokens"))
    add("mean_accept_len", "acceptance length", "speculative", "tokens/step",
        lambda c: srv(c, "mean_accept_len", 2), "higher")
    add("draft_accept_rate", "draft acceptance rate", "speculative", "0..1",
        lambda c: srv(c, "draft_accept_rate", 3), "higher")
    add("kv_cache_tokens", "KV cache tokens", "memory", "tokens", lambda c: srv(c, "kv_cache_tokens"))
    add("weight_load_s", "weight loading", "startup", "s", lambda c: srv(c, "weight_load_s", 1), "lower")
    add("cuda_graph_capture_s", "CUDA graph capture", "startup", "s", lambda c: srv(c, "cuda_graph_capture_s", 1),
        "lower")
    add("time_to_ready_s", "time to ready", "startup", "s", ready_s, "lower")
    add("decode_samples", "decode samples", "throughput", None, lambda c: srv(c, "decode_samples"))
    add("single_stream_tok_s", "single-stream decode (1 running)", "throughput", "tok/s",
        lambda c: srv(c, "single_stream_tok_s", 1), "higher")
    for b in observed:
        if b == "1":
            continue
        add(f"gen_tok_s_{_band_key(b)}", f"gen throughput @ {b} running", "throughput", "tok/s",
            lambda c, b=b: _round(band_med.get((c.run_id, b)), 1) if c.kind == "server" else None, "higher")
    add("peak_gen_tok_s", "peak gen throughput", "throughput", "tok/s", lambda c: srv(c, "peak_gen_tok_s", 1), "higher")

    # benchmark results, one block of rows per concurrency level
    col_bench: dict[str, dict] = {}
    for c in columns:
        per = {}
        for rid in ([c.run_id] if c.kind == "bench" else [c.run_id] + c.bench_run_ids):
            for b in bench_by_run.get(rid, []):
                per[_bench_level(b)] = b  # the last block per level wins
        col_bench[c.name] = per
    levels = sorted({lv for per in col_bench.values() for lv in per}, key=_level_sort)
    for lv in levels:
        for key, title, unit, digits, better in (("output_tok_s", "output throughput", "tok/s", 1, "higher"),
                                                 ("median_ttft_ms", "TTFT median", "ms", 1, "lower"),
                                                 ("median_tpot_ms", "TPOT median", "ms", 2, "lower"),
                                                 ("median_itl_ms", "ITL median", "ms", 2, "lower")):
            add(f"bench_{_band_key(lv)}_{key}", f"bench {lv}: {title}", "benchmark", unit,
                lambda c, lv=lv, key=key, digits=digits: _round((col_bench[c.name].get(lv) or {}).get(key), digits),
                better)
    if found is not None:
        for sev in SEVERITIES:
            add(f"findings_{sev}", f"findings: {sev}", "findings", None,
                lambda c, sev=sev: counts.get((c.run_id, sev), 0))

    band_samples = {c.name: {b: band_n[(c.run_id, b)] for b in observed if (c.run_id, b) in band_n}
                    for c in columns}
    config = _config_diff(con, columns, info, eq)
    if len([c for c in columns if c.kind == "server"]) < 2:
        notes.append("fewer than two server runs: no configuration differences to show")
    return CompareResult(columns=columns, rows=rows, config=config, bands=observed, band_samples=band_samples,
                         notes=notes, findings=list(found or []))


def _band_case() -> str:
    parts = []
    for label, lo, hi in BANDS:
        cond = f"running_reqs >= {lo}" + (f" AND running_reqs <= {hi}" if hi is not None else "")
        parts.append(f"WHEN {cond} THEN '{label}'")
    return "CASE " + " ".join(parts) + " END"


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


def _gpu(r: dict) -> str | None:
    name = r.get("gpu_name")
    if not name:
        return None
    n = r.get("gpu_count")
    return f"{n}x {name}" if n and n > 1 else name


def _name_columns(columns: list[Column], info: dict) -> None:
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


# --------------------------------------------------------------------------- config differences

def _config_diff(con, columns: list[Column], info: dict, eq: Equivalents) -> list[ConfigRow]:
    server = [c for c in columns if c.kind == "server"]
    if len(server) < 2:
        return []
    ids = [c.run_id for c in server]
    per_run: dict[int, dict[str, tuple[int, str, Any]]] = {rid: {} for rid in ids}
    for rid, origin, key, value in con.execute(
            """SELECT run_id, origin, key, value FROM config WHERE list_contains(?, run_id) AND key IS NOT NULL
               ORDER BY run_id, line_no, key""", [ids]).fetchall():
        rank = _ORIGIN_RANK.get(origin or "", 1)
        have = per_run[rid].get(key)
        if have is None or rank < have[0]:  # first value of the best origin wins
            per_run[rid][key] = (rank, origin, value)
    out: list[ConfigRow] = []
    col_index = {c.run_id: i for i, c in enumerate(columns)}

    def emit(name, title, kind, values_by_run, keys_by_run, note=None, missing_counts=False):
        present = {rid: v for rid, v in values_by_run.items() if v is not _MISSING}
        distinct = {_cmp_key(v) for v in (values_by_run.values() if missing_counts else present.values())}
        if len(distinct) < 2:
            return
        values = [None] * len(columns)
        keys = [None] * len(columns)
        for rid, v in values_by_run.items():
            values[col_index[rid]] = None if v is _MISSING else v
            keys[col_index[rid]] = keys_by_run.get(rid)
        out.append(ConfigRow(name=name, title=title, kind=kind, values=values, keys=keys, note=note))

    mapped = eq.mapped_keys()
    for s in eq.settings:
        vals, keys = {}, {}
        for rid in ids:
            cfg = per_run[rid]
            best = None
            for k in s.keys + s.inverted:
                if k in cfg and (best is None or cfg[k][0] < cfg[best][0]):
                    best = k
            v: Any = _MISSING
            key = None
            if best is not None:
                raw = cfg[best][2]
                key = best
                v = _norm(raw, s.kind)
                if raw is not None and str(raw).strip() == "***":
                    v = None  # redacted at ingest: fall back to the runs table below
                if best in s.inverted and isinstance(v, bool):
                    v = not v
            if (v is _MISSING or v is None) and s.runs_column:
                rv = _runs_value(info[rid], s.runs_column)
                if rv is not None:
                    v, key = _norm(rv, s.kind), f"runs.{s.runs_column}"
            if v is None and best is not None and str(cfg[best][2]).strip() == "***" and key == best:
                v = "***"  # redacted at ingest and nothing to fall back on: say so rather than "default"
            vals[rid], keys[rid] = v, key
        emit(s.name, s.title, "setting", vals, keys, s.note)

    env_keys = sorted({k for rid in ids for k, (_, origin, _) in per_run[rid].items()
                       if origin == "env" and eq.is_env(k) and k not in eq.ignore and k not in mapped})
    for k in env_keys:
        vals = {rid: (_norm(per_run[rid][k][2], "raw") if k in per_run[rid] else "unset") for rid in ids}
        emit(k, f"env {k}", "env", vals, {rid: k for rid in ids if k in per_run[rid]}, missing_counts=True)

    raw_keys = sorted({k for rid in ids for k, (_, origin, _) in per_run[rid].items()
                       if origin != "env" and k not in mapped and k not in eq.ignore and not eq.is_env(k)})
    parents = {k.rsplit(".", 1)[0] for rid in ids for k in per_run[rid] if "." in k}
    for k in raw_keys:
        if k in parents:  # a config object printed whole; its dotted sub-keys carry the detail
            continue
        vals = {rid: (_norm(per_run[rid][k][2], "raw") if k in per_run[rid] else _MISSING) for rid in ids}
        if any(isinstance(v, str) and v == "***" for v in vals.values()):
            continue
        emit(k, k, "raw", vals, {rid: k for rid in ids if k in per_run[rid]})
    return out


def _runs_value(r: dict, column: str):
    return r.get(column)


# --------------------------------------------------------------------------- startup timeline

#: milestone kind -> the phase that the milestone ends
_PHASE_OF = {
    "dist_init_begin": "init", "weights_begin": "init",
    "weights_loaded": "weights", "weights_load_time": "weights",
    "dynamo_transform": "compile", "compile_graph": "compile", "torch_compile": "compile",
    "kv_cache_memory": "KV cache", "kv_cache_allocated": "KV cache", "kv_cache_tokens": "KV cache",
    "kv_blocks": "KV cache", "memory_pool_end": "KV cache",
    "cuda_graph_begin": "KV cache", "cuda_graph_draft_begin": "KV cache",
    "cuda_graph_end": "graph capture", "cuda_graph_draft_end": "graph capture",
    "init_engine": "ready", "app_startup_complete": "ready", "api_server_start": "ready", "server_ready": "ready",
}
PHASES = ["init", "weights", "compile", "KV cache", "graph capture", "ready"]
_READY_KINDS = ("server_ready", "api_server_start", "app_startup_complete")


def startup_phases(con, run_ids: list[int]) -> dict[int, dict]:
    """Startup timeline per run: ``{"phases": [{"phase", "start_s", "end_s"}], "ready_s", "approximate"}``.

    Built from the timestamped milestones of rank 0 (any rank when rank 0 has none): each
    milestone ends a segment of its phase; seconds count from the run's start. Runs whose
    milestones carry no timestamps get consecutive bars from the durations in ``runs``
    (``approximate`` is then true)."""
    if not run_ids:
        return {}
    runs = {r["run_id"]: r for r in _q(con, """SELECT run_id, started_at, weight_load_s, cuda_graph_capture_s,
                                                     time_to_ready_s FROM runs WHERE list_contains(?, run_id)""",
                                      [list(run_ids)])}
    ev = _q(con, """SELECT run_id, ts, kind, line_no, coalesce(tp_rank, 0) = 0 AS rank0 FROM events
                    WHERE list_contains(?, run_id) AND ts IS NOT NULL AND list_contains(?, kind)
                    ORDER BY run_id, ts, line_no""", [list(run_ids), list(_PHASE_OF)])
    by_run: dict[int, list[dict]] = {}
    for e in ev:
        by_run.setdefault(e["run_id"], []).append(e)
    out = {}
    for rid in run_ids:
        r = runs.get(rid)
        if r is None:
            continue
        events = by_run.get(rid, [])
        if any(e["rank0"] for e in events):
            events = [e for e in events if e["rank0"]]
        t0 = r["started_at"] or (events[0]["ts"] if events else None)
        phases: list[dict] = []
        ready_s = None
        if events and t0 is not None:
            prev = 0.0
            for e in events:
                t = (e["ts"] - t0).total_seconds()
                if t < prev:
                    continue
                phase = _PHASE_OF[e["kind"]]
                if t > prev:
                    if phases and phases[-1]["phase"] == phase and phases[-1]["end_s"] == prev:
                        phases[-1]["end_s"] = t
                    else:
                        phases.append({"phase": phase, "start_s": prev, "end_s": t})
                prev = t
                if e["kind"] in _READY_KINDS:  # the last of them: SGLang's "ready to roll" follows uvicorn's
                    ready_s = t
            approximate = False
        else:
            t = 0.0
            for phase, d in (("weights", r["weight_load_s"]), ("graph capture", r["cuda_graph_capture_s"])):
                if d:
                    phases.append({"phase": phase, "start_s": t, "end_s": t + float(d)})
                    t += float(d)
            approximate = bool(phases)
        if ready_s is None and r["time_to_ready_s"] is not None:
            ready_s = float(r["time_to_ready_s"])
        if ready_s is not None:  # the timeline ends when the server is ready
            phases = [p for p in phases if p["start_s"] < ready_s or p["phase"] == "ready"]
        for p in phases:
            p["start_s"], p["end_s"] = round(p["start_s"], 3), round(p["end_s"], 3)
        out[rid] = {"phases": phases, "ready_s": None if ready_s is None else round(ready_s, 3),
                    "approximate": approximate, "started_at": t0}
    return out
