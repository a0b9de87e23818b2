"""Ingest one telemetry file: a ``sources`` row of its own kind, its typed rows, every line.

Contract: ``ingest_telemetry(con, src, kind, opts)`` stores the file ``src`` (an opened
``ingest.read.Source``) detected as ``kind`` (see ``detect.py``) in ONE transaction, with
the log pipeline's semantics: the same content (sha256) is skipped unless
``opts.replace``; a parse error raises ``BadInputError`` before anything is written, so
nothing is stored from a bad file. Every physical line is stored once in ``lines_other``
(``kind`` = the table it fed, or ``*_meta``/``*_header``/``snapshot`` for the lines that
frame the data), so ``lines`` reproduces the file and nothing is lost. ``opts.run`` (ingest
``--run``) attaches the file to that run by hand. A file ingested again from the same path
with new content (a loop still writing) replaces its earlier source. ``store_snapshot`` is the same for one
live scrape response (``logsleuth scrape``), appended to an open source.
"""
from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import polars as pl

from ..db import schema
from ..db.connection import fetch_one, transaction
from ..errors import BadInputError
from ..ingest.stages import redact_columns, redact_lines
from .bench_json import parse_bench_json
from .dcgm import dcgm_gpu_samples
from .gpu_text import parse_gpu_text
from .prometheus import parse_exposition

#: source kind -> the tool named in telemetry_sources.tool for files whose rows do not say
TOOLS = {"prometheus": "prometheus", "nvidia_smi_csv": "nvidia-smi", "nvidia_smi_dmon": "nvidia-smi dmon",
         "rocm_smi_csv": "rocm-smi", "amd_smi_csv": "amd-smi", "bench_json": "bench", "nccl_debug": "nccl"}


def insert(con, table: str, frame: pl.DataFrame | None) -> None:
    """Insert ``frame`` by column name (schema columns it lacks stay NULL)."""
    if frame is None or frame.height == 0:
        return
    present = [c for c in schema.columns(table) if c in frame.columns]
    _telemetry_rows = frame.select(present).to_arrow()  # noqa: F841 (read by name in SQL)
    names = ", ".join(f'"{c}"' for c in present)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _telemetry_rows")


