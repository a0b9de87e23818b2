"""Derive per-run facts after a source's lines are stored.

Contract: ``finalize_source`` (called inside the ingest transaction) merges the lines
before the first launch into the first run (unless they hold activity of their own, a
tail of an earlier launch), mines templates for unclaimed lines, normalises speculative
metrics (derive/spec.py), marks the primary rank of stats lines (one per scheduler: per
DP rank, the lowest TP rank), stores environment-report facts, and writes one ``runs`` row
per run: identity (derive/identity.py: model, served name, canonical model key, printed
version, parallel layout), configuration, startup phase times, GPU context and how the run
ended with its one root cause (derive/end_state.py). A run starts where the server process
starts: lines before the first launch (a CI job's preamble) stay attached to the first run
as its context, but its ``first_line`` is the launch. Work is per run or per source in SQL
(queries/derive/); Python only touches a few aggregated values per run.
"""
from __future__ import annotations

from ..db.connection import fetch_one

import json
import re
from collections import Counter
from pathlib import Path

import polars as pl

from ..formats.check import checked_grammars
from ..formats import grammar as gdata
from ..gpus import env_report, hints as gpu_hints
from ..gpus.resolve import resolve_gpu
from ..db.connection import fetch_frame
from ..ingest.drain import mine_templates
from .end_state import derive_end_state
from .identity import model_identity, parallel_from_ranks, printed_version
from .spec import normalise_spec, spec_config
from .sql import sql

RUN_TABLES = ["lines_other", "lines_bulk", "config", "events", "decode_stats", "prefill_stats", "spec_stats", "errors",
              "bench_results"]

def _grammars(opts):
    """The grammars this ingest parsed with (cached): roles, era probes, aliases and markers
    are grammar data (parsers/*.toml), never names in this module."""
    return checked_grammars(getattr(opts, "grammar_dirs", ()))



def _q(con, sql, params=()):
    return con.execute(sql, list(params)).fetchall()


def _one(con, sql, params=()):
    row = fetch_one(con.execute(sql, list(params)))
    return row[0] if row else None


def finalize_source(con, source_id, det, src, tstate, base_run, opts, head) -> list[int]:
    n_lines = _one(con, "SELECT count(*) FROM lines WHERE source_id = ?", [source_id])
    con.execute(
        "UPDATE sources SET n_lines = ?, year_basis = ?, bad_bytes = ?, nul_bytes = ?, truncated_lines = ?,"
        " crlf_lines = ?, grew_during_ingest = ? WHERE source_id = ?",
        [n_lines, tstate.basis or None, src.stats["bad_bytes"], src.stats["nul_bytes"],
         src.stats["truncated_lines"], src.stats["crlf_lines"], src.grew, source_id])
    _mine_templates(con, source_id)
    if det.kind == "env_report":
        _store_env_report(con, source_id, src)
        for t in RUN_TABLES:
            con.execute(f"UPDATE {t} SET run_id = NULL WHERE source_id = ?", [source_id])
        refresh_gpu_for_directory(con, src.display_name, opts.gpu)
        return []
    run_ids = [r[0] for r in _q(con, "SELECT DISTINCT run_id FROM lines WHERE source_id = ? ORDER BY 1",
                                [source_id])]
    launch_start: dict = {}
    if base_run in run_ids:
        # the lines before the first launch share its id (ingest/normalize.RunState): they are
        # its context (a CI job's preamble, the environment it exported) unless they hold a run
        # of their own, the tail of an earlier launch, which takes the next free id
        grammars = _grammars(opts)
        start = _launch_start(con, source_id, base_run, _launch_patterns(grammars), gdata.role(grammars, "prelaunch"))
        if start is not None and _has_activity(con, source_id, base_run, before_line=start):
            tail = max(run_ids) + 1
            for t in RUN_TABLES:
                con.execute(f"UPDATE {t} SET run_id = ? WHERE source_id = ? AND run_id = ? AND line_no < ?",
                            [tail, source_id, base_run, start])
            run_ids.append(tail)
        elif start is not None:
            launch_start[base_run] = start
    # ordinals follow the file: a split-off tail comes first
    run_ids.sort(key=lambda rid: _one(con, "SELECT min(line_no) FROM lines WHERE source_id = ? AND run_id = ?",
                                      [source_id, rid]) or 0)
    era = _sglang_era(con, source_id, gdata.version_probes(_grammars(opts), "sglang")) \
        if "sglang" in (det.engine, *getattr(det, "run_engines", {}).values()) else None
    for ordinal, run_id in enumerate(run_ids, start=1):
        _mark_primary(con, run_id)
        _derive_run(con, source_id, run_id, ordinal, det, era, opts, launch_start.get(run_id))
    con.execute("INSERT INTO decode_primary SELECT * FROM decode_stats WHERE source_id = ? AND primary_rank",
                [source_id])
    return run_ids


