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
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..db import schema
from .. import settings
from ..errors import BadInputError, LogsleuthError
from .grammars import checked_grammars
from ..formats.grammar import role_map
from . import source as source_mod
from .detect import Detection, detect
from .fold import fold
from .normalize import RunState, TimeState, add_timestamps, assign_runs
from .extract import TypedRows, with_line_context
from .parse import Parsed, patterns_for
from .read import CHUNK_BYTES, READ_COLUMNS, check_growth, iter_chunks, open_source, read_head
from ..interrupts import committing
from .redact import RedactState, redact_frame, redact_name, redact_shaped
from .shapes import encode
from .segment import EngineSwitch
from .workers import ChunkParser, default_jobs
from . import unwrap
from .write import BulkLines, delete_from_line, reset_derived, store_chunk
from .options import IngestOptions, IngestResult  # noqa: F401 (the API's names, re-exported)
from .sql import ingest_sql




def _next_id(con, table: str, col: str) -> int:
    """The next free source id (``sources``) or run id (``runs``)."""
    return int(fetch_one(con.execute(ingest_sql("next_source_id" if table == "sources" else "next_run_id")))[0])


#: DuckDB's memory cap while ingesting (env LOGSLEUTH_INGEST_MEMORY overrides). The whole
#: file is one transaction; with DuckDB's default cap (80% of RAM) it keeps the rows of the
#: open transaction in memory and peak RSS grows with the file (1.6 GB for 2 GB of log);
#: capped, it writes them out as it goes and RSS stays flat. Peak RSS of the generated 2 GB
#: logs: vLLM 1,052 MB at 160 MB, 976 MB at 64 MB; SGLang 844 / 800 MB; no slower.
INGEST_MEMORY = "64MB"
#: DuckDB's memory cap while the runs of a source are derived, after its lines are stored (the
#: chunks' memory is given back by then): set-based updates keep their undo data in memory,
#: and rewriting the spec_stats rows of a 2 GB vLLM log ran out of memory at 64 MB
DERIVE_MEMORY = "256MB"
#: files from this size on are checkpointed right after their ingest
CHECKPOINT_BYTES = 32 << 20


class NotBatchable(Exception):
    """Raised by ``ingest_source(batched=True)`` before anything is written: this source
    keeps a transaction of its own (a telemetry file)."""


def ingest_source(con, path: str, opts: IngestOptions, batched: bool = False, src=None,
                  pending=None) -> IngestResult:
    """Ingest one file in its own transaction; ``batched``: inside the caller's open
    transaction, under the memory cap the caller set (``ingest_memory``), with the source
    ``src`` the caller opened (and closes), a new source's run derivation queued on
    ``pending`` (ingest/deferred.py) when given."""
    if batched and src is not None:
        return _ingest_open(con, src, opts, batched=True, pending=pending)
    src = open_source(path)
    from .inputs import telemetry_kind  # metrics, GPU samples, bench JSON: the telemetry layer's path

    if (kind := telemetry_kind(src)) is not None:
        try:
            if batched:
                raise NotBatchable(path)
            if opts.store_telemetry is None:
                raise BadInputError(f"{src.display_name}: a telemetry file ({kind}); ingest it through "
                                    "logsleuth.ingest_files, which stores telemetry")
            return opts.store_telemetry(con, src, kind, opts)
        finally:
            src.close()
    if batched:
        try:
            return _ingest_open(con, src, opts, batched=True, pending=pending)
        finally:
            src.close()
    try:
        with ingest_memory(con):
            result = _ingest_open(con, src, opts)
            if result.status != "skipped" and src.size >= CHECKPOINT_BYTES:
                # checkpoint now, under the cap: left to closing the connection it ran with the
                # default cap and took 2.3 GB for a 2 GB vLLM log (small files: DuckDB's own
                # automatic checkpoint, a forced one cost ~0.1 s per file)
                con.execute("CHECKPOINT")
            return result
    finally:
        src.close()


