"""One large file parsed as byte ranges on several tasks, stored as if ingested whole.

Contract: ``build_range(job)`` (a task) parses, folds and stores the lines of one byte range
(``fleet/split.py`` cut it at a launch boundary) into a private database with its true first
line number and the run state carried into it, stages its rows as Parquet under
``_staging/`` of the dataset, and reports the states it ended in. ``merge_ranges(job)`` (a
task) checks every seam: the run count, the launch sequence, the launch chatter, the engine,
the year of vLLM timestamps, and that no record (traceback, benchmark block, prompt) is
open across it; then it loads the staged rows in order into one database and derives runs,
templates and everything per source exactly as a whole-file ingest does, and writes the
part files. A seam that disagrees, or a range that failed, makes it ingest the file whole
instead (``BuiltSource.note`` says which): the result is that of an unsplit ingest either
way. The parse (the bulk of the work) runs in parallel; the derivation once per file.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..scratch import scratch_dir
from .parts import BuiltSource, PartFailure, SourceJob, build_parts_safe, export_parts, task_options
from .split import ByteRange
from .sql import fleet_sql
from .storage import storage_for

#: lines after a seam read to check that no record continues across it
SEAM_LOOKAHEAD_LINES = 200
_SEAM_LOOKAHEAD_BYTES = 1 << 20
#: a year of vLLM timestamps that turned over at a seam shows as time going back this far
_ROLLOVER = dt.timedelta(days=150)


@dataclass
class RangeJob:
    job: SourceJob
    range: ByteRange
    staging: str  # folder (relative to the dataset root) for this source's staged rows
    next_first_line: int | None = None  # first line of the next range (None: the last range)

    @property
    def path(self) -> str:
        return self.job.path


@dataclass
class RangeOutcome:
    index: int
    n_lines: int
    staged: dict  # table -> staged file (relative to the dataset root)
    seam: dict = field(default_factory=dict)  # the states the range ended in (see _seam_state)


@dataclass
class MergeJob:
    job: SourceJob
    ranges: list  # ByteRange, in file order
    outcomes: list  # RangeOutcome | PartFailure, one per range

    @property
    def path(self) -> str:
        return self.job.path


def _open_work_db(work: Path):
    from ..db.connection import open_db
    from ..ingest.stages import ingest_memory_limit

    limit = ingest_memory_limit()  # (a value that is not a size is refused before anything opens)
    con = open_db(str(work / "part.duckdb"))
    # as ingest_source does: capped, DuckDB spills the open transaction instead of growing
    con.execute(f"SET memory_limit = '{limit}'")
    return con


def _detection(path: str):
    """The whole file's detection (its head), as a whole-file ingest makes it."""
    from ..ingest.stages import byte_range, checked_grammars, detect_source, head_text

    src = byte_range(path, os.path.getsize(path), "")
    return head_text(src), detect_source(src, checked_grammars(()))


def _source(job: SourceJob, start: int = 0, first_line: int = 1, end: int | None = None):
    from ..ingest.stages import byte_range

    return byte_range(job.path, job.size, job.sha256, start, first_line, end)


def build_range(rj: RangeJob) -> RangeOutcome:
    from ..ingest.stages import RunState, TimeState, store_range

    r = rj.range
    work = Path(scratch_dir("logsleuth-range-"))
    try:
        con = _open_work_db(work)
        try:
            _head, det = _detection(rj.job.path)
            src = _source(rj.job, r.start, r.first_line, r.end)
            rstate = RunState(base_run_id=1, ordinal=r.ordinal_before, starts=[tuple(s) for s in r.starts],
                              pid_starts=[tuple(s) for s in r.pid_starts])
            con.execute("BEGIN TRANSACTION")
            ctx, n_lines = store_range(con, src, task_options(rj.job), det, 1, TimeState(), rstate)
            con.execute("COMMIT")
            seam = _seam_state(con, ctx, src)
            if rj.next_first_line is not None:
                seam["open_record"] = _open_record_at_end(ctx, rj.job, r.end, rj.next_first_line)
            staged = _stage(con, rj, work)
        finally:
            con.close()
        return RangeOutcome(r.index, n_lines, staged, seam)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_range_safe(rj: RangeJob) -> RangeOutcome | PartFailure:
    from ..errors import LogsleuthError

    try:
        return build_range(rj)
    except LogsleuthError as exc:
        return PartFailure(rj.path, str(exc))