def _launch_patterns(grammars) -> list[str]:
    return [p.name for g in grammars for p in g.patterns if p.launch is not None]


def _launch_start(con, source_id, run_id, launch_patterns: list[str], prelaunch: list[str]) -> int | None:
    """First line of the server process of the first launch in ``run_id``: the first non-blank
    line after the last line before the launch marker that no engine wrote (queries/derive/
    launch_start.sql: a CI job's steps, pip output, a banner of the batch script). None when
    everything before the marker is the process's own output."""
    names = ", ".join(f"'{p}'" for p in launch_patterns) or "''"
    row = fetch_one(con.execute(sql("launch_start").replace("{launch_patterns}", names), [source_id, run_id]))
    return row[0] if row else None


def _has_activity(con, source_id, run_id, before_line=None) -> bool:
    n = _one(con, """SELECT (SELECT count(*) FROM decode_stats WHERE source_id=$1 AND run_id=$2 AND line_no < $3)
                          + (SELECT count(*) FROM prefill_stats WHERE source_id=$1 AND run_id=$2 AND line_no < $3)
                          + (SELECT count(*) FROM bench_results WHERE source_id=$1 AND run_id=$2 AND line_no < $3)
                          + (SELECT count(*) FROM errors WHERE source_id=$1 AND run_id=$2 AND fatal AND line_no < $3)
                          + (SELECT count(*) FROM events WHERE source_id=$1 AND run_id=$2 AND line_no < $3
                             AND kind IN ('server_ready', 'app_startup_complete', 'cuda_graph_end',
                                          'weights_loaded'))""",
             [source_id, run_id, before_line if before_line is not None else 2 ** 62])
    return bool(n)


def _mine_templates(con, source_id) -> None:
    frame = fetch_frame(con, "SELECT line_no, raw FROM lines_other WHERE source_id = ? AND kind = 'unparsed' ORDER BY line_no",
                        [source_id])
    if frame.height == 0:
        return
    idx, templates = mine_templates(frame["raw"])
    base = int(_one(con, "SELECT coalesce(max(template_id), 0) FROM templates") or 0)
    examples = frame["line_no"].gather(templates["example_row"])
    tpl = templates.select(
        (pl.col("template_index").cast(pl.Int64) + base + 1).alias("template_id"),
        pl.lit(source_id, dtype=pl.Int32).alias("source_id"), "template",
        pl.col("n_lines").cast(pl.Int64), examples.alias("example_line_no"))
    con.register("_tpl", tpl.to_arrow())
    con.execute("INSERT INTO templates SELECT template_id, source_id, template, n_lines, example_line_no FROM _tpl")
    con.unregister("_tpl")
    assign = frame.select("line_no").with_columns((idx.cast(pl.Int64) + base + 1).alias("template_id"))
    con.register("_asg", assign.to_arrow())
    con.execute("UPDATE lines_other SET template_id = _asg.template_id FROM _asg "
                "WHERE lines_other.source_id = ? AND lines_other.line_no = _asg.line_no", [source_id])
    con.unregister("_asg")


def _store_env_report(con, source_id, src) -> None:
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


def _mark_primary(con, run_id) -> None:
    for t in ("decode_stats", "prefill_stats"):
        con.execute(sql("primary_rank").replace("{table}", t), [run_id])