@contextmanager
def duckdb_setting(con, name: str, value: str):
    """DuckDB setting ``name`` at ``value`` for the block, restored afterwards."""
    before = fetch_one(con.execute(f"SELECT current_setting('{name}')"))[0]
    try:
        con.execute(f"SET {name} = '{value}'")
        yield
    finally:
        try:
            con.execute(f"SET {name} = '{before}'")
        except Exception:  # the connection may be gone after an interrupt: nothing to restore
            pass


def ingest_memory(con):
    """DuckDB's memory cap while ingesting (INGEST_MEMORY), restored afterwards."""
    return duckdb_setting(con, "memory_limit", ingest_memory_limit())


def ingest_memory_limit(default: str = INGEST_MEMORY) -> str:
    """The memory cap of an ingest: ``default`` (INGEST_MEMORY), or LOGSLEUTH_INGEST_MEMORY
    when it is set (a size; anything else is refused)."""
    return _memory_setting(settings.ingest_memory(default))


def raise_memory_for_derivation(con) -> None:
    """Lift DuckDB's memory cap to DERIVE_MEMORY (or LOGSLEUTH_INGEST_MEMORY when it is set:
    the user's cap holds for the whole ingest) for the rest of the ingest; ``ingest_memory``
    restores the connection's own cap at its end. Not lowered again after the derivation:
    DuckDB refuses a cap below what it holds, and that refusal aborts the transaction (the
    generated 2 GB vLLM log lost its ingest so)."""
    con.execute(f"SET memory_limit = '{ingest_memory_limit(DERIVE_MEMORY)}'")


def _memory_setting(text: str) -> str:
    if not re.fullmatch(r"\s*\d+(?:\.\d+)?\s*(?:[KMGT]i?B|B)?\s*", text, re.I):
        raise BadInputError(f"LOGSLEUTH_INGEST_MEMORY={text!r}: expected a size such as 256MB or 1GB")
    return text.strip()


@dataclass
class IngestContext:
    """Everything one ingest of one source carries through its stages (compiled grammar
    state lives here for the whole file; the carried states are what an append resumes)."""
    con: object
    src: object
    opts: IngestOptions
    grammars: tuple
    det: object
    parse_engine: str
    source_id: int
    pats: list
    by_name: dict
    launch_rank: dict
    bench_columns: dict
    roles: dict  # grammar role -> pattern names (formats.grammar.role_map)
    tstate: TimeState
    rstate: RunState
    switch: EngineSwitch | None = None  # engine per run (None: one grammar for the whole file)
    run_engines: dict = field(default_factory=dict)  # run_id -> engine its lines were parsed with
    redact_inside: bool = False  # reading starts inside a multi-line prompt record
    stats: dict = field(default_factory=lambda: dict(_ZERO_STATS))
    resume: tuple | None = None  # (offset, line_no, time dict, runs dict, stats) at the open tail
    wrapper: unwrap.Wrapper | None = None  # what captured the log, peeled before parsing (ingest/unwrap.py)
    next_line: int = 1  # number of the line after the last one read
    pending: object | None = None  # a batch's PendingDerivation (ingest/deferred.py): derive later

    @property
    def base_run(self) -> int:
        return self.rstate.base_run_id


_ZERO_STATS = {"bad_bytes": 0, "nul_bytes": 0, "truncated_lines": 0, "crlf_lines": 0}


def _engine_for_parsing(det) -> str:
    if det.kind in ("bench", "unknown", "env_report"):
        sg, vl = det.scores.get("sglang", 0), det.scores.get("vllm", 0)
        return "vllm" if vl > sg else ("sglang" if sg > 0 else "none")
    return det.engine


