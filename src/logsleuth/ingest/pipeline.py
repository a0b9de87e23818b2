"""Ingest one log source into the database, as one transaction.

Contract: ``ingest_source(con, path, options)`` reads the file in chunks (bounded memory),
parses, folds, segments and stores every physical line exactly once in ``lines`` (with
the table that claimed it, or ``unparsed`` plus a mined template), fills the typed
tables, derives ``runs``, and commits. Re-ingesting content with the same sha256 is a
no-op unless ``replace``; any failure rolls the whole file back.
"""
from __future__ import annotations

from ..db.connection import fetch_one

import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from ..db import schema
from ..errors import BadInputError, LogsleuthError
from ..formats.grammar import default_grammars
from . import configparse
from .detect import detect
from .fold import fold
from .normalize import RunState, TimeState, add_timestamps, assign_runs
from .redact import redact_frame
from .parse import ShapeCache, extract, parse_frame, patterns_for
from .read import CHUNK_BYTES, _read_head, check_growth, iter_chunks, open_source


@dataclass
class IngestOptions:
    label: str | None = None
    replace: bool = False
    gpu: str | None = None
    year: int | None = None
    keep_prompts: bool = False
    chunk_bytes: int = CHUNK_BYTES
    progress: Callable[[int, int], None] | None = None  # (bytes_done, bytes_total)
    run: int | None = None  # ingest --run: attach telemetry files to this run by hand


@dataclass
class IngestResult:
    path: str
    status: str  # "ingested" | "skipped" | "replaced"
    source_id: int
    kind: str = ""
    engine: str = ""
    n_lines: int = 0
    run_ids: list = field(default_factory=list)
    notes: list = field(default_factory=list)


_EVENT_CORE = {"value", "text"}
_BASE = ["line_no", "ts", "run_id", "rank", "tp_rank", "dp_rank", "proc", "msg"]


def _insert(con, table: str, frame: pl.DataFrame) -> None:
    if frame is None or frame.height == 0:
        return
    cols = schema.columns(table)
    present = [c for c in cols if c in frame.columns]
    # DuckDB reads the Arrow table through a replacement scan of this local variable. Not
    # con.register(): a registered view is a catalog entry, and inside the one ingest
    # transaction an unregistered view (with the Arrow data it references) is only freed at
    # COMMIT, so memory grew with the file (5.6 GB for a 2 GB log).
    _logsleuth_rows = frame.select(present).to_arrow()  # noqa: F841 (read by name in SQL)
    names = ", ".join(f'"{c}"' for c in present)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _logsleuth_rows")


def _next_id(con, table: str, col: str) -> int:
    return int(fetch_one(con.execute(f"SELECT coalesce(max({col}), 0) + 1 FROM {table}"))[0])


#: DuckDB's memory cap while ingesting (env LOGSLEUTH_INGEST_MEMORY overrides). The whole
#: file is one transaction; with DuckDB's default cap (80% of RAM) it keeps the rows of the
#: open transaction in memory and peak RSS grows with the file (1.6 GB for 2 GB of log);
#: capped, it writes them out as it goes and RSS stays flat (0.7-0.9 GB; 256 MB: up to 1.0 GB).
INGEST_MEMORY = "160MB"


def ingest_source(con, path: str, opts: IngestOptions) -> IngestResult:
    src = open_source(path)
    from ..telemetry import ingest_telemetry, telemetry_kind  # metrics, GPU samples, bench JSON: own path

    if (kind := telemetry_kind(src)) is not None:
        try:
            return ingest_telemetry(con, src, kind, opts)
        finally:
            src.close()
    limit = os.environ.get("LOGSLEUTH_INGEST_MEMORY", INGEST_MEMORY)
    before = fetch_one(con.execute("SELECT current_setting('memory_limit')"))[0]
    try:
        con.execute(f"SET memory_limit = '{_memory_setting(limit)}'")
        result = _ingest_open(con, src, opts)
        if result.status != "skipped":
            # checkpoint now, under the cap: left to closing the connection it ran with the
            # default cap and took 2.3 GB for a 2 GB vLLM log
            con.execute("CHECKPOINT")
        return result
    finally:
        src.close()
        try:
            con.execute(f"SET memory_limit = '{before}'")
        except Exception:  # the connection may be gone after an interrupt: nothing to restore
            pass