_ERA_SAMPLE = 50_000


def _sglang_era(con, source_id, probes: list) -> str | None:
    """SGLang's format era from the line shapes only some releases printed: the grammar's
    [[version_probe]] list (regex probes first, then LIKE probes in order; first match wins)."""
    like_probes = [p for p in probes if p.like]
    if not probes:
        return None
    sel = ", ".join("count(*) FILTER (WHERE raw LIKE ?)" for _ in like_probes) or "0"
    # one SGLang version writes one format: the first 50,000 stats lines tell as well as all
    # of them (a 2 GB log has 12 million)
    sample = f"""(SELECT raw FROM lines_other WHERE source_id = $1
                 UNION ALL (SELECT raw FROM lines_bulk WHERE source_id = $1 LIMIT {_ERA_SAMPLE}))"""
    for probe in probes:
        if probe.regex and _one(con, f"SELECT count(*) FROM {sample} WHERE regexp_matches(raw, $2)",
                                [source_id, probe.regex]):
            return probe.era
    sample_q = sample.replace("$1", "?")
    counts = fetch_one(con.execute(f"SELECT {sel} FROM {sample_q}",
                                   [p.like for p in like_probes] + [source_id, source_id]))
    for probe, n in zip(like_probes, counts):
        if n:
            return probe.era
    return None


def _config(con, run_id) -> dict:
    rows = _q(con, "SELECT key, value, origin FROM config WHERE run_id = ? ORDER BY line_no", [run_id])
    out: dict = {}
    for k, v, origin in rows:
        out[k] = v
        out[f"{origin}:{k}"] = v
    return out


def _int(v):
    try:
        return int(float(v)) if v not in (None, "", "None") else None
    except (TypeError, ValueError):
        return None


def _truthy(v) -> bool | None:
    if v is None:
        return None
    return str(v).strip().lower() in ("true", "1", "yes")


def _events(con, run_id, kind, cols="line_no, ts, value, text, attrs, tp_rank"):
    return _q(con, f"SELECT {cols} FROM events WHERE run_id = ? AND kind = ? ORDER BY line_no", [run_id, kind])