def _ingest_open(con, src, opts: IngestOptions, batched: bool = False, pending=None) -> IngestResult:
    """Ingest an opened source in a transaction of its own, or, ``batched``, inside the
    transaction the caller holds open for a batch of small files (ingest/batch.py)."""
    existing = fetch_one(con.execute(ingest_sql("source_by_sha"), [src.sha256]))
    if existing and not opts.replace:
        return IngestResult(src.display_name, "skipped", existing[0],
                            notes=["same content already ingested (sha256); use --replace to re-ingest"])
    grammars = checked_grammars(opts.grammar_dirs)
    cont = None if existing else source_mod.find_continuation(con, src)
    if cont is not None and opts.replace:  # --replace on a grown file: ingest it anew, same id
        existing, cont = (cont[0],), None
    if batched:
        return _store_source(con, src, opts, grammars, existing, cont, pending)
    con.execute("BEGIN TRANSACTION")
    try:
        result = _store_source(con, src, opts, grammars, existing, cont)
        with committing(src.display_name):  # Ctrl-C/SIGTERM land before or after, never inside
            con.execute("COMMIT")
        return result
    except BaseException:
        try:  # the original error is the one to report (an interrupt may have ended the transaction)
            con.execute("ROLLBACK")
        except Exception:
            pass
        raise


def _store_source(con, src, opts, grammars, existing, cont, pending=None) -> IngestResult:
    """Everything an ingest writes, inside the open transaction: a new source, a replaced
    one (``existing``) or an append to the one it continues (``cont``); a new source's run
    derivation is queued on ``pending`` when given."""
    if cont is not None and not _same_detection(src, grammars, cont[1]):
        # the head read at the first ingest was too short to tell what the file is, and
        # the grown head says otherwise: ingest it anew under the same id
        existing, cont = (cont[0],), None
    if pending is not None and (existing or cont is not None):
        pending.flush(con)  # an append or a replace reads the runs of the sources before it
        pending = None
    if cont is not None:
        return _append(con, src, opts, grammars, *cont)
    status = "ingested"
    if existing:
        _delete_source(con, existing[0])
        status = "replaced"
    source_id = existing[0] if existing else _next_id(con, "sources", "source_id")
    result = _ingest_new(con, src, opts, grammars, source_id, pending)
    result.status = status
    return result


#: bytes of the head that detection reads
DETECT_BYTES = 256 * 1024


def _same_detection(src, grammars, st) -> bool:
    """Whether detection on the grown file's head still says what it said (only asked while
    the head it read was shorter than DETECT_BYTES); its scores are then updated."""
    if st.read_end >= DETECT_BYTES:
        return True
    det = detect(read_head(src, DETECT_BYTES), grammars)
    if (det.kind, det.engine, _engine_for_parsing(det)) != (st.kind, st.engine, st.parse_engine):
        return False
    st.scores, st.report_kind = det.scores, det.report_kind
    return True


def _delete_source(con, source_id: int) -> None:
    for table in schema.PER_SOURCE_TABLES:
        con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])


def _context(con, src, opts, grammars, det, parse_engine, source_id, tstate, rstate,
             switches: list | None = None) -> IngestContext:
    switch = None
    pats = patterns_for(grammars, parse_engine)
    if det.kind == "server_log":
        # a launch of another engine further down switches the grammar (ingest/segment.py):
        # fold, run assignment and the store know the patterns of every engine
        switch = EngineSwitch(grammars, parse_engine, switches)
        names = {p.name for p in pats}
        for engine in switch.engines:
            extra = [p for p in patterns_for(grammars, engine) if p.name not in names]
            pats += extra
            names.update(p.name for p in extra)
    bench_columns: dict = {}
    for g in grammars:
        bench_columns.update(g.extra.get("columns", {}))
    return IngestContext(con=con, src=src, opts=opts, grammars=grammars, det=det, parse_engine=parse_engine,
                         source_id=source_id, pats=pats, by_name={p.name: p for p in pats},
                         launch_rank={p.name: p.launch for p in pats if p.launch is not None},
                         bench_columns=bench_columns, roles=role_map(grammars), tstate=tstate, rstate=rstate,
                         switch=switch)