def ensure_columns(con) -> None:
    """Databases created before the bench JSON columns existed get them (nullable, in place)."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'bench_results'").fetchall()}
    for col, typ in schema.BENCH_JSON_COLUMNS:
        if col not in have:
            con.execute(f'ALTER TABLE bench_results ADD COLUMN "{col}" {typ}')


def read_lines(src) -> list[str]:
    """All physical lines, decoded like the log reader does (UTF-8 with replacement), whole:
    a detailed bench result is one line of megabytes that must not be cut."""
    opener = gzip.open if src.compressed else open
    with opener(src.real_path, "rb") as fh:
        data = fh.read()
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line starts no line
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def parse_file(kind: str, lines: list[str], name: str, host: str | None = None) -> tuple[dict, dict]:
    """Typed frames per table and the kind of every line (0-based index -> kind)."""
    if kind == "prometheus":
        metrics, kinds = parse_exposition(lines, name)
        if metrics.height == 0:
            raise BadInputError(f"{name}: Prometheus text without a single sample")
        if host:
            metrics = metrics.with_columns(pl.coalesce(pl.col("host"), pl.lit(host)).alias("host"))
        return {"metrics": metrics, "gpu_samples": dcgm_gpu_samples(metrics)}, kinds
    if kind == "bench_json":
        results, requests, kinds = parse_bench_json(lines, name)
        return {"bench_results": results, "bench_requests": requests}, kinds
    if kind == "nccl_debug":  # the rows are derived from the stored lines (views nccl_channels, nccl_config)
        return {}, {i: "nccl" for i in range(len(lines))}
    samples, kinds = parse_gpu_text(kind, lines, name)
    return {"gpu_samples": samples}, kinds


def _lines_frame(lines: list[str], kinds: dict[int, str], source_id: int, run_id, first_line: int = 1) -> pl.DataFrame:
    n = len(lines)
    kind_list = [kinds.get(i, "unparsed") for i in range(n)]
    return pl.DataFrame({
        "source_id": pl.Series([source_id] * n, dtype=pl.Int32),
        "line_no": pl.Series(range(first_line, first_line + n), dtype=pl.Int64),
        "run_id": pl.Series([run_id] * n, dtype=pl.Int32),
        "kind": kind_list, "truncated": pl.Series([False] * n, dtype=pl.Boolean), "raw": lines,
    })


def _time_span(tables: dict) -> tuple:
    lo, hi = None, None
    for frame in tables.values():
        if frame is not None and frame.height and "ts" in frame.columns:
            ts = frame["ts"].drop_nulls()
            if len(ts):
                lo = min(lo, ts.min()) if lo else ts.min()
                hi = max(hi, ts.max()) if hi else ts.max()
    for frame in tables.values():  # bench results: started_at + duration
        if frame is not None and frame.height and "started_at" in frame.columns:
            for start, dur in frame.select("started_at", pl.col("duration_s") if "duration_s" in frame.columns
                                           else pl.lit(None)).iter_rows():
                if start is not None:
                    end = start + dt.timedelta(seconds=float(dur or 0))
                    lo = min(lo, start) if lo else start
                    hi = max(hi, end) if hi else end
    return lo, hi


def _first(frame, col):
    if frame is None or frame.height == 0 or col not in frame.columns:
        return None
    vals = frame[col].drop_nulls()
    return vals[0] if len(vals) else None


def _identity(kind: str, tables: dict) -> tuple[str, str | None, str | None]:
    """(tool, host, model) of a parsed telemetry file, from its rows where they say."""
    metrics, gpus, bench = tables.get("metrics"), tables.get("gpu_samples"), tables.get("bench_results")
    tool = _first(gpus, "tool") if kind != "prometheus" or _first(gpus, "tool") else None
    tool = tool or TOOLS[kind]
    if kind == "bench_json":
        tool = _first(bench, "tool") or tool
    model = _first(metrics, "model") or _first(bench, "model_id")
    host = _first(metrics, "host") or _first(gpus, "host")
    return tool, host, model


def ingest_telemetry(con, src, kind: str, opts):
    from ..ingest.stages import IngestResult

    existing = fetch_one(con.execute("SELECT source_id FROM sources WHERE sha256 = ?", [src.sha256]))
    if existing and not opts.replace:
        return IngestResult(src.display_name, "skipped", existing[0], kind, TOOLS[kind],
                            notes=["same content already ingested (sha256); use --replace to re-ingest"])
    notes = []
    if not existing and src.path != "-":
        # the same file again with other content (a scrape loop or GPU sampler still writing):
        # it replaces its earlier self, or every sample would be stored twice
        earlier = fetch_one(con.execute("SELECT source_id FROM sources WHERE path = ? AND kind = ?",
                                        [src.display_name, kind]))
        if earlier:
            existing = earlier
            notes.append(f"changed since it was ingested as source {earlier[0]}: replaced")
    run_id = getattr(opts, "run", None)
    if run_id is not None and not fetch_one(con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id])):
        raise BadInputError(f"--run {run_id}: no such run (see `logsleuth runs`)")
    lines = read_lines(src)
    # parse everything before writing anything: a bad file leaves no trace
    tables, kinds = parse_file(kind, lines, src.display_name)
    # the redaction policy of the logs (ingest/redact.py) on what is stored: the lines and every
    # parsed text value (label values, bench JSON fields such as base_url)
    lines = redact_lines(lines, getattr(opts, "keep_prompts", False))
    tables = {t: redact_columns(f, getattr(opts, "keep_prompts", False)) for t, f in tables.items()}
    first_ts, last_ts = _time_span(tables)
    tool, host, model = _identity(kind, tables)
    status = "replaced" if existing else "ingested"
    with transaction(con):
        for table in schema.PER_SOURCE_TABLES if existing else ():
            con.execute(f"DELETE FROM {table} WHERE source_id = ?", [existing[0]])
        ensure_columns(con)
        source_id = existing[0] if existing else int(fetch_one(con.execute(
            "SELECT coalesce(max(source_id), 0) + 1 FROM sources"))[0])
        con.execute(
            "INSERT INTO sources (source_id, path, name, sha256, bytes, n_lines, kind, engine, label, ingested_at,"
            " compressed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [source_id, src.display_name, Path(src.display_name).name, src.sha256, src.size, len(lines), kind,
             "telemetry", opts.label, dt.datetime.now(), src.compressed])
        sid = pl.lit(source_id, dtype=pl.Int32).alias("source_id")
        for table, frame in tables.items():
            if frame is not None and frame.height:
                insert(con, table, frame.with_columns(sid))
        insert(con, "lines_other", _lines_frame(lines, kinds, source_id, run_id))
        con.execute("INSERT INTO telemetry_sources (source_id, tool, host, model, first_ts, last_ts, run_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", [source_id, tool, host, model, first_ts, last_ts, run_id])
    gpus = tables.get("gpu_samples")
    if kind == "nvidia_smi_dmon" and (gpus is None or _first(gpus, "ts") is None):
        notes.append("dmon without -o T/TD has no timestamps: linked to runs only by folder or --run")
    return IngestResult(src.display_name, status, source_id, kind, tool, len(lines), [], notes)