def _derive_run(con, source_id, run_id, ordinal, det, era, opts, launch_start=None) -> None:
    cfg = _config(con, run_id)
    # a file may hold launches of several engines: each run has the one it was parsed with
    engine = (getattr(det, "run_engines", {}).get(run_id) or det.engine) if det.kind == "server_log" else det.kind
    first_line, last_line = fetch_one(con.execute(
        "SELECT min(line_no), max(line_no) FROM lines WHERE run_id = ?", [run_id]))
    first_line = launch_start or first_line  # the run starts where the server process starts
    started_at, ended_at = fetch_one(con.execute("""
        SELECT min(ts), max(ts) FROM (
          SELECT ts, line_no FROM events WHERE run_id = $1 UNION ALL SELECT ts, line_no FROM decode_stats WHERE run_id = $1
          UNION ALL SELECT ts, line_no FROM prefill_stats WHERE run_id = $1 UNION ALL SELECT ts, line_no FROM errors WHERE run_id = $1
          UNION ALL SELECT ts, line_no FROM spec_stats WHERE run_id = $1) WHERE line_no >= $2""", [run_id, first_line]))
    r: dict = {"run_id": run_id, "source_id": source_id, "ordinal": ordinal, "engine": engine,
               "first_line": first_line, "last_line": last_line, "started_at": started_at,
               "ended_at": ended_at, "label": opts.label}
    g = cfg.get
    banner = _events(con, run_id, "version_banner")
    r["engine_version"] = (banner[0][3] if banner else None) or g("engine_version") or \
        printed_version(con, source_id, run_id, engine)
    if engine == "vllm" and r["engine_version"]:
        r["engine_version"] = r["engine_version"].split("+")[0]
    r["format_era"] = era if engine == "sglang" else _vllm_era(con, run_id, r["engine_version"],
                                                                         gdata.role(_grammars(opts), "engine_banner"))
    logo_model = _events(con, run_id, "banner_model")
    r.update(model_identity(cfg, engine, logo_model[0][3] if logo_model else None))
    arch = _events(con, run_id, "weights_loaded") if engine == "sglang" else _events(con, run_id, "model_arch")
    r["model_arch"] = next((a[3] for a in arch if a[3]), None)
    r["quantization"] = g("quantization") if g("quantization") not in ("None",) else None
    r["kv_cache_dtype"] = g("kv_cache_dtype")
    r["tp_size"] = _int(g("tp_size") or g("tensor_parallel_size"))
    r["dp_size"] = _int(g("dp_size") or g("data_parallel_size"))
    r["parallel_source"] = "configuration" if (r["tp_size"] or r["dp_size"]) else None
    if r["tp_size"] is None or r["dp_size"] is None:
        tp_seen, dp_seen = parallel_from_ranks(con, run_id)
        if r["tp_size"] is None and tp_seen and tp_seen > 1 or r["dp_size"] is None and dp_seen and dp_seen > 1:
            r["tp_size"] = r["tp_size"] or tp_seen
            r["dp_size"] = r["dp_size"] or dp_seen
            r["parallel_source"] = (r["parallel_source"] + " + " if r["parallel_source"] else "") + \
                "rank tags (DPn/TPn on the lines: highest rank seen + 1)"
    r["tp_size"] = r["tp_size"] or (1 if cfg else None)
    r["dp_size"] = r["dp_size"] or (1 if cfg else None)
    r["pp_size"] = _int(g("pp_size") or g("pipeline_parallel_size")) or (1 if cfg else None)
    r["ep_size"] = _int(g("ep_size") or g("expert_parallel_size"))
    _attention(con, run_id, cfg, r, gdata.aliases(_grammars(opts), "attention_backend", r.get("engine")))
    r.update(spec_config(cfg, engine))
    _graphs_and_limits(con, run_id, cfg, r, engine)
    _startup_times(con, run_id, r, engine)
    derive_end_state(con, run_id, r, gdata.markers(_grammars(opts), "kill"))
    normalise_spec(con, run_id, r, engine)
    _gpu(con, run_id, source_id, r, opts.gpu, getattr(opts, "env_files", ()))
    cols = list(r)
    con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                [r[c] for c in cols])


def _vllm_era(con, run_id, version, banners: list[str]) -> str | None:
    """vLLM version and engine generation; ``banners``: patterns of the grammar role
    "engine_banner" (the "Initializing a V1 LLM engine ... with config:" line)."""
    v1 = _one(con, "SELECT count(*) FROM config WHERE run_id = ? AND key = 'engine_version'", [run_id])
    marks = ", ".join("?" for _ in banners)
    text = _one(con, f"SELECT any_value(raw) FROM lines WHERE run_id = ? AND pattern IN ({marks})",
                [run_id, *banners]) if banners else None
    engine = None
    if text:
        engine = "V1" if "V1 LLM engine" in text else ("V0" if "V0 LLM engine" in text else None)
    if engine is None:
        swapped = _one(con, "SELECT count(*) FROM decode_stats WHERE run_id = ? AND swapped_reqs IS NOT NULL", [run_id])
        v1stats = _one(con, "SELECT count(*) FROM decode_stats WHERE run_id = ? AND engine_idx IS NOT NULL", [run_id])
        engine = "V0" if swapped else ("V1" if v1stats else None)
    del v1
    parts = [p for p in (f"v{version}" if version else None, engine) if p]
    return " ".join(parts) or None


def _attention(con, run_id, cfg, r, backend_aliases: dict[str, str]) -> None:
    chosen = [e[3] for e in _events(con, run_id, "attention_backend") if e[3]]
    default = [e[3] for e in _events(con, run_id, "attention_backend_default") if e[3]]
    cfg_backend = cfg.get("attention_backend")
    if chosen:
        name, how = Counter(chosen).most_common(1)[0][0], "selected (logged)"
    elif default:
        name, how = default[0], "default (logged)"
    elif cfg_backend not in (None, "None"):
        explicit = cfg_backend
        name, how = explicit, "server_args"
    else:
        name, how = None, None
    if name:  # spellings vary by version (grammar [aliases.attention_backend]); SGLang's are ids already
        name = backend_aliases.get(name.lower(), name)
    r["attention_backend"], r["attention_backend_how"] = name, how