def _ingest_new(con, src, opts, grammars, source_id, pending=None) -> IngestResult:
    head = read_head(src, DETECT_BYTES)
    wrapper = unwrap.learn(head, grammars)  # step 2 of the pipeline: decided once per file
    if wrapper is not None:  # what the engine wrote is the peeled text: detect on that
        head = unwrap.peeled_head(head, wrapper)
        src.detection = None
    det = src.detection = src.detection or detect(head, grammars)  # decided once per source
    base_run = pending.base_run(con) if pending is not None else _next_id(con, "runs", "run_id")
    # runs are ids base_run + ordinal; ordinal 0 holds lines before any launch
    ctx = _context(con, src, opts, grammars, det, _engine_for_parsing(det), source_id,
                   TimeState(), RunState(base_run_id=base_run))
    ctx.pending = pending
    ctx.wrapper = wrapper
    _insert_source(con, src, opts, det, source_id)
    n_lines = _read_and_store(ctx)
    return _finish(ctx, head, n_lines, "ingested")


def _insert_source(con, src, opts, det, source_id) -> None:
    con.execute(
        ingest_sql("insert_source"),
        [source_id, src.display_name, Path(src.display_name).name, src.sha256, src.size, det.kind,
         det.engine, opts.label, dt.datetime.now(), src.compressed])


def _append(con, src, opts, grammars, source_id: int, st: source_mod.ResumeState) -> IngestResult:
    """Read only what follows the resume point of an earlier ingest of this file and extend
    its runs: the open tail is deleted and rebuilt, then the source's runs derived again."""
    det = Detection(st.kind, st.engine, st.scores, st.report_kind)
    rstate = st.run_state()
    reset_derived(con, source_id)
    delete_from_line(con, source_id, st.resume_line)
    # new runs take ids after those of sources ingested since (run ids are global)
    others = fetch_one(con.execute(ingest_sql("runs_of_others"), [source_id]))[0]
    rstate.floor = max(rstate.floor, int(others))
    ctx = _context(con, src, opts, grammars, det, st.parse_engine, source_id, st.time_state(), rstate,
                   st.extra.get("switches"))
    ctx.run_engines = {int(k): v for k, v in st.extra.get("run_engines", [])}
    ctx.redact_inside = bool(st.extra.get("redact_inside", False))
    ctx.wrapper = unwrap.Wrapper.from_json(st.extra.get("wrapper"))
    ctx.stats = dict(st.stats)
    src.start_offset, src.start_line = st.resume_offset, st.resume_line
    ctx.next_line = st.resume_line
    con.execute(ingest_sql("update_appended_source"),
                [src.display_name, Path(src.display_name).name, src.sha256, src.size, dt.datetime.now(), source_id])
    n_new = _read_and_store(ctx)
    head = read_head(src, DETECT_BYTES)
    result = _finish(ctx, head, n_new, "appended")
    result.notes.insert(0, f"appended from line {st.resume_line} (byte {st.resume_offset})")
    return result


def _read_and_store(ctx: IngestContext) -> int:
    """Parse the source's chunks from its start offset and store them; remember the open
    tail. Returns the number of lines stored (see ``_ChunkLoop``)."""
    return _ChunkLoop(ctx).run()