def _seam_state(con, ctx, src) -> dict:
    """What the next range assumed about this one's end, as plain JSON-ready values."""
    edges = con.execute(fleet_sql("range_edges")).fetchone()
    rs = ctx.rstate
    return {
        "ordinal": rs.ordinal, "prev_rank": rs.prev_rank, "mv_tail_from": rs.mv_tail_from,
        "time": dataclasses.asdict(ctx.tstate),
        "engine_start": ctx.parse_engine,
        "engine_end": ctx.switch.engine_at(ctx.next_line) if ctx.switch is not None else ctx.parse_engine,
        "first_ts": edges[0], "last_ts": edges[1],
        "stats": dict(ctx.stats), "run_engines": {int(k): v for k, v in ctx.run_engines.items()},
        "resume": list(ctx.resume), "read_end": src.read_end, "partial": src.partial,
    }


def _read_lines(job: SourceJob, start: int, first_line: int, end: int) -> pl.DataFrame:
    from ..ingest.stages import READ_COLUMNS, read_chunks

    frames = [c.frame for c in read_chunks(_source(job, start, first_line, end))]
    return pl.concat(frames, how="vertical_relaxed") if frames else pl.DataFrame(schema={c: None for c in READ_COLUMNS})


def _open_record_at_end(ctx, job: SourceJob, end: int, next_line: int) -> str | None:
    """Why the range's last lines would be stored differently had the next range's lines
    followed them (a traceback, benchmark block or prompt record continuing across the seam),
    or None. Decided by the ordinary redaction, parse and fold over the range's open tail and
    the first lines after it, compared with the two folded apart."""
    from ..ingest.stages import RedactState, ShapeCache, fold, parse_frame, redact_frame

    offset, line, extra = ctx.resume[0], ctx.resume[1], ctx.resume[5]
    inside = bool(extra.get("redact_inside"))
    if offset >= end and not inside:
        return None  # every record was closed before the range ended
    keep = job.keep_prompts
    state = RedactState(inside=inside)
    tail = redact_frame(_read_lines(job, offset, line, end), "raw", keep, state)
    if state.inside:
        return "a prompt record is open at the seam"
    head = _read_lines(job, end, next_line, min(job.size, end + _SEAM_LOOKAHEAD_BYTES)).head(SEAM_LOOKAHEAD_LINES)
    head = redact_frame(head, "raw", keep, RedactState())
    engine = ctx.switch.engine_at(line) if ctx.switch is not None else ctx.parse_engine

    def parsed(frame):
        return parse_frame(frame, ctx.grammars, engine, ctx.opts.shape_caches.setdefault(engine, ShapeCache())).frame \
            .with_columns(pl.lit(engine).alias("_engine"))

    pt, ph = parsed(tail), parsed(head)
    joint = fold(pl.concat([pt, ph], how="diagonal_relaxed"), ctx.pats, ctx.bench_columns, final=False)
    alone_tail = fold(pt, ctx.pats, ctx.bench_columns, final=True)
    alone_head = fold(ph, ctx.pats, ctx.bench_columns, final=False)
    if joint.carry is not None and joint.carry.height and int(joint.carry["line_no"][0]) < next_line:
        return f"a record open at line {line} continues past the seam"
    before = pl.col("line_no") < next_line
    if not joint.frame.filter(before).equals(alone_tail.frame) or \
            not joint.frame.filter(~before).equals(alone_head.frame):
        return f"the lines around the seam at line {next_line} fold differently together"
    for name in ("errors", "bench"):
        j, a = getattr(joint, name), getattr(alone_tail, name)
        j = j.filter(before) if j is not None and "line_no" in j.columns else j
        if (j is None or j.height == 0) != (a is None or a.height == 0) or (j is not None and a is not None
                                                                               and not j.equals(a)):
            return f"a {name} record at the seam at line {next_line} folds differently"
    return None


def _stage(con, rj: RangeJob, work: Path) -> dict:
    """The range's stored rows, one Parquet file per non-empty table, under the staging folder."""
    storage = storage_for(rj.job.target)
    staged = {}
    for table, _columns, _types in con.execute(fleet_sql("base_tables")).fetchall():
        if table == "sources" or not con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]:
            continue
        local = work / f"{table}.parquet"
        # read once by the merge, then deleted: compressing it cost ~10% of a range's CPU
        con.execute(f"COPY (SELECT * FROM \"{table}\") TO '{local}' (FORMAT parquet, COMPRESSION uncompressed)")
        rel = f"{rj.staging}/{rj.range.index:04d}/{table}.parquet"
        storage.put_file(local, rel)
        staged[table] = rel
    return staged