def _graphs_and_limits(con, run_id, cfg, r, engine) -> None:
    g = cfg.get
    limits = _events(con, run_id, "limits")
    lim = json.loads(limits[0][4]) if limits and limits[0][4] else {}
    if engine == "sglang":
        disabled = _truthy(g("disable_cuda_graph"))
        r["cuda_graph"] = (not disabled) if disabled is not None else None
        bs = _events(con, run_id, "cuda_graph_bs")
        r["cuda_graph_max_bs"] = (int(bs[0][2]) if bs and bs[0][2] is not None else None) or \
            _int(g("cuda_graph_max_bs_decode") or g("cuda_graph_max_bs"))
        r["max_running_requests"] = _int(lim.get("max_running_requests")) or _int(g("max_running_requests"))
        r["context_len"] = _int(lim.get("context_len")) or _int(g("context_length"))
        kv = limits[0][2] if limits else None
        if kv is None:
            alloc = _events(con, run_id, "kv_cache_allocated")
            kv = alloc[0][2] if alloc else None
        r["kv_cache_tokens"] = _int(kv)
    else:
        eager = _truthy(g("enforce_eager"))
        eager_ev = _one(con, "SELECT count(*) FROM events WHERE run_id = ? AND kind IN ('enforce_eager', 'cuda_graph_disabled_eager')", [run_id])
        r["cuda_graph"] = False if (eager or eager_ev) else (True if (cfg or eager is not None) else None)
        r["max_running_requests"] = _int(g("max_num_seqs"))
        mml = _events(con, run_id, "max_model_len")
        r["context_len"] = _int(mml[0][2]) if mml else _int(g("max_model_len") or g("max_seq_len"))
        kv = _events(con, run_id, "kv_cache_tokens")
        if kv:
            r["kv_cache_tokens"] = _int(kv[0][2])
        else:
            blocks = _events(con, run_id, "kv_blocks")
            bsz = _int(g("block_size")) or 16
            r["kv_cache_tokens"] = _int(blocks[0][2]) * bsz if blocks and blocks[0][2] else None
        truncated = _events(con, run_id, "cudagraph_truncated")
        r["cuda_graph_max_bs"] = _int(truncated[0][2]) if truncated else None