class _ChunkLoop:
    """The chunks of one source, through three overlapping stages.

    Chunks are read and redacted here, in order, and handed to the parser (ingest/workers.py:
    worker processes parse up to ``jobs`` chunks ahead), which classifies their lines and
    extracts the typed rows; each parsed chunk is folded and stamped here, in order, its
    typed rows wait in ``typed`` until their lines are folded; a writer thread stores them
    (the typed rows of the lines still claimed, with their timestamps and runs, and the
    lines; polars and DuckDB release the GIL) while the next one is folded. At most
    ``jobs`` + 1 chunks are in flight and one waits to be stored (bounded memory); an error
    in any stage is raised by ``run``."""

    def __init__(self, ctx: IngestContext):
        from concurrent.futures import ThreadPoolExecutor

        self.ctx, src, opts = ctx, ctx.src, ctx.opts
        jobs = opts.jobs or default_jobs()
        # a file of one or two chunks is parsed inline: starting workers costs more than it saves
        parallel = jobs > 1 and (src.size - src.start_offset) > 2 * opts.chunk_bytes
        self.parser = ChunkParser(ctx.grammars, opts.grammar_dirs, ctx.parse_engine, ctx.switch, jobs,
                                  opts.shape_caches, parallel=parallel)
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="logsleuth-store")
        self.pending = None  # the store of the previous chunk
        self.bulk_lines = BulkLines(ctx.con)  # lines_bulk rows, stored in whole row groups
        self.n_lines = self.done_bytes = 0
        # a multi-line prompt record may span chunks (and an append's resume point)
        self.redact_state = RedactState(inside=ctx.redact_inside)
        self.recent: list = []  # (redaction state before, raw frame) of the last two chunks read
        self.chunks = _last_final(iter_chunks(src, opts.chunk_bytes))
        self.window: deque = deque()  # (chunk, parse ticket), in read order
        self.carry = None  # parsed lines of the open record a chunk ended in
        self.carry_switches = 0  # switch points known when the carried lines were parsed
        self.typed = TypedRows()  # typed rows of the lines parsed and not stored yet

    def run(self) -> int:
        ctx = self.ctx
        # DuckDB inserts on one thread while the chunks are stored: a parallel insert writes
        # each thread's partial row group ahead and rewrites them at COMMIT, leaving the
        # first copies as free blocks the file never gives back (a generated 200 MB vLLM
        # log: 129 of 365 blocks free, 95 MB; on one thread none, 61 MB; same wall time, as
        # the writer thread overlaps parsing anyway). Run derivation gets every thread back.
        with duckdb_setting(ctx.con, "threads", "1"):
            self._read_parse_store()
        if ctx.resume is None:  # nothing new was read (an append of nothing but the old tail)
            _remember_tail(ctx, None)
            ctx.resume[5]["redact_inside"] = self.redact_state.inside
        return self.n_lines

    def _read_parse_store(self) -> None:
        try:
            self.read_ahead()
            while self.window:
                chunk, ticket = self.window.popleft()
                fresh = self.parser.result(ticket)
                if self.parser.lookahead():
                    self.read_ahead()  # workers parse the next chunks while this one is folded
                self.take(chunk, fresh)
                if not self.parser.lookahead():
                    self.read_ahead()  # inline: the next chunk is read and parsed once this one is handed on
            if self.pending is not None:
                self.pending.result()
            self.bulk_lines.flush()  # after the writer's last chunk, before run derivation reads the lines
        finally:
            self.parser.close()
            self.writer.shutdown(wait=True)

    def read_ahead(self) -> None:
        opts = self.ctx.opts
        for chunk in self.chunks:
            # secrets (and prompts unless --keep-prompts) are masked before anything reads the text,
            # so lines, config, events, errors and templates never hold them
            # a chunk parsed inline by shape is encoded once, here: redaction's pre-test runs
            # per shape, and the parser takes the encoding (updated for the redacted lines)
            wrapper = self.ctx.wrapper
            shapes = encode(chunk.frame["raw"]) if self.parser.wants_shapes(chunk.frame.height) and not wrapper \
                else None
            # the wrapper is peeled first, so redaction reads the log's own text (unwrap.restore
            # masks the stored line the same way)
            peeled = unwrap.peel(chunk.frame, wrapper)
            self.recent = (self.recent + [(self.redact_state.inside, peeled)])[-2:]
            fresh, shapes = redact_shaped(peeled, "raw", opts.keep_prompts, self.redact_state, shapes)
            fresh = unwrap.restore(fresh)
            self.window.append((chunk, self.parser.submit(fresh, shapes)))
            if len(self.window) > self.parser.lookahead():
                return

    def store(self, folded) -> None:
        ctx = self.ctx
        f = _stamp(ctx, folded)
        if self.pending is not None:
            self.pending.result()
        typed = self.typed.take_through(int(f["line_no"][-1])) if f.height else {}
        self.pending = self.writer.submit(_store_folded, ctx, f, folded, typed, self.bulk_lines)
        self.n_lines += f.height
        _count(ctx.stats, f)

    def take(self, chunk, parsed: Parsed) -> None:
        """Fold a parsed chunk after the lines carried from the previous one; store what is closed."""
        ctx, src = self.ctx, self.ctx.src
        carry = self.carry
        if carry is not None and self.parser.switch_points != self.carry_switches:
            again = unwrap.drop_repeats(self.parser.reparse(carry))  # a later launch moved the engine switch
            self.typed.drop_from(int(carry["line_no"][0]))
            self.typed.add(again.tables)
            carry = again.frame
        parsed = unwrap.drop_repeats(parsed)  # a record a viewer printed twice is claimed once
        self.typed.add(parsed.tables)
        fresh = parsed.frame
        frame = fresh if carry is None else pl.concat([carry, fresh], how="diagonal_relaxed")
        self.carry, self.carry_switches = None, self.parser.switch_points
        if chunk.frame.height:
            ctx.next_line = int(chunk.frame["line_no"][-1]) + 1
        last = None
        if chunk.final and src.partial is not None:
            # a last line without its newline may still be written: it belongs to the tail
            last = frame.filter(pl.col("line_no") >= src.partial[1])
            frame = frame.filter(pl.col("line_no") < src.partial[1])
        if frame.height:
            # the last chunk too is first folded as if more could follow: what it would
            # carry is the open tail, where the next append resumes (and which it rebuilds)
            folded = _fold(ctx, frame, final=False)
            if chunk.final and folded.all_open:
                self.carry = frame  # all of it is the open tail
            else:
                if folded.carry is not None:
                    self.carry = frame.filter(pl.col("line_no") >= int(folded.carry["line_no"][0]))
                self.store(folded)
        if chunk.final:
            self.end(last)
        self.done_bytes += int(chunk.frame.select(pl.col("raw").str.len_bytes().sum()).item() or 0)
        if ctx.opts.progress:
            ctx.opts.progress(min(self.done_bytes, src.size), src.size)

    def end(self, last: pl.DataFrame | None) -> None:
        """At the end of the text: remember the open tail (where an append resumes), then
        fold and store it as final."""
        ctx, carry = self.ctx, self.carry
        if last is not None and last.height:
            carry = last if carry is None else pl.concat([carry, last], how="diagonal_relaxed")
        _remember_tail(ctx, None if carry is None else carry.select(READ_COLUMNS))
        ctx.resume[5]["redact_inside"] = _redact_state_at(ctx, self.recent)
        self.carry = None
        if carry is not None:
            self.store(_fold(ctx, carry, final=True))