def seam_disagreement(ranges: list[ByteRange], outcomes: list) -> str | None:
    """Why the ranges' results would differ from a whole-file ingest, or None."""
    for r, o in zip(ranges, outcomes):
        if isinstance(o, PartFailure):
            return f"range {r.index + 1} failed ({o.message})"
    years = [o.seam["time"] for o in outcomes if o.seam["time"]["base_year"] is not None]
    if any((t["base_year"], t["base_date"]) != (years[0]["base_year"], years[0]["base_date"]) for t in years):
        return "the year of vLLM timestamps differs between ranges"
    for r, prev, cur in zip(ranges[1:], outcomes, outcomes[1:]):
        p, line = prev.seam, r.first_line
        if p["ordinal"] != r.ordinal_before:
            return f"the launches before line {line} were counted as {r.ordinal_before} runs, the parse found {p['ordinal']}"
        if not (p["prev_rank"] is None or r.rank < p["prev_rank"] or r.rank == p["prev_rank"] == 0):
            return f"the launch at line {line} continues the launch before it"
        if p["mv_tail_from"] is not None:
            return f"launch chatter from line {p['mv_tail_from']} runs into the cut at line {line}"
        if p["engine_end"] != cur.seam["engine_start"]:
            return f"the engine changes at the cut at line {line}"
        if p["time"]["year_offset"]:
            return f"the year of vLLM timestamps turns over before the cut at line {line}"
        yearless = p["time"]["base_year"] is not None or cur.seam["time"]["base_year"] is not None  # vLLM MM-DD
        if yearless and p["last_ts"] is not None and cur.seam["first_ts"] is not None and \
                cur.seam["first_ts"] < p["last_ts"] - _ROLLOVER:
            return f"the year of vLLM timestamps turns over at the cut at line {line}"
        if p.get("open_record"):
            return p["open_record"]
    return None


def merge_ranges(mj: MergeJob) -> BuiltSource | PartFailure:
    """The source's part files from its staged ranges, or from a whole-file ingest when a
    seam disagrees; the staged rows are removed either way."""
    storage = storage_for(mj.job.target)
    try:
        why = seam_disagreement(mj.ranges, mj.outcomes)
        if why is not None:
            out = build_parts_safe(mj.job)
            if isinstance(out, BuiltSource):
                out.note = f"not split: {why}"
            return out
        try:
            out = _merge(mj, storage)
        except Exception as exc:  # the split path must never cost a file: ingest it whole
            out = build_parts_safe(mj.job)
            if isinstance(out, BuiltSource):
                out.note = f"not split: merging the ranges failed ({type(exc).__name__}: {exc})"
        return out
    finally:
        for o in mj.outcomes:
            for rel in getattr(o, "staged", {}).values():
                storage.delete(rel)


def _merge(mj: MergeJob, storage) -> BuiltSource:
    from ..ingest.stages import RunState, TimeState, finish_ranges

    job, outs = mj.job, mj.outcomes
    work = Path(scratch_dir("logsleuth-merge-"))
    try:
        con = _open_work_db(work)
        try:
            head, det = _detection(job.path)
            con.execute("BEGIN TRANSACTION")
            tables = {t for o in outs for t in o.staged}
            for table in sorted(tables):  # rows in file order, as the whole-file ingest inserts them
                files = ", ".join("'" + storage.uri(o.staged[table]).replace("'", "''") + "'"
                                  for o in outs if table in o.staged)
                con.execute(f'INSERT INTO "{table}" SELECT * FROM read_parquet([{files}])')
            last = outs[-1].seam
            src = _source(job)
            src.read_end, src.partial = last["read_end"], tuple(last["partial"]) if last["partial"] else None
            # the year basis is the one the first vLLM timestamps set (a whole-file ingest sets it once)
            tstate = TimeState(**next((o.seam["time"] for o in outs if o.seam["time"]["basis"]), outs[0].seam["time"]))
            rstate = RunState(base_run_id=1, ordinal=last["ordinal"])
            rstate.run_id(last["ordinal"])
            stats: dict = {}
            for o in outs:
                for k, v in o.seam["stats"].items():
                    stats[k] = stats.get(k, 0) + v
            carried = {"stats": stats, "resume": tuple(last["resume"]),
                       "run_engines": {k: v for o in outs for k, v in o.seam["run_engines"].items()}}
            result = finish_ranges(con, src, task_options(job), det, 1, tstate, rstate, carried, head,
                                   sum(o.n_lines for o in outs))
            con.execute("COMMIT")
            out = export_parts(con, job, work, result)
        finally:
            con.close()
        out.note = f"split into {len(outs)} byte ranges at launch boundaries"
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_task(item):
    """One fleet task of any kind (the executor's function for mixed rounds)."""
    if isinstance(item, RangeJob):
        return build_range_safe(item)
    if isinstance(item, MergeJob):
        return merge_ranges(item)
    return build_parts_safe(item)