def _secs(a, b):
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def _startup_times(con, run_id, r, engine) -> None:
    """Phase times on the primary (lowest) rank, the rank SGLang and vLLM report for the whole
    server: weight loading of the target model (the first load on that rank; a speculative draft
    model loads after it) and CUDA-graph capture (the sum of the target's capture phases)."""
    if engine == "sglang":
        rk = _one(con, """SELECT min(coalesce(tp_rank, -1)) FROM events WHERE run_id = ?
                          AND kind IN ('weights_begin', 'weights_loaded')""", [run_id])
        end = fetch_one(con.execute("""SELECT line_no, ts, attrs FROM events WHERE run_id = ? AND kind = 'weights_loaded'
                                       AND coalesce(tp_rank, -1) = ? ORDER BY line_no LIMIT 1""", [run_id, rk]))
        elapsed = json.loads(end[2]).get("elapsed_s") if end and end[2] else None
        if elapsed is not None:
            r["weight_load_s"] = float(elapsed)
        elif end:
            begin = _one(con, """SELECT max(ts) FROM events WHERE run_id = ? AND kind = 'weights_begin'
                                 AND coalesce(tp_rank, -1) = ? AND line_no < ?""", [run_id, rk, end[0]])
            r["weight_load_s"] = _secs(begin, end[1]) if begin and end[1] else None
        r["cuda_graph_capture_s"] = _one(con, """
            SELECT round(sum(value), 3) FROM events WHERE run_id = $1
              AND kind IN ('cuda_graph_end', 'cuda_graph_piecewise_end')
              AND coalesce(json_extract_string(attrs, '$.role'), 'target') <> 'draft'
              AND coalesce(tp_rank, -1) = (SELECT min(coalesce(tp_rank, -1)) FROM events
                                           WHERE run_id = $1 AND kind = 'cuda_graph_end')""", [run_id])
        ready = _events(con, run_id, "server_ready")
    else:
        took = _one(con, "SELECT max(value) FROM events WHERE run_id = ? AND kind = 'weights_loaded'", [run_id])
        took = took if took is not None else _one(
            con, "SELECT max(value) FROM events WHERE run_id = ? AND kind = 'weights_load_time'", [run_id])
        r["weight_load_s"] = took
        r["cuda_graph_capture_s"] = _one(con, """SELECT value FROM events WHERE run_id = ? AND kind = 'cuda_graph_end'
                                                  ORDER BY coalesce(tp_rank, -1), proc IS NOT NULL, line_no LIMIT 1""",
                                         [run_id])  # V0: the unprefixed driver is rank 0
        api = _events(con, run_id, "api_server_start")
        startup = _events(con, run_id, "app_startup_complete")
        if api:  # the engine's own uvicorn start follows "Starting vLLM API server"
            startup = [e for e in startup if e[0] > api[0][0]] or startup
        ready = startup or api
    r["ready"] = bool(ready)
    r["ready_line"] = ready[0][0] if ready else None
    ready_ts = ready[0][1] if ready else None
    if ready and ready_ts is None:  # uvicorn lines carry no timestamp: take the last one before
        ready_ts = _last_ts_before(con, run_id, ready[0][0])
    r["time_to_ready_s"] = _secs(r["started_at"], ready_ts) if ready else None


_STAMP = re.compile(r"(?:^|\s|\[)(?:(\d{4})-)?(\d\d)-(\d\d)[ T](\d\d:\d\d:\d\d)")


def _last_ts_before(con, run_id, line_no):
    """Timestamp of the nearest stamped line before ``line_no`` (any line, typed or not)."""
    import datetime as dt

    year = _one(con, "SELECT year(min(ts)) FROM events WHERE run_id = ?", [run_id])
    for (raw,) in _q(con, """SELECT raw FROM lines WHERE run_id = ? AND line_no < ? ORDER BY line_no DESC
                            LIMIT 200""", [run_id, line_no]):
        m = _STAMP.search(raw[:200])
        if m and (m.group(1) or year):
            try:
                return dt.datetime.strptime(f"{m.group(1) or year}-{m.group(2)}-{m.group(3)} {m.group(4)}",
                                            "%Y-%m-%d %H:%M:%S")
            except ValueError:
                continue
    return _one(con, """SELECT max(ts) FROM (
          SELECT ts, line_no FROM events WHERE run_id = $1 UNION ALL SELECT ts, line_no FROM decode_stats WHERE run_id = $1
          UNION ALL SELECT ts, line_no FROM prefill_stats WHERE run_id = $1 UNION ALL SELECT ts, line_no FROM errors WHERE run_id = $1
          UNION ALL SELECT ts, line_no FROM spec_stats WHERE run_id = $1) WHERE line_no < $2""", [run_id, line_no])


def _gpu(con, run_id, source_id, r, explicit, env_files=()) -> None:
    path = _one(con, "SELECT path FROM sources WHERE source_id = ?", [source_id]) or ""
    facts = _env_facts_near(con, path, env_files)
    likes = gpu_hints.prefilter_likes()  # parsers/env_reports.toml [hints] prefilter
    like = " OR ".join("raw LIKE ?" for _ in likes)
    rows = _q(con, f"SELECT raw FROM lines_other WHERE run_id = ? AND ({like}) ORDER BY line_no LIMIT 3000",
              [run_id, *likes])
    hints = gpu_hints.gpu_hints_from_text([x[0] for x in rows])
    ctx = resolve_gpu(explicit, facts, hints)
    _npu_override(con, run_id, ctx, explicit)
    source = ctx.source
    if source and source.startswith("env_report"):  # say which report, so the attachment is visible
        source += " from " + ", ".join(sorted({row[11] for row in _nearest_reports(con, path, env_files)})) + \
            (" (--env)" if env_files else " (nearest by folder)")
    r.update({"gpu_name": ctx.name, "gpu_count": ctx.count, "gpu_cc": ctx.cc, "gpu_sm": ctx.sm,
              "gpu_vendor": ctx.vendor, "gpu_memory_gib": ctx.memory_gib, "gpu_interconnect": ctx.interconnect,
              "gpu_source": source})