def _store_folded(ctx: IngestContext, f: pl.DataFrame, folded, typed: dict, bulk_lines: BulkLines) -> None:
    """The writer thread's task: the typed rows of the lines still claimed after the fold,
    with their timestamps and runs, then the chunk's rows and lines (ingest/write.py)."""
    store_chunk(ctx.con, f, folded, ctx.pats, ctx.by_name, ctx.source_id, with_line_context(typed, f),
                bulk_lines)


def _fold(ctx: IngestContext, parsed: pl.DataFrame, final: bool):
    """Fold parsed lines (records spanning lines, benchmark blocks, the open tail)."""
    return fold(parsed, ctx.pats, ctx.bench_columns, final=final)


def _stamp(ctx: IngestContext, folded) -> pl.DataFrame:
    """Timestamps and run ids of the folded lines to store (advances the carried states)."""
    f = add_timestamps(folded.frame, ctx.tstate, ctx.src.mtime, ctx.opts.year)
    f = assign_runs(f, ctx.launch_rank, ctx.rstate, ctx.roles)
    if f.height and "_engine" in f.columns:
        # a run's engine is that of its last line (its launch's pre-launch chatter comes first)
        for run_id, engine in f.group_by("run_id", maintain_order=True).agg(pl.col("_engine").last()).iter_rows():
            ctx.run_engines[int(run_id)] = engine
    return f