def _memory_setting(text: str) -> str:
    if not re.fullmatch(r"\s*\d+(?:\.\d+)?\s*(?:[KMGT]i?B|B)?\s*", text, re.I):
        raise BadInputError(f"LOGSLEUTH_INGEST_MEMORY={text!r}: expected a size such as 256MB or 1GB")
    return text.strip()


def _ingest_open(con, src, opts: IngestOptions) -> IngestResult:
    existing = fetch_one(con.execute("SELECT source_id FROM sources WHERE sha256 = ?", [src.sha256]))
    if existing and not opts.replace:
        return IngestResult(src.display_name, "skipped", existing[0],
                            notes=["same content already ingested (sha256); use --replace to re-ingest"])
    grammars = default_grammars()
    head = _read_head(src.real_path, src.compressed, src.display_name, 256 * 1024).decode("utf-8", "replace")
    det = detect(head, grammars)
    parse_engine = det.engine
    if det.kind in ("bench", "unknown", "env_report"):
        sg, vl = det.scores.get("sglang", 0), det.scores.get("vllm", 0)
        parse_engine = "vllm" if vl > sg else ("sglang" if sg > 0 else "none")
    con.execute("BEGIN TRANSACTION")
    try:
        status = "ingested"
        if existing:
            _delete_source(con, existing[0])
            status = "replaced"
        source_id = existing[0] if existing else _next_id(con, "sources", "source_id")
        result = _run_pipeline(con, src, opts, grammars, det, parse_engine, source_id, head)
        result.status = status
        con.execute("COMMIT")
        return result
    except BaseException:
        try:  # the original error is the one to report (an interrupt may have ended the transaction)
            con.execute("ROLLBACK")
        except Exception:
            pass
        raise


def _delete_source(con, source_id: int) -> None:
    for table in schema.PER_SOURCE_TABLES:
        con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])


def _run_pipeline(con, src, opts, grammars, det, parse_engine, source_id, head) -> IngestResult:
    pats = patterns_for(grammars, parse_engine)
    by_name = {p.name: p for p in pats}
    launch_rank = {p.name: p.launch for p in pats if p.launch is not None}
    bench_columns = {}
    for g in grammars:
        bench_columns.update(g.extra.get("columns", {}))
    base_run = _next_id(con, "runs", "run_id")
    # runs are provisional ids base_run + ordinal; ordinal 0 holds lines before any launch
    rstate, tstate = RunState(base_run_id=base_run), TimeState()
    con.execute(
        "INSERT INTO sources (source_id, path, name, sha256, bytes, kind, engine, label, ingested_at, compressed)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [source_id, src.display_name, Path(src.display_name).name, src.sha256, src.size, det.kind,
         det.engine, opts.label, dt.datetime.now(), src.compressed])
    carry = None
    shapes = ShapeCache()  # pattern per line shape, reused across chunks
    spans: dict = {}  # field spans per pattern and shape (used by the store thread only)
    n_lines, done_bytes = 0, 0
    # storing a chunk (typed-row extraction and the DuckDB inserts) runs on one worker thread
    # while the next chunk is parsed: polars and DuckDB both release the GIL, so the two
    # cores overlap. At most one chunk waits to be stored (bounded memory); the connection
    # is only used by the worker until the loop ends; an error there is raised here.
    from concurrent.futures import ThreadPoolExecutor

    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="logsleuth-store")
    pending = None
    try:
        for chunk in _last_final(iter_chunks(src, opts.chunk_bytes)):
            # secrets (and prompts unless --keep-prompts) are masked before anything reads the text,
            # so lines, config, events, errors and templates never hold them
            fresh = redact_frame(chunk.frame, "raw", opts.keep_prompts)
            frame = fresh if carry is None else pl.concat([carry, fresh], how="vertical_relaxed")
            parsed = parse_frame(frame, grammars, parse_engine, shapes)
            folded = fold(parsed.frame, pats, bench_columns, final=chunk.final)
            carry = folded.carry
            f = add_timestamps(folded.frame, tstate, src.mtime, opts.year)
            f = assign_runs(f, launch_rank, rstate)
            if pending is not None:
                pending.result()
            pending = writer.submit(_store_chunk, con, f, folded, pats, by_name, source_id, opts, spans)
            n_lines += f.height
            done_bytes += int(chunk.frame.select(pl.col("raw").str.len_bytes().sum()).item() or 0)
            if opts.progress:
                opts.progress(min(done_bytes, src.size), src.size)
        if pending is not None:
            pending.result()
    finally:
        writer.shutdown(wait=True)
    check_growth(src)
    from ..derive.runs import finalize_source

    notes = []
    if det.kind == "unknown":
        notes.append("unknown format: stored as raw lines with mined templates")
    if src.grew:
        notes.append("file grew while ingesting: only the bytes present at start were read")
    if src.stats["bad_bytes"]:
        notes.append(f"{src.stats['bad_bytes']} invalid UTF-8 byte(s) replaced")
    if src.stats["nul_bytes"]:
        notes.append(f"{src.stats['nul_bytes']} NUL byte(s) replaced")
    if src.stats["truncated_lines"]:
        notes.append(f"{src.stats['truncated_lines']} over-long line(s) stored truncated")
    run_ids = finalize_source(con, source_id, det, src, tstate, base_run, opts, head)
    return IngestResult(src.display_name, "ingested", source_id, det.kind, det.engine, n_lines,
                        run_ids, notes)