def _npu_override(con, run_id, ctx, explicit) -> None:
    """Huawei Ascend NPUs (SGLang/vLLM-Ascend builds: ``npu graph: True`` decode lines, torch_npu,
    ``Ascend910B3`` device names) are named as the log names them, never guessed as a GPU vendor."""
    if explicit:
        return
    row = fetch_one(con.execute(sql("npu_evidence"), [run_id]))
    if not row or not row[0]:
        return
    ctx.vendor = "ascend"
    ctx.name = row[1] or (ctx.name if ctx.name and "ascend" in ctx.name.lower() else "Huawei Ascend NPU")
    ctx.cc = ctx.sm = None
    ctx.source = f"log_hint:npu ({row[2]})"


def _report_distance(log_folder: Path, report_folder: Path) -> float | None:
    """How near an environment report is to a log: its own folder (0), a subfolder of it such as
    ``env/`` (0.5), an ancestor (1, 2, ...); None when the report lives elsewhere (a sibling
    folder of logs from other machines says nothing about this log's)."""
    anc = [log_folder, *log_folder.parents]
    if report_folder in anc:
        return float(anc.index(report_folder))
    if report_folder.parent == log_folder:
        return 0.5
    return None


def _nearest_reports(con, path: str, env_files=()) -> list:
    """The environment reports given with --env (when any), else the ones nearest to a log
    (all at the smallest distance)."""
    rows = _q(con, """SELECT e.kind, e.vendor, e.gpu_name, e.gpu_count, e.gpu_cc, e.gpu_sm, e.gpu_memory_gib,
                             e.interconnect, e.torch_cuda, e.nccl_version, e.env, s.path
                      FROM env_reports e JOIN sources s USING (source_id) ORDER BY s.source_id""")
    if env_files:
        wanted = {str(Path(f).resolve()) for f in env_files}
        return [row for row in rows if str(Path(row[11]).resolve()) in wanted]
    folder = Path(path).resolve().parent if path else None
    scored = []
    for row in rows:
        d = _report_distance(folder, Path(row[11]).resolve().parent) if folder else None
        if d is not None:
            scored.append((d, row))
    if not scored:
        return []
    best = min(d for d, _ in scored)
    return [row for d, row in scored if d == best]


def _env_facts_near(con, path: str, env_files=()) -> list:
    out = []
    for row in _nearest_reports(con, path, env_files):
        out.append(env_report.EnvFacts(kind=row[0], vendor=row[1], gpu_name=row[2], gpu_count=row[3],
                                     compute_capability=row[4], sm=row[5], memory_gib=row[6],
                                     interconnect=row[7], torch_cuda=row[8], nccl_version=row[9],
                                     env=json.loads(row[10] or "{}")))
    return out


def refresh_gpu_for_directory(con, report_path: str, explicit) -> None:
    """An environment report arrived: recompute the GPU context of runs whose logs it is
    nearest to (same folder, an ancestor's, or a sibling subfolder such as env/)."""
    report_folder = Path(report_path).resolve().parent
    for run_id, source_id, path in _q(con, "SELECT r.run_id, r.source_id, s.path FROM runs r JOIN sources s USING (source_id)"):
        if _report_distance(Path(path).resolve().parent, report_folder) is None:
            continue
        r: dict = {}
        _gpu(con, run_id, source_id, r, explicit)
        sets = ", ".join(f"{k} = ?" for k in r)
        con.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", [*r.values(), run_id])
