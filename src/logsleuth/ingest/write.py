"""Store parsed chunks: typed rows and every line, through one writer.

Contract: ``store_chunk(con, frame, folded, ..., tables, bulk_lines)`` inserts the typed
rows of a parsed, folded, stamped chunk (``tables``: per table, as ingest/extract.py cuts
them, with ``ts`` and ``run_id``: events, stats, config, errors), the folded tracebacks and
benchmark blocks, and each of its lines into ``lines_other``, or into ``lines_bulk`` through
the source's ``BulkLines`` (whole row groups; ``flush`` once the source is read), the events
of those bulk lines into ``events_bulk`` and the other events into ``events_other``; frames go
to DuckDB as Arrow tables, by column name. ``delete_from_line`` removes the rows of a source from a line on
(the open tail an append rebuilds); ``reset_derived`` removes what run derivation adds, so
that deriving again gives what one ingest of the whole file gives.
"""
from __future__ import annotations

import polars as pl

from ..db import schema
from . import configparse


def insert(con, table: str, frame: pl.DataFrame) -> None:
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


def _attrs_json(frame: pl.DataFrame, extra_cols: list[str]) -> pl.Expr:
    if not extra_cols:
        return pl.lit(None, dtype=pl.Utf8)
    return pl.struct([pl.col(c) for c in extra_cols]).struct.json_encode()


#: rows of a DuckDB row group
ROW_GROUP_ROWS = 122_880