def _last_final(chunks):
    """Mark the last chunk final (a file ending in a newline otherwise leaves its last
    record in the fold carry, and those lines were lost)."""
    prev = None
    for chunk in chunks:
        if prev is not None:
            yield prev
        prev = chunk
    if prev is not None:
        prev.final = True
        yield prev


def _attrs_json(frame: pl.DataFrame, extra_cols: list[str]) -> pl.Expr:
    if not extra_cols:
        return pl.lit(None, dtype=pl.Utf8)
    return pl.struct([pl.col(c) for c in extra_cols]).struct.json_encode()


def _store_chunk(con, f: pl.DataFrame, folded, pats, by_name, source_id: int, opts, spans: dict) -> None:
    bulk_patterns = [p.name for p in pats if p.bulk]
    sid = pl.lit(source_id, dtype=pl.Int32).alias("source_id")
    line_ctx = f.select("line_no", "ts", "run_id")
    tables = extract(f, pats, spans)
    tb_lines = set()
    if folded.errors is not None:
        tb_lines = set(folded.errors["line_no"].to_list()) | folded.inner_error_lines
    inner_kinds = {}
    for table, parts in tables.items():
        for part in parts:
            if "run_id" not in part.columns:  # (extract carries ts and run_id when the frame has them)
                part = part.join(line_ctx, on="line_no", how="left")
            if table == "events":
                _store_events(con, part, sid)
            elif table == "errors":
                in_tb = part.filter(pl.col("line_no").is_in(list(tb_lines)))
                for row in in_tb.select([c for c in ("line_no", "kind", "fatal") if c in in_tb.columns]).iter_rows(named=True):
                    inner_kinds[row["line_no"]] = row
                alone = part.filter(~pl.col("line_no").is_in(list(tb_lines)))
                if alone.height:
                    alone = alone.with_columns(
                        pl.coalesce([pl.col("message")] if "message" in alone.columns else [] + [pl.col("msg")]).alias("message")
                        if "message" in alone.columns else pl.col("msg").alias("message"))
                    _insert(con, "errors", alone.with_columns(sid))
            elif table == "config":
                _store_config(con, part, by_name, source_id)
            elif table in ("lines", "bench_results"):  # bench rows come from fold (one per block)
                continue
            else:
                _insert(con, table, part.with_columns(sid))
    if folded.errors is not None:
        _store_tracebacks(con, folded.errors, f, line_ctx, inner_kinds, by_name, sid)
    if folded.bench is not None:
        bench = folded.bench.join(line_ctx, on="line_no", how="left").with_columns(sid)
        _insert(con, "bench_results", bench)
    raw = pl.col("raw")  # (redacted on read)
    if f["raw"].str.contains("\x1b", literal=True).any():
        raw = raw.str.replace_all(r"\x1b\[[0-9;?]*[A-Za-z]", "")
    lines = f.select(
        sid, "line_no", "run_id",
        pl.coalesce(pl.col("table"), pl.lit("unparsed")).alias("kind"),
        pl.col("pattern"), pl.col("truncated"), raw.alias("raw"),
    )
    bulk = lines["pattern"].is_in(bulk_patterns).fill_null(False) if bulk_patterns else None
    if bulk is not None and bulk.any():
        _insert(con, "lines_bulk", lines.filter(bulk))
        lines = lines.filter(~bulk)
    _insert(con, "lines_other", lines)