def _redact_state_at(ctx: IngestContext, recent: list) -> bool:
    """Whether the resume line starts inside a multi-line prompt record: the redaction of the
    raw lines read before it, replayed from the state before their chunk (an append starts
    its redaction there, so a prompt continued across the resume point stays masked)."""
    line = ctx.resume[1]
    for inside, raw in reversed(recent):
        if raw.height and int(raw["line_no"][0]) <= line:
            before = raw.filter(pl.col("line_no") < line)
            state = RedactState(inside=inside)
            redact_frame(before, "raw", ctx.opts.keep_prompts, state)
            return state.inside
    # the tail began before the chunks kept: the earliest state known (masks more, never less
    # when that state was inside a record)
    return bool(recent[0][0]) if recent else False


def _count(stats: dict, f: pl.DataFrame) -> None:
    """Counters of the stored lines (the open tail is counted when it is stored for good)."""
    if f.height == 0:
        return
    row = f.select(pl.col("_bad").sum(), pl.col("_nul").sum(), pl.col("truncated").sum(), pl.col("_cr").sum()).row(0)
    for key, v in zip(("bad_bytes", "nul_bytes", "truncated_lines", "crlf_lines"), row):
        stats[key] += int(v or 0)


def _remember_tail(ctx: IngestContext, tail: pl.DataFrame | None) -> None:
    """Snapshot the carried state at the open tail (the lines not stored yet that a record
    still open at the end may continue, or a last line without its newline), or at the end
    of the text when there is no tail."""
    if tail is not None and tail.height:
        offset, line_no = int(tail["_off"][0]), int(tail["line_no"][0])
    else:
        offset, line_no = ctx.src.read_end, ctx.next_line
    time_d, runs_d = source_mod.snapshot(ctx.tstate, ctx.rstate)
    # the counters cover the lines stored so far: the tail is counted when it is stored for good
    extra = {"switches": [list(x) for x in ctx.switch.switches] if ctx.switch else [],
             "run_engines": sorted([k, v] for k, v in ctx.run_engines.items())}
    if ctx.wrapper is not None:
        extra["wrapper"] = ctx.wrapper.to_json()
    ctx.resume = (offset, line_no, time_d, runs_d, dict(ctx.stats), extra)