class BulkLines:
    """The ``lines_bulk`` rows of one source, inserted in whole row groups.

    DuckDB writes the full row groups of a large insert to the database file while the
    transaction runs; a chunk's insert ending in a partial row group made it write some of
    them again at COMMIT, and the first copies stayed behind as free blocks (a generated 30 MB
    vLLM log: 64 blocks of which 12 free; inserted in whole row groups: 52, none free).
    Inserting multiples of a row group and keeping the rest for the next chunk avoids that. At
    most one row group waits here; ``flush`` stores it when the source's lines are all read."""

    def __init__(self, con):
        self.con = con
        self.rest: pl.DataFrame | None = None

    def add(self, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        if self.rest is not None:
            frame = pl.concat([self.rest, frame], how="vertical_relaxed")
        whole = frame.height // ROW_GROUP_ROWS * ROW_GROUP_ROWS
        if whole:
            insert(self.con, "lines_bulk", frame.head(whole))
        self.rest = frame.slice(whole) if frame.height > whole else None

    def flush(self) -> None:
        if self.rest is not None:
            insert(self.con, "lines_bulk", self.rest)
            self.rest = None


def store_chunk(con, f: pl.DataFrame, folded, pats, by_name, source_id: int | pl.Expr, tables: dict,
                bulk_lines: BulkLines) -> None:
    bulk_patterns = [p.name for p in pats if p.bulk]
    # an expression gives each row its source from its columns (ingest/batch_frame.py stores
    # the small files of a batch at once)
    sid = (source_id if isinstance(source_id, pl.Expr) else pl.lit(source_id, dtype=pl.Int32)).alias("source_id")
    line_ctx = f.select("line_no", "ts", "run_id")
    tb_lines = set()
    if folded.errors is not None:
        tb_lines = set(folded.errors["line_no"].to_list()) | folded.inner_error_lines
    inner_kinds = {}
    for table, parts in tables.items():
        if table == "events":
            _store_events(con, parts, sid, bulk_patterns)
            continue
        for part in parts:
            if table == "errors":
                in_tb = part.filter(pl.col("line_no").is_in(list(tb_lines)))
                for row in in_tb.select([c for c in ("line_no", "kind", "fatal") if c in in_tb.columns]).iter_rows(named=True):
                    inner_kinds[row["line_no"]] = row
                alone = part.filter(~pl.col("line_no").is_in(list(tb_lines)))
                if alone.height:
                    alone = alone.with_columns(
                        pl.coalesce([pl.col("message")] if "message" in alone.columns else [] + [pl.col("msg")]).alias("message")
                        if "message" in alone.columns else pl.col("msg").alias("message"))
                    insert(con, "errors", alone.with_columns(sid))
            elif table == "config":
                _store_config(con, part, by_name, sid)
            elif table in ("lines", "bench_results"):  # bench rows come from fold (one per block)
                continue
            else:
                insert(con, table, part.with_columns(sid))
    if folded.errors is not None:
        _store_tracebacks(con, folded.errors, f, line_ctx, inner_kinds, by_name, sid)
    if folded.bench is not None:
        bench = folded.bench.join(line_ctx, on="line_no", how="left").with_columns(sid)
        insert(con, "bench_results", bench)
    raw = pl.col("raw")  # the input line byte for byte, redacted on read (colour codes kept)
    if "_line" in f.columns:  # a wrapped line: raw is what the wrapper held (ingest/unwrap.py)
        raw = pl.coalesce(pl.col("_line"), raw)
    lines = f.select(
        sid, "line_no", "run_id",
        pl.coalesce(pl.col("table"), pl.lit("unparsed")).alias("kind"),
        pl.col("pattern"), pl.col("truncated"), raw.alias("raw"),
    )
    bulk = lines["pattern"].is_in(bulk_patterns).fill_null(False) if bulk_patterns else None
    if bulk is not None and bulk.any():
        bulk_lines.add(lines.filter(bulk))
        lines = lines.filter(~bulk)
    insert(con, "lines_other", lines)


def _store_events(con, parts: list[pl.DataFrame], sid, bulk_patterns: list[str]) -> None:
    """The events of a chunk (one frame per pattern): those of bulk patterns (one per request:
    HTTP access lines, request logs) into ``events_bulk``, like their lines into
    ``lines_bulk``; the rest (milestones, notices) into ``events_other``. The ``events`` view is
    both. One insert per table: a chunk of a busy log has dozens of event patterns with a few
    rows each, and an insert costs ~3 ms whatever its size."""
    if not parts:
        return
    columns = schema.columns("events_other") + ["_pattern"]
    rows = [_event_rows(part, sid) for part in parts]
    ev = rows[0] if len(rows) == 1 else pl.concat(
        [r.select([c for c in columns if c in r.columns]) for r in rows], how="diagonal_relaxed")
    bulk = ev["_pattern"].is_in(bulk_patterns).fill_null(False) if bulk_patterns else None
    if bulk is not None and bulk.any():
        insert(con, "events_bulk", ev.filter(bulk))
        ev = ev.filter(~bulk)
    insert(con, "events_other", ev)


def _event_rows(part: pl.DataFrame, sid) -> pl.DataFrame:
    """The events rows of one pattern's typed rows: fields beyond the event columns go to ``attrs``."""
    fixed = {"line_no", "ts", "run_id", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg", "level",
             "date", "md", "time", "_kind", "_pattern", "value", "text"}
    extra = [c for c in part.columns if c not in fixed]
    return part.with_columns(
        pl.col("_kind").alias("kind"),
        pl.col("msg").str.slice(0, 2000).alias("message"),
        (pl.col("value").cast(pl.Float64, strict=False) if "value" in part.columns
         else pl.lit(None, dtype=pl.Float64)).alias("value"),
        (pl.col("text").cast(pl.Utf8) if "text" in part.columns else pl.lit(None, dtype=pl.Utf8)).alias("text"),
        _attrs_json(part, extra).alias("attrs"),
        sid,
    )


def _store_config(con, part: pl.DataFrame, by_name, sid: pl.Expr) -> None:
    rows = []
    for line_no, run_id, pattern, msg in part.select("line_no", "run_id", "_pattern", "msg").iter_rows():
        p = by_name[pattern]  # config dumps are rare lines: Python per line is fine here
        origin = p.config_source or p.parser
        for key, value in configparse.parse_config_line(p.parser, msg):
            rows.append((line_no, run_id, origin, key, value))
    if rows:
        frame = pl.DataFrame(rows, schema={"line_no": pl.Int64, "run_id": pl.Int32,
                                           "origin": pl.Utf8, "key": pl.Utf8, "value": pl.Utf8}, orient="row")
        insert(con, "config", frame.with_columns(sid))


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
    insert(con, "errors", tb)


#: tables holding rows tied to a line of a source (deleted from the resume line on by an append)
LINE_TABLES = ["lines_other", "lines_bulk", "config", "events_other", "events_bulk", "decode_stats", "prefill_stats",
               "spec_stats", "errors", "bench_results"]


def delete_from_line(con, source_id: int, line_no: int) -> None:
    """Remove the rows of ``source_id`` from ``line_no`` on (the open tail, rebuilt by an append)."""
    for table in LINE_TABLES:
        con.execute(f"DELETE FROM {table} WHERE source_id = ? AND line_no >= ?", [source_id, line_no])


def reset_derived(con, source_id: int) -> None:
    """Remove the rows run derivation (derive/runs.py ``finalize_source``) adds for a source,
    so that it can run again over the grown source: runs, templates and their assignment,
    the primary-rank copy, environment-report facts, and the spec rows SGLang decode lines
    give."""
    for table in ("runs", "templates", "decode_primary", "env_reports"):
        con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])
    con.execute("DELETE FROM spec_stats WHERE source_id = ? AND origin = 'sglang_decode'", [source_id])
    con.execute("UPDATE lines_other SET template_id = NULL WHERE source_id = ? AND template_id IS NOT NULL",
                [source_id])