def _store_events(con, part: pl.DataFrame, sid) -> None:
    fixed = {"line_no", "ts", "run_id", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg", "level",
             "date", "md", "time", "_kind", "_pattern", "value", "text"}
    extra = [c for c in part.columns if c not in fixed]
    ev = part.with_columns(
        pl.col("_kind").alias("kind"),
        pl.col("msg").str.slice(0, 2000).alias("message"),
        (pl.col("value").cast(pl.Float64, strict=False) if "value" in part.columns
         else pl.lit(None, dtype=pl.Float64)).alias("value"),
        (pl.col("text").cast(pl.Utf8) if "text" in part.columns else pl.lit(None, dtype=pl.Utf8)).alias("text"),
        _attrs_json(part, extra).alias("attrs"),
        sid,
    )
    _insert(con, "events", ev)


def _store_config(con, part: pl.DataFrame, by_name, source_id: int) -> None:
    rows = []
    for line_no, run_id, pattern, msg in part.select("line_no", "run_id", "_pattern", "msg").iter_rows():
        p = by_name[pattern]  # config dumps are rare lines: Python per line is fine here
        origin = p.config_source or p.parser
        for key, value in configparse.parse_config_line(p.parser, msg):
            rows.append((source_id, line_no, run_id, origin, key, value))
    if rows:
        frame = pl.DataFrame(rows, schema={"source_id": pl.Int32, "line_no": pl.Int64, "run_id": pl.Int32,
                                           "origin": pl.Utf8, "key": pl.Utf8, "value": pl.Utf8}, orient="row")
        _insert(con, "config", frame)


def _store_tracebacks(con, tb: pl.DataFrame, f, line_ctx, inner_kinds, by_name, sid) -> None:
    tb = tb.join(line_ctx, on="line_no", how="left")
    kinds, fatals = [], []
    for head_line, last_line, head_pattern, exc_type in tb.select(
            "line_no", "last_line", "head_pattern", "exc_type").iter_rows():
        p = by_name.get(head_pattern)
        kind = (p.const.get("kind") if p else None)
        fatal = (p.const.get("fatal") if p else None)
        # the last error line of the record names the exception that propagated: it decides first
        inner = [v for k, v in sorted(inner_kinds.items(), reverse=True) if head_line <= k <= last_line]
        head_row = inner_kinds.get(head_line)
        if head_row and head_row.get("kind"):
            kind = kind or head_row.get("kind")
        for v in inner:
            kind = kind or v.get("kind")
            fatal = fatal if fatal is not None else v.get("fatal")
        kinds.append(kind or (exc_type or "traceback"))
        fatals.append(bool(fatal) if fatal is not None else False)
    tb = tb.with_columns(pl.Series("kind", kinds, dtype=pl.Utf8), pl.Series("fatal", fatals, dtype=pl.Boolean),
                         sid)
    _insert(con, "errors", tb)
