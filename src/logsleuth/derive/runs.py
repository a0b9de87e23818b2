"""Derive per-run facts after sources' lines are stored.

Contract: ``finalize_sources(con, items)`` (called inside the ingest transaction; each item the
arguments ``(source_id, det, src, tstate, base_run, opts, head)`` of ``finalize_source``, its
one-item form) returns the run ids of each source. For each source it merges the lines before
the first launch into the first run (unless they hold activity of their own, a tail of an
earlier launch), mines templates for unclaimed lines, normalises speculative metrics
(derive/spec.py), marks the primary rank of stats lines (one per scheduler: per DP rank, the
lowest TP rank), stores environment-report facts, and writes one ``runs`` row per run:
identity (derive/identity.py: model, served name, canonical model key, printed version,
parallel layout), configuration, startup phase times, GPU context (derive/hardware.py), the
platform (derive/platform.py) and how the run ended with its one root cause, whether it served
or ran offline, and the start-up phase an unready run ended in (derive/end_state.py). A run starts where the server
process starts: lines before the first launch (a CI job's preamble) stay attached to the first
run as its context, but its ``first_line`` is the launch.

Cost: a fixed number of statements per call, whatever the number of sources and runs (a
folder of thousands of small logs is derived in one call per batch; a file of 2,000 launches
in one call): set-based SQL over the call's run and source ids (queries/derive/), then a few
aggregated values per run in Python, one insert of all runs rows and set-based updates. An
environment report in the call splits it: the runs before it are stored first, so that the
report refreshes their GPU context as it would one file at a time.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from typing import NamedTuple

import polars as pl

from ..formats.grammar import default_grammars
from ..formats import grammar as gdata
from .drain import mine_templates
from .end_state import derive_end_states
from .rollup import build_rollup
from .hardware import gpu_contexts, refresh_gpu_for_directory, store_env_report
from .identity import model_identity
from .platform import run_platforms
from .spec import normalise_specs, spec_config
from .sql import near, run_set

__all__ = ["RUN_TABLES", "finalize_source", "finalize_sources", "has_activity", "refresh_gpu_for_directory",
           "split_prelude"]

RUN_TABLES = ["lines_other", "lines_bulk", "config", "events_other", "events_bulk", "decode_stats", "prefill_stats",
              "spec_stats", "errors", "bench_results"]

# the events a runs row is derived from (queries/derive/run_events.sql)
_EVENT_KINDS = ("version_banner", "banner_model", "weights_loaded", "model_arch", "attention_backend",
                "attention_backend_default", "limits", "cuda_graph_bs", "kv_cache_allocated", "enforce_eager",
                "cuda_graph_disabled_eager", "max_model_len", "kv_cache_tokens", "kv_blocks", "cudagraph_truncated",
                "server_ready", "api_server_start", "app_startup_complete", "weights_begin", "weights_load_time",
                "cuda_graph_end", "shutdown")

_ERA_SAMPLE = 50_000


class _Item(NamedTuple):
    source_id: int
    det: object
    src: object
    tstate: object
    base_run: int
    opts: object
    head: str


def _grammars(opts):
    """The grammars this ingest parsed with (cached): roles, era probes, aliases and markers
    are grammar data (parsers/*.toml), never names in this module."""
    return default_grammars(tuple(getattr(opts, "grammar_dirs", ()) or ()), check_regexes=False)


def _by_grammars(items):
    """The items grouped by the grammars they were parsed with (one group in practice)."""
    groups: dict = {}
    for it in items:
        groups.setdefault(tuple(getattr(it.opts, "grammar_dirs", ()) or ()), []).append(it)
    return [(_grammars(group[0].opts), group) for group in groups.values()]


def finalize_source(con, source_id, det, src, tstate, base_run, opts, head) -> list[int]:
    return finalize_sources(con, [(source_id, det, src, tstate, base_run, opts, head)])[0]


def finalize_sources(con, items) -> list[list[int]]:
    items = [_Item(*it) for it in items]
    if not items:
        return []
    lines = _run_lines(con, [it.source_id for it in items])
    _update_sources(con, items, lines)
    _mine_templates(con, items)
    out: dict[int, list[int]] = {}
    logs: list[_Item] = []
    for it in items:
        if it.det.kind != "env_report":
            logs.append(it)
            continue
        # the runs before a report are stored first: it refreshes their GPU context
        _derive_logs(con, logs, lines, out)
        logs = []
        store_env_report(con, it.source_id, it.src)
        for t in RUN_TABLES:
            con.execute(f"UPDATE {t} SET run_id = NULL WHERE source_id = ?", [it.source_id])
        refresh_gpu_for_directory(con, it.src.display_name, it.opts.gpu)
        out[it.source_id] = []
    _derive_logs(con, logs, lines, out)
    build_rollup(con, [r for ids in out.values() for r in ids])  # per-run aggregates (derive/rollup.py)
    return [out[it.source_id] for it in items]


def split_prelude(con, item) -> int | None:
    """Split off the lines before one new source's first launch now, when they hold a run of
    their own, as its run derivation would (``item``: a ``finalize_source`` argument tuple):
    a batch that derives its sources later (ingest/deferred.py) then gives the next source the
    ids one derivation per file gives. Returns the highest run id of the source (None: none)."""
    it = _Item(*item)
    lines = _run_lines(con, [it.source_id])
    if it.det.kind != "env_report":
        _split_preludes(con, [it], lines)
    return max(_run_ids(lines[it.source_id]), default=None)


def _run_lines(con, source_ids) -> dict[int, dict[int, tuple]]:
    """source_id -> run_id -> (lines, first line, last line), runs in file order."""
    out: dict[int, dict[int, tuple]] = {sid: {} for sid in source_ids}
    for sid, rid, n, first, last in run_set(con, "run_lines", sources=source_ids):
        out[sid][rid] = (n, first, last)
    return out


def _run_ids(runs: dict) -> list[int]:
    return sorted(r for r in runs if r is not None)


def _update_sources(con, items, lines) -> None:
    rows = [{"source_id": it.source_id, "n_lines": sum(v[0] for v in lines[it.source_id].values()),
             "year_basis": it.tstate.basis or None, "bad_bytes": it.src.stats["bad_bytes"],
             "nul_bytes": it.src.stats["nul_bytes"], "truncated_lines": it.src.stats["truncated_lines"],
             "crlf_lines": it.src.stats["crlf_lines"], "grew_during_ingest": bool(it.src.grew)} for it in items]
    frame = pl.DataFrame(rows, schema={"source_id": pl.Int64, "n_lines": pl.Int64, "year_basis": pl.Utf8,
                                       "bad_bytes": pl.Int64, "nul_bytes": pl.Int64, "truncated_lines": pl.Int64,
                                       "crlf_lines": pl.Int64, "grew_during_ingest": pl.Boolean})
    sets = ", ".join(f"{c} = f.{c}" for c in frame.columns[1:])
    run_set(con, "", sources=frame["source_id"].to_list(), frames={"derive_sources": frame},
            text=f"UPDATE sources SET {sets} FROM derive_sources f WHERE {{sources@sources}} "
                 "AND sources.source_id = f.source_id")


def _mine_templates(con, items) -> None:
    """Templates of each source's unclaimed lines (mined per source, numbered after the
    highest stored id in item order), stored with one insert and one update."""
    ids = [it.source_id for it in items]
    frame = pl.DataFrame(run_set(con, "unparsed", sources=ids), schema={"source_id": pl.Int64, "line_no": pl.Int64,
                                                                         "raw": pl.Utf8}, orient="row")
    if frame.height == 0:
        return
    base = int(con.execute("SELECT coalesce(max(template_id), 0) FROM templates").fetchall()[0][0] or 0)
    tpls, assigns = [], []
    parts = frame.partition_by("source_id", as_dict=True, maintain_order=True)
    for sid in ids:
        part = parts.get((sid,))
        if part is None or part.height == 0:
            continue
        idx, templates = mine_templates(part["raw"])
        examples = part["line_no"].gather(templates["example_row"])
        tpls.append(templates.select(
            (pl.col("template_index").cast(pl.Int64) + base + 1).alias("template_id"),
            pl.lit(sid, dtype=pl.Int32).alias("source_id"), "template",
            pl.col("n_lines").cast(pl.Int64), examples.alias("example_line_no")))
        assigns.append(part.select(pl.col("source_id").cast(pl.Int32), "line_no")
                       .with_columns((idx.cast(pl.Int64) + base + 1).alias("template_id")))
        base += templates.height
    run_set(con, "", frames={"derive_tpl": pl.concat(tpls)},
            text="INSERT INTO templates SELECT template_id, source_id, template, n_lines, example_line_no FROM derive_tpl")
    run_set(con, "", sources=ids, frames={"derive_asg": pl.concat(assigns)},
            text="UPDATE lines_other SET template_id = a.template_id FROM derive_asg a WHERE {sources@lines_other} "
                 "AND lines_other.source_id = a.source_id AND lines_other.line_no = a.line_no")


def has_activity(con, pairs: list[tuple[int, int, int | None]]) -> set[tuple[int, int]]:
    """The (source_id, run_id) of ``pairs`` (source_id, run_id, before_line: None for all its
    lines) that hold activity of their own (queries/derive/activity.sql)."""
    if not pairs:
        return set()
    frame = pl.DataFrame(pairs, schema={"source_id": pl.Int64, "run_id": pl.Int64, "before_line": pl.Int64},
                         orient="row")
    return {(sid, rid) for sid, rid, n in run_set(con, "activity", sources=[p[0] for p in pairs],
                                                  frames={"derive_pairs": frame}) if n}


def _has_activity(con, source_id, run_id, before_line=None) -> bool:
    return bool(has_activity(con, [(source_id, run_id, before_line)]))


def _launch_starts(con, pairs: list[tuple[int, int]], grammars) -> dict[tuple[int, int], int]:
    """First line of the server process of the first launch in each (source_id, run_id): the
    first non-blank line after the last line before the launch marker that no engine wrote
    (queries/derive/launch_start.sql: a CI job's steps, pip output, a banner of the batch
    script). Left out when everything before the marker is the process's own output."""
    if not pairs:
        return {}
    names = ", ".join("'" + p.name.replace("'", "''") + "'" for g in grammars for p in g.patterns
                      if p.launch is not None) or "''"
    frame = pl.DataFrame(pairs, schema={"source_id": pl.Int64, "run_id": pl.Int64}, orient="row")
    return {(sid, rid): start for sid, rid, start in run_set(
        con, "launch_start", sources=[p[0] for p in pairs], frames={"derive_pairs": frame},
        fmt={"launch_patterns": names}) if start is not None}


def _split_preludes(con, items, lines) -> dict[int, int]:
    """Lines before each source's first launch (run base_run): the launch's context, or a run
    of their own (the tail of an earlier launch, given the next free id) when they hold
    activity. Returns run_id -> the line its server process starts at (for merged context)."""
    firsts = [it for it in items if it.base_run is not None and it.base_run in lines[it.source_id]]
    launch_start: dict[int, int] = {}
    starts: dict[tuple[int, int], int] = {}
    for grammars, group in _by_grammars(firsts):
        starts.update(_launch_starts(con, [(it.source_id, it.base_run) for it in group], grammars))
    if not starts:
        return launch_start
    active = has_activity(con, [(sid, rid, start) for (sid, rid), start in starts.items()])
    splits = []
    # a tail takes an id after every run id of the call and of the database
    stored = con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchall()[0][0]
    next_id = max([stored] + [rid for it in items for rid in _run_ids(lines[it.source_id])]) + 1
    for it in firsts:
        key = (it.source_id, it.base_run)
        if key not in starts:
            continue
        if key in active:
            tail = max(next_id, max(_run_ids(lines[it.source_id])) + 1)
            next_id = tail + 1
            splits.append((it.source_id, it.base_run, starts[key], tail))
        else:
            launch_start[it.base_run] = starts[key]
    if splits:
        frame = pl.DataFrame(splits, schema={"source_id": pl.Int64, "base_run": pl.Int64, "start": pl.Int64,
                                             "tail": pl.Int64}, orient="row")
        sids = [s[0] for s in splits]
        for t in RUN_TABLES:
            run_set(con, "", sources=sids, frames={"derive_split": frame},
                    text=f"UPDATE {t} SET run_id = s.tail FROM derive_split s WHERE {{sources@{t}}} "
                         f"AND {t}.source_id = s.source_id AND {t}.run_id = s.base_run AND {t}.line_no < s.start")
        lines.update(_run_lines(con, sids))
    return launch_start


def _sglang_eras(con, items, lines) -> dict[int, str | None]:
    """SGLang's format era of each source from the line shapes only some releases printed: the
    grammar's [[version_probe]] list (regex probes first, then LIKE probes in order; first
    match wins), over every unclaimed line and the first 50,000 stats lines."""
    out: dict[int, str | None] = {}
    for grammars, group in _by_grammars(items):
        probes = gdata.version_probes(grammars, "sglang")
        if not probes:
            continue
        cols = ", ".join("count(*) FILTER (WHERE regexp_matches(raw, ?))" if p.regex else
                         "count(*) FILTER (WHERE raw LIKE ?)" for p in probes)
        params = [p.regex or p.like for p in probes]
        small = [it.source_id for it in group if sum(v[0] for v in lines[it.source_id].values()) <= _ERA_SAMPLE]
        batches = [(small, f"QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY line_no) <= {_ERA_SAMPLE}")] \
            if small else []
        # a large source alone, with a LIMIT: no sort of its millions of stats lines
        batches += [([it.source_id], f"LIMIT {_ERA_SAMPLE}") for it in group if it.source_id not in small]
        for sids, sample in batches:
            for sid, *counts in run_set(con, "era_probes", sources=sids, fmt={"probes": cols, "bulk": sample},
                                        params=params):
                out[sid] = next((p.era for p, n in zip(probes, counts) if n), None)
    return out


class _RunFacts(NamedTuple):
    """queries/derive/run_facts.sql: aggregates of one run."""
    swapped: int = 0
    v1stats: int = 0
    year: int | None = None
    capture_s: float | None = None
    banner: str | None = None
    accepts: int = 0
    spec_rows: int = 0


class _Facts:
    """What the runs rows of one call are derived from, fetched set-based per call."""

    def __init__(self, con, runs: dict[int, dict], banners: list[str]):
        ids = list(runs)
        self.config: dict[int, dict] = {rid: {} for rid in ids}
        for rid, k, v, origin in run_set(con, "run_config", runs=ids):
            self.config[rid][k] = v
            self.config[rid][f"{origin}:{k}"] = v
        self.events: dict[int, dict[str, list]] = {rid: {} for rid in ids}
        kinds = ", ".join(f"'{k}'" for k in _EVENT_KINDS)
        for rid, kind, *ev in run_set(con, "run_events", runs=ids, fmt={"kinds": kinds}):
            self.events[rid].setdefault(kind, []).append(tuple(ev))
        frame = pl.DataFrame({"run_id": ids, "first_line": [runs[r]["first_line"] for r in ids]},
                             schema={"run_id": pl.Int64, "first_line": pl.Int64})
        self.times = {rid: (a, b) for rid, a, b in run_set(con, "run_times", runs=ids,
                                                          frames={"derive_runs": frame})}
        marks = ", ".join("'" + b.replace("'", "''") + "'" for b in banners) or "NULL"
        self.facts = {row[0]: _RunFacts(*row[1:]) for row in run_set(
            con, "run_facts", runs=ids, fmt={"banners": marks, "run_list": ", ".join(map(str, ids))})}
        self.ranks = {rid: (tp, dp) for rid, tp, dp in run_set(con, "parallel_from_ranks", runs=ids)}

    def ev(self, rid, kind) -> list:
        """Events of ``kind`` of run ``rid`` in line order: (line_no, ts, value, text, attrs, tp_rank, proc)."""
        return self.events[rid].get(kind, [])


def _derive_logs(con, items, lines, out) -> None:
    if not items:
        return
    launch_start = _split_preludes(con, items, lines)
    sglang = [it for it in items if "sglang" in (it.det.engine, *getattr(it.det, "run_engines", {}).values())]
    eras = _sglang_eras(con, sglang, lines) if sglang else {}
    rows: dict[int, dict] = {}
    owner: dict[int, _Item] = {}
    counts: dict[int, int] = {}
    for it in items:
        # ordinals follow the file (a split-off tail comes first)
        ordered = sorted(_run_ids(lines[it.source_id]), key=lambda rid: lines[it.source_id][rid][1] or 0)
        out[it.source_id] = ordered
        for ordinal, rid in enumerate(ordered, start=1):
            n, first, last = lines[it.source_id][rid]
            det = it.det
            # a file may hold launches of several engines: each run has the one it was parsed with
            engine = (getattr(det, "run_engines", {}).get(rid) or det.engine) if det.kind == "server_log" else det.kind
            rows[rid] = {"run_id": rid, "source_id": it.source_id, "ordinal": ordinal, "engine": engine,
                         "first_line": launch_start.get(rid) or first, "last_line": last, "label": it.opts.label}
            owner[rid], counts[rid] = it, n
    ids = list(rows)
    if not ids:  # sources without a line (nothing of theirs to derive)
        return
    for t in ("decode_stats", "prefill_stats"):
        run_set(con, "primary_rank", runs=ids, fmt={"table": t})
    grammars = _grammars(items[0].opts)
    facts = _Facts(con, rows, gdata.role(grammars, "engine_banner"))
    _identity(con, rows, facts, owner, eras)
    for rid, r in rows.items():
        g = _grammars(owner[rid].opts)
        _configuration(r, facts, rid, gdata.aliases(g, "attention_backend", r.get("engine")))
        _startup_times(r, facts, rid)
    _ready_times(con, rows, facts)
    shutdowns = {rid: min((e[0] for e in facts.ev(rid, "shutdown")), default=None) for rid in ids}
    ends = {rid: {"ready_line": r["ready_line"], "last_line": r["last_line"], "engine": r["engine"],
                  "n_lines": counts[rid]} for rid, r in rows.items()}
    for rid in ids:
        ends[rid]["run_id"] = rid
    derive_end_states(con, ends, shutdowns, gdata.markers(grammars, "kill"), gdata.markers(grammars, "interrupt"))
    for rid, r in rows.items():
        r.update({k: ends[rid][k] for k in ("end_state", "end_line", "end_reason", "mode", "end_phase")})
    # speculative metrics of the runs that have any (the statements cost as much without)
    normalise_specs(con, {rid: r for rid, r in rows.items()
                          if facts.facts.get(rid, _RunFacts()).accepts or facts.facts.get(rid, _RunFacts()).spec_rows})
    for explicit, env_files in {(it.opts.gpu, tuple(getattr(it.opts, "env_files", ()) or ())) for it in items}:
        runs = [(rid, r["source_id"]) for rid, r in rows.items()
                if (owner[rid].opts.gpu, tuple(getattr(owner[rid].opts, "env_files", ()) or ())) == (explicit, env_files)]
        for rid, fields in gpu_contexts(con, runs, explicit, env_files).items():
            rows[rid].update(fields)
    run_platforms(con, rows, grammars)  # after the GPU context: the vendor is evidence too
    _deployments(rows)
    _insert_runs(con, list(rows.values()))
    run_set(con, "decode_primary", sources=[it.source_id for it in items])


def _deployments(rows: dict[int, dict]) -> None:
    """``deployment`` of each run: runs of one source whose line ranges overlap (their lines
    interleave: processes launched side by side, each its own run) form one deployment, named by
    the id of its first run; a run alone is a deployment of its own."""
    by_source: dict[int, list[dict]] = {}
    for r in rows.values():
        by_source.setdefault(r["source_id"], []).append(r)
    for runs in by_source.values():
        runs.sort(key=lambda r: (r["first_line"] or 0, r["run_id"]))
        head, reach = None, -1
        for r in runs:
            if head is None or (r["first_line"] or 0) > reach:  # starts after the group's last line
                head, reach = r["run_id"], -1
            r["deployment"] = head
            reach = max(reach, r["last_line"] or 0)


def _identity(con, rows, facts: _Facts, owner, eras) -> None:
    """Engine version (banner, configuration, else printed around the launch), format era,
    model identity and parallel layout of each run."""
    printed_for: dict[str, list[int]] = {}
    for rid, r in rows.items():
        banner = facts.ev(rid, "version_banner")
        r["engine_version"] = (banner[0][3] if banner else None) or facts.config[rid].get("engine_version")
        if not r["engine_version"] and r["engine"] in ("sglang", "vllm"):
            printed_for.setdefault(r["engine"], []).append(rid)
    for engine, ids in printed_for.items():
        frame = pl.DataFrame({"source_id": [rows[r]["source_id"] for r in ids], "run_id": ids},
                             schema={"source_id": pl.Int64, "run_id": pl.Int64})
        found = dict(run_set(con, "engine_version", sources=frame["source_id"].to_list(),
                             frames={"derive_pairs": frame}, params=[engine]))
        for rid in ids:
            rows[rid]["engine_version"] = found.get(rid)
    for rid, r in rows.items():
        engine, cfg = r["engine"], facts.config[rid]
        if engine == "vllm" and r["engine_version"]:
            r["engine_version"] = r["engine_version"].split("+")[0]
        r["started_at"], r["ended_at"] = facts.times.get(rid, (None, None))
        r["format_era"] = eras.get(r["source_id"]) if engine == "sglang" else _vllm_era(facts, rid, r["engine_version"])
        logo_model = facts.ev(rid, "banner_model")
        r.update(model_identity(cfg, engine, logo_model[0][3] if logo_model else None))
        arch = facts.ev(rid, "weights_loaded") if engine == "sglang" else facts.ev(rid, "model_arch")
        r["model_arch"] = next((a[3] for a in arch if a[3]), None)
        _parallel(r, cfg, facts.ranks.get(rid, (None, None)))


def _vllm_era(facts: _Facts, rid, version) -> str | None:
    """vLLM version and engine generation (the "Initializing a V1 LLM engine ... with config:"
    line of the grammar role "engine_banner", else the shape of the stats lines)."""
    f = facts.facts.get(rid, _RunFacts())
    engine, text, swapped, v1stats = None, f.banner, f.swapped, f.v1stats
    if text:
        engine = "V1" if "V1 LLM engine" in text else ("V0" if "V0 LLM engine" in text else None)
    if engine is None:
        engine = "V0" if swapped else ("V1" if v1stats else None)
    parts = [p for p in (f"v{version}" if version else None, engine) if p]
    return " ".join(parts) or None


def _parallel(r, cfg, seen) -> None:
    g = cfg.get
    r["quantization"] = g("quantization") if g("quantization") not in ("None",) else None
    r["kv_cache_dtype"] = g("kv_cache_dtype")
    r["tp_size"] = _int(g("tp_size") or g("tensor_parallel_size"))
    r["dp_size"] = _int(g("dp_size") or g("data_parallel_size"))
    r["parallel_source"] = "configuration" if (r["tp_size"] or r["dp_size"]) else None
    if r["tp_size"] is None or r["dp_size"] is None:
        tp_seen, dp_seen = (int(v) if v is not None else None for v in seen)
        if r["tp_size"] is None and tp_seen and tp_seen > 1 or r["dp_size"] is None and dp_seen and dp_seen > 1:
            r["tp_size"] = r["tp_size"] or tp_seen
            r["dp_size"] = r["dp_size"] or dp_seen
            r["parallel_source"] = (r["parallel_source"] + " + " if r["parallel_source"] else "") + \
                "rank tags (DPn/TPn on the lines: highest rank seen + 1)"
    r["tp_size"] = r["tp_size"] or (1 if cfg else None)
    r["dp_size"] = r["dp_size"] or (1 if cfg else None)
    r["pp_size"] = _int(g("pp_size") or g("pipeline_parallel_size")) or (1 if cfg else None)
    r["ep_size"] = _int(g("ep_size") or g("expert_parallel_size"))


def _int(v):
    try:
        return int(float(v)) if v not in (None, "", "None") else None
    except (TypeError, ValueError):
        return None


def _truthy(v) -> bool | None:
    if v is None:
        return None
    return str(v).strip().lower() in ("true", "1", "yes")


def _configuration(r, facts: _Facts, rid, backend_aliases: dict[str, str]) -> None:
    cfg = facts.config[rid]
    _attention(facts, rid, cfg, r, backend_aliases)
    r.update(spec_config(cfg, r["engine"]))
    _graphs_and_limits(facts, rid, cfg, r, r["engine"])


def _attention(facts: _Facts, rid, cfg, r, backend_aliases: dict[str, str]) -> None:
    chosen = [e[3] for e in facts.ev(rid, "attention_backend") if e[3]]
    default = [e[3] for e in facts.ev(rid, "attention_backend_default") if e[3]]
    cfg_backend = cfg.get("attention_backend")
    if chosen:
        name, how = Counter(chosen).most_common(1)[0][0], "selected (logged)"
    elif default:
        name, how = default[0], "default (logged)"
    elif cfg_backend not in (None, "None"):
        name, how = cfg_backend, "server_args"
    else:
        name, how = None, None
    if name:  # spellings vary by version (grammar [aliases.attention_backend]); SGLang's are ids already
        name = backend_aliases.get(name.lower(), name)
    r["attention_backend"], r["attention_backend_how"] = name, how


def _graphs_and_limits(facts: _Facts, rid, cfg, r, engine) -> None:
    g, ev = cfg.get, (lambda kind: facts.ev(rid, kind))
    limits = ev("limits")
    lim = json.loads(limits[0][4]) if limits and limits[0][4] else {}
    if engine == "sglang":
        disabled = _truthy(g("disable_cuda_graph"))
        r["cuda_graph"] = (not disabled) if disabled is not None else None
        bs = ev("cuda_graph_bs")
        r["cuda_graph_max_bs"] = (int(bs[0][2]) if bs and bs[0][2] is not None else None) or \
            _int(g("cuda_graph_max_bs_decode") or g("cuda_graph_max_bs"))
        r["max_running_requests"] = _int(lim.get("max_running_requests")) or _int(g("max_running_requests"))
        r["context_len"] = _int(lim.get("context_len")) or _int(g("context_length"))
        kv = limits[0][2] if limits else None
        if kv is None:
            alloc = ev("kv_cache_allocated")
            kv = alloc[0][2] if alloc else None
        r["kv_cache_tokens"] = _int(kv)
    else:
        eager = _truthy(g("enforce_eager"))
        eager_ev = len(ev("enforce_eager")) + len(ev("cuda_graph_disabled_eager"))
        r["cuda_graph"] = False if (eager or eager_ev) else (True if (cfg or eager is not None) else None)
        r["max_running_requests"] = _int(g("max_num_seqs"))
        mml = ev("max_model_len")
        r["context_len"] = _int(mml[0][2]) if mml else _int(g("max_model_len") or g("max_seq_len"))
        kv = ev("kv_cache_tokens")
        if kv:
            r["kv_cache_tokens"] = _int(kv[0][2])
        else:
            blocks = ev("kv_blocks")
            bsz = _int(g("block_size")) or 16
            r["kv_cache_tokens"] = _int(blocks[0][2]) * bsz if blocks and blocks[0][2] else None
        truncated = ev("cudagraph_truncated")
        r["cuda_graph_max_bs"] = _int(truncated[0][2]) if truncated else None


def _secs(a, b):
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def _startup_times(r, facts: _Facts, rid) -> None:
    """Phase times on the primary (lowest) rank, the rank SGLang and vLLM report for the whole
    server: weight loading of the target model (the first load on that rank; a speculative draft
    model loads after it) and CUDA-graph capture (the sum of the target's capture phases)."""
    ev = (lambda kind: facts.ev(rid, kind))
    rank = (lambda e: e[5] if e[5] is not None else -1)
    if r["engine"] == "sglang":
        loads = ev("weights_begin") + ev("weights_loaded")
        rk = min((rank(e) for e in loads), default=None)
        end = next((e for e in ev("weights_loaded") if rank(e) == rk), None)
        elapsed = json.loads(end[4]).get("elapsed_s") if end and end[4] else None
        if elapsed is not None:
            r["weight_load_s"] = float(elapsed)
        elif end:
            begins = [e[1] for e in ev("weights_begin") if rank(e) == rk and e[0] < end[0] and e[1] is not None]
            begin = max(begins, default=None)
            r["weight_load_s"] = _secs(begin, end[1]) if begin and end[1] else None
        r["cuda_graph_capture_s"] = facts.facts.get(rid, _RunFacts()).capture_s
        ready = ev("server_ready")
    else:
        took = max((e[2] for e in ev("weights_loaded") if e[2] is not None), default=None)
        took = took if took is not None else max((e[2] for e in ev("weights_load_time") if e[2] is not None),
                                                 default=None)
        r["weight_load_s"] = took
        graphs = sorted(ev("cuda_graph_end"), key=lambda e: (rank(e), e[6] is not None, e[0]))
        r["cuda_graph_capture_s"] = graphs[0][2] if graphs else None  # V0: the unprefixed driver is rank 0
        api = ev("api_server_start")
        startup = ev("app_startup_complete")
        if api:  # the engine's own uvicorn start follows "Starting vLLM API server"
            startup = [e for e in startup if e[0] > api[0][0]] or startup
        ready = startup or api
    r["ready"] = bool(ready)
    r["ready_line"] = ready[0][0] if ready else None
    r["_ready_ts"] = ready[0][1] if ready else None


_STAMP = re.compile(r"(?:^|\s|\[)(?:(\d{4})-)?(\d\d)-(\d\d)[ T](\d\d:\d\d:\d\d)")


def _ready_times(con, rows, facts: _Facts) -> None:
    """time_to_ready_s; a ready line printed without a time (uvicorn's) takes that of the
    nearest stamped line before it (any line, typed or not), else of the last typed record."""
    unstamped = [rid for rid, r in rows.items() if r["ready_line"] is not None and r["_ready_ts"] is None]
    if unstamped:
        frame = pl.DataFrame({"run_id": unstamped, "ready_line": [rows[r]["ready_line"] for r in unstamped]},
                             schema={"run_id": pl.Int64, "ready_line": pl.Int64})
        before: dict[int, list[str]] = {}
        bounds = {r: (None, rows[r]["ready_line"]) for r in unstamped}
        for rid, raw in run_set(con, "before_ready", runs=unstamped, frames={"derive_ready": frame},
                                fmt={"near": near("line_no", bounds)}):
            before.setdefault(rid, []).append(raw)
        missing = []
        for rid in unstamped:
            year = facts.facts.get(rid, _RunFacts()).year
            rows[rid]["_ready_ts"] = _stamp_of(before.get(rid, []), year)
            if rows[rid]["_ready_ts"] is None:
                missing.append(rid)
        if missing:
            fallback = dict(run_set(con, "ts_before", runs=missing,
                                    frames={"derive_ready": frame.filter(pl.col("run_id").is_in(missing))}))
            for rid in missing:
                rows[rid]["_ready_ts"] = fallback.get(rid)
    for r in rows.values():
        ready_ts = r.pop("_ready_ts")
        r["time_to_ready_s"] = _secs(r["started_at"], ready_ts) if r["ready"] else None


def _stamp_of(raws: list[str], year):
    """The time of the first of ``raws`` (nearest first) that shows one."""
    for raw in raws:
        m = _STAMP.search(raw[:200])
        if m and (m.group(1) or year):
            try:
                return dt.datetime.strptime(f"{m.group(1) or year}-{m.group(2)}-{m.group(3)} {m.group(4)}",
                                            "%Y-%m-%d %H:%M:%S")
            except ValueError:
                continue
    return None


_POLARS = {"INTEGER": pl.Int64, "BIGINT": pl.Int64, "DOUBLE": pl.Float64, "BOOLEAN": pl.Boolean,
           "TIMESTAMP": pl.Datetime("us"), "VARCHAR": pl.Utf8}


def _insert_runs(con, rows: list[dict]) -> None:
    """All runs rows with one insert (each column typed as the table's; DuckDB casts the rest)."""
    if not rows:
        return
    types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                             "WHERE table_name = 'runs' AND table_schema = current_schema()").fetchall())
    cols = [c for c in types if any(c in r for r in rows)]
    data = {}
    for c in cols:
        values = [r.get(c) for r in rows]
        dtype = _POLARS.get(types[c])
        if dtype == pl.Int64 and any(isinstance(v, float) for v in values):
            dtype = pl.Float64  # a float for an integer column: DuckDB rounds it, as a bound parameter
        if dtype == pl.Utf8:
            values = [v if v is None or isinstance(v, str) else str(v) for v in values]
        data[c] = pl.Series(c, values, dtype=dtype) if dtype is not None else pl.Series(c, values)
    run_set(con, "", frames={"derive_new_runs": pl.DataFrame(data)},
            text=f"INSERT INTO runs ({', '.join(cols)}) SELECT {', '.join(cols)} FROM derive_new_runs")