def _finish(ctx: IngestContext, head: str, n_lines: int, status: str) -> IngestResult:
    src, det, con = ctx.src, ctx.det, ctx.con
    check_growth(src)
    src.stats.update(ctx.stats)
    from ..derive.runs import finalize_source

    notes = []
    if det.kind == "unknown":
        notes.append("unknown format: stored as raw lines with mined templates")
    if src.grew:
        notes.append("file grew while ingesting: only the bytes present at start were read")
    if (note := unwrap.describe(ctx.wrapper)) is not None:
        notes.append(note)
    if ctx.stats["bad_bytes"]:
        notes.append(f"{ctx.stats['bad_bytes']} invalid UTF-8 byte(s) replaced")
    if ctx.stats["nul_bytes"]:
        notes.append(f"{ctx.stats['nul_bytes']} NUL byte(s) replaced")
    if ctx.stats["truncated_lines"]:
        notes.append(f"{ctx.stats['truncated_lines']} over-long line(s) stored truncated")
    _merge_prelaunch_run(con, ctx)
    det.run_engines = dict(ctx.run_engines)  # the engine of each run (a file may hold several)
    raise_memory_for_derivation(con)
    item = (ctx.source_id, det, src, ctx.tstate, ctx.base_run, ctx.opts, head)
    # in a batch, the runs of all its new sources are derived together before it commits
    run_ids = [] if ctx.pending is not None else finalize_source(con, *item)
    offset, line_no, time_d, runs_d, stats, extra = ctx.resume
    head_len, head_sha, edge_sha = source_mod.fingerprint(src.real_path, src.compressed, src.read_end)
    st = source_mod.ResumeState(
        resume_offset=offset, resume_line=line_no, read_end=src.read_end, head_len=head_len,
        head_sha=head_sha, edge_sha=edge_sha, kind=det.kind, engine=det.engine,
        parse_engine=ctx.parse_engine, scores=det.scores, report_kind=det.report_kind, time=time_d,
        runs=runs_d, stats=stats, extra=extra, real_path=redact_name(os.path.abspath(src.real_path)),  # stored: no token of a path
        family=redact_name(source_mod.rotation_family(str(src.real_path))))
    if not src.cleanup:  # stdin cannot be continued
        source_mod.save(con, ctx.source_id, st)
    result = IngestResult(src.display_name, status, ctx.source_id, det.kind, det.engine, n_lines, run_ids, notes)
    if ctx.pending is not None:
        ctx.pending.add(con, item, result)
    return result


def _merge_prelaunch_run(con, ctx: IngestContext) -> None:
    """Run derivation merges the lines before the first launch (run base_run) into the first
    run, which it takes to be base_run + 1. After an append the first run may have had to
    take a later id (ids taken by sources ingested in between): merge into it here."""
    ids = ctx.rstate.run_ids
    if len(ids) < 2 or ids[1] in (ids[0], ids[0] + 1):
        return
    from ..derive.runs import RUN_TABLES, _has_activity

    if _has_activity(con, ctx.source_id, ids[0]):
        return
    for t in RUN_TABLES:
        con.execute(f"UPDATE {t} SET run_id = ? WHERE source_id = ? AND run_id = ?", [ids[1], ctx.source_id, ids[0]])


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


# --- byte ranges (fleet/ranges.py): one large file parsed as ranges cut at launch boundaries


def read_range(con, src, opts: IngestOptions, det, source_id: int, tstate: TimeState,
               rstate: RunState) -> tuple[IngestContext, int]:
    """Parse, fold and store the lines of ``src`` from ``src.start_offset`` (line
    ``src.start_line``) up to ``src.size``, with the file's detection ``det`` and the states
    carried into the range, without deriving runs; the caller checks the returned context's
    states at the seams and hands the merged context to ``finish_ranges``. Returns (context,
    lines stored)."""
    ctx = _context(con, src, opts, checked_grammars(opts.grammar_dirs), det, _engine_for_parsing(det),
                   source_id, tstate, rstate)
    ctx.next_line = src.start_line
    return ctx, _read_and_store(ctx)


def finish_ranges(con, src, opts: IngestOptions, det, source_id: int, tstate: TimeState, rstate: RunState,
                  carried: dict, head: str, n_lines: int) -> IngestResult:
    """The sources row and run derivation of a file whose ranges ``read_range`` stored into
    ``con`` (``src``: the whole file; ``carried``: the ranges' summed ``stats``, merged
    ``run_engines`` and the last range's ``resume``), as ``_ingest_new`` ends a whole file."""
    ctx = _context(con, src, opts, checked_grammars(opts.grammar_dirs), det, _engine_for_parsing(det),
                   source_id, tstate, rstate, carried["resume"][5].get("switches"))
    ctx.stats, ctx.run_engines, ctx.resume = carried["stats"], carried["run_engines"], carried["resume"]
    _insert_source(con, src, opts, det, source_id)
    return _finish(ctx, head, n_lines, "ingested")


def engine_for_parsing(det) -> str:
    """The grammar a file's lines are parsed with first (its detected engine, or the closer one)."""
    return _engine_for_parsing(det)

