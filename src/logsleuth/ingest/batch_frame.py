"""Store the small files of a batch together: one frame, a fixed number of steps per batch.

Contract: ``store_files(con, paths, opts_for, on_file, results)`` ingests ``paths`` in order
inside the transaction the caller holds open (ingest/batch.py) and appends one
``IngestResult`` per file to ``results`` as its rows are written, with the rows, ids,
``sources`` rows and resume states that ingesting the files one by one gives. It returns
``(alone, error)``: the index of a file that needs a transaction of its own (telemetry), or
the error of a file refused before anything of it was written (the files before it are
stored); at most one is set, and its index is ``len(results)``.

How. Each file is read whole (one read: it is small), hashed and detected on its head as
``pipeline._ingest_new`` does. The lines of all files become one frame with a ``_file``
column and go through redaction, parsing (one ``parse_segments`` call per engine), folding,
time stamps, run ids and the store in a fixed number of polars and DuckDB steps, whatever
the number of files; then ``derive.runs.finalize_sources`` derives the runs of all of them
at once. A folder of thousands of two-line logs pays milliseconds per file instead of the
whole chunk pipeline per file.

File boundaries hold because only *plain* files take this path, checked over the frame
(``_not_plain``): a server log or unknown text, valid UTF-8 without NUL bytes, one chunk
long, no multi-line prompt record (redaction state never crosses a line boundary), no
launch of another engine (``segment.EngineSwitch``), at most one launch (its lines have one
run id, so ids are known before runs are derived), no traceback start or benchmark title
and not starting with a body line (so no record: fold only re-labels stray body, exception
and benchmark lines, line by line, and runs once over all the files), nothing a run
derivation would split off before its launch. For such a file the fold's open tail (where an
append resumes) starts at its last line that no body-like line follows, moved back over the
streak of pre-launch chatter before it, as ``fold.fold`` cuts it. Every other file
(several launches, a traceback, an env report or benchmark printout, a continuation of a
file ingested before, a duplicate, ``--replace``) goes through ``pipeline.ingest_source``
at its place in the order, inside the same transaction (with the ``Source`` opened here: no
second hash, head read or detection), after the plain files before it have been stored: ids
follow the order of the files either way. The run derivation of every new source of the
batch, whichever path stored it, is one ``finalize_sources`` call before the batch commits
(``deferred.PendingDerivation``).
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..db.connection import fetch_one
from ..errors import BadInputError, LogsleuthError
from .grammars import checked_grammars
from . import source as source_mod
from .detect import Detection, detect
from .fold import _EXC_LINE, _MAX_CARRY, Folded, fold
from .normalize import YEARS, RunState, TimeState, check_year
from .options import IngestOptions, IngestResult
from .read import READ_COLUMNS, Source, _fast_frame, _post, check_growth, open_source
from .redact import RedactState, policy, redact_frame, redact_name
from .deferred import PendingDerivation
from .sql import ingest_sql
from .workers import parse_segments
from .extract import extract
from .write import BulkLines, insert, store_chunk

#: event kinds that make lines before a launch a run of their own (derive/runs._has_activity
#: splits them off under a new id): a file with one before its launch is not plain
_ACTIVITY_EVENTS = ("server_ready", "app_startup_complete", "cuda_graph_end", "weights_loaded")
_ACTIVITY_TABLES = ("decode_stats", "prefill_stats", "bench_results")


@dataclass
class _File:
    index: int  # position in the batch
    path: str
    opts: IngestOptions
    src: Source
    data: bytes = b""
    head: str = ""
    det: Detection | None = None
    parse_engine: str = ""
    plain: bool = True  # stored with the batch (else: pipeline.ingest_source)
    skipped: int | None = None  # source id of the same content already ingested
    source_id: int = 0
    base_run: int = 0
    real: str = ""  # masked absolute path and rotation family, as source_state stores them
    family: str = ""


@dataclass
class _Stamped:
    """What the stamping of one file leaves: the states after its stored part (what an
    append resumes from) and after all of it (what run derivation reads)."""
    time_main: TimeState
    time_all: TimeState
    runs_main: RunState
    stats_main: dict = field(default_factory=dict)
    stats_all: dict = field(default_factory=dict)
    tail: tuple | None = None  # (offset, line_no) of the open tail's first line
    n_lines: int = 0
    main_rows: int = 0


def store_files(con, paths: list[str], opts_for, on_file, results: list) -> tuple[int | None, Exception | None]:
    files: list[_File] = []
    alone = error = None
    from .inputs import telemetry_kind

    for i, p in enumerate(paths):
        if on_file:
            on_file(p)
        try:
            src = open_source(p)
        except LogsleuthError as exc:
            error = exc
            break
        f = _File(i, p, opts_for(p), src)
        try:
            _read(f)  # the whole file (small): its head serves the telemetry sniff too
        except BaseException:
            src.close()
            raise
        if telemetry_kind(src) is not None:
            src.close()
            alone = i
            break
        files.append(f)
    try:
        _mark_known(con, files)
        pending = PendingDerivation()
        _store_in_order(con, files, results, pending)
        pending.flush(con)  # the runs of every new source of the batch, derived together
    finally:
        for f in files:
            f.src.close()
    return alone, error


def _read(f: _File) -> None:
    """The whole file (its size at open), its head and detection, and whether it can be plain."""
    src, opts = f.src, f.opts
    try:
        with open(src.real_path, "rb") as fh:
            f.data = fh.read(src.size)
    except OSError as exc:
        raise BadInputError(f"{src.display_name}: corrupt or truncated data ({exc})") from None
    from .pipeline import DETECT_BYTES, engine_for_parsing

    from .unwrap import learn

    if not src.compressed:
        src.remember_head(f.data, DETECT_BYTES)  # the head and kind of the source: read and decided once
    f.head = src.head(DETECT_BYTES).decode("utf-8", "replace")
    f.det = detect(f.head, checked_grammars(opts.grammar_dirs))
    f.parse_engine = engine_for_parsing(f.det)
    if learn(f.head, checked_grammars(opts.grammar_dirs)) is not None:
        f.plain = False  # a wrapped log or a notebook: peeled on the pipeline's path (ingest/unwrap.py)
        return
    src.detection = f.det  # a wrapped log is detected on its peeled head, by the pipeline
    if (src.compressed or opts.replace or len(f.data) != src.size or src.size > opts.chunk_bytes
            or f.det.kind not in ("server_log", "unknown") or b"\x00" in f.data):
        f.plain = False
        return
    try:
        f.data.decode("utf-8")
    except UnicodeDecodeError:
        f.plain = False


def _mark_known(con, files: list[_File]) -> None:
    """Files whose content is already stored (skipped), and those that may continue a file
    ingested before or another file of the batch, or repeat one (not plain: the per-file path
    decides, once what they may continue is stored)."""
    if not files:
        return
    shas = [f.src.sha256 for f in files]
    known = dict(con.execute("SELECT sha256, source_id FROM sources WHERE list_contains(?, sha256)",
                             [shas]).fetchall())
    reals, fams = zip(*[_stored_paths(f.src) for f in files])
    stated = con.execute("SELECT real_path, family FROM source_state WHERE list_contains(?, real_path)"
                         " OR list_contains(?, family)", [list(reals), list(fams)]).fetchall()
    taken = {x for row in stated for x in row}
    seen_sha: set = set()
    seen_fam: set = set()
    for f, real, fam in zip(files, reals, fams):
        f.real, f.family = real, fam
        sha = f.src.sha256
        if sha in known and not f.opts.replace:
            f.skipped = known[sha]
        elif sha in seen_sha or real in taken or fam in taken or fam in seen_fam:
            f.plain = False
        seen_sha.add(sha)
        seen_fam.add(fam)


def _stored_paths(src: Source) -> tuple[str, str]:
    """The masked absolute path and rotation family that ``source_state`` stores (the family
    of a file without a rotation suffix is its path: masked once)."""
    real = os.path.abspath(src.real_path)
    fam = source_mod.rotation_family(str(src.real_path))
    masked = redact_name(real)
    return masked, (masked if fam == real else redact_name(fam))


def _store_in_order(con, files: list[_File], results: list, pending: PendingDerivation) -> None:
    from .pipeline import ingest_source

    candidates = [f for f in files if f.plain and f.skipped is None]
    frame = _plain_frame(candidates)
    group: list[_File] = []
    for f in files:
        if f.skipped is not None or f.plain:
            group.append(f)
            continue
        _store_group(con, group, frame, results, pending)
        group = []
        f.data = b""  # the chunk path reads the file itself
        results.append(ingest_source(con, f.path, f.opts, batched=True, src=f.src, pending=pending))
    _store_group(con, group, frame, results, pending)


# --------------------------------------------------------------------------- the frame


def _plain_frame(files: list[_File]) -> pl.DataFrame | None:
    """The parsed, folded lines of the plain files (``_file``: index in the batch; files found
    not plain here are marked and left out), ordered by file and line."""
    if not files:
        return None
    frame = _lines(files)
    by_index = {f.index: f for f in files}
    opts = files[0].opts
    grammars = checked_grammars(opts.grammar_dirs)
    if not opts.keep_prompts:
        _drop(frame, by_index, _open_records(frame))
        frame = frame.filter(pl.col("_file").is_in([i for i, f in by_index.items() if f.plain]))
    # secrets (and prompts unless --keep-prompts) are masked before anything reads the text
    frame = redact_frame(frame, "raw", opts.keep_prompts, RedactState())
    parsed = []
    for key, members in _contexts(files).items():
        ctx = _context_for(key, opts, grammars)
        sub = frame.filter(pl.col("_file").is_in([f.index for f in members]))
        if sub.height == 0:
            continue
        read = sub.drop("_file")
        out = parse_segments([(ctx.parse_engine, read)], grammars, opts.shape_caches).frame
        sub = sub.hstack(out.drop("line_no"))
        _drop(sub, by_index, _not_plain(sub, ctx, grammars))
        sub = sub.filter(pl.col("_file").is_in([f.index for f in members if f.plain]))
        if sub.height:
            parsed.append(_cut(sub, ctx, by_index))
    if not parsed:
        return None
    return pl.concat(parsed, how="diagonal_relaxed").sort("_file", "line_no")


def _drop(frame: pl.DataFrame, by_index: dict, indexes) -> None:
    for i in indexes:
        by_index[int(i)].plain = False


def _lines(files: list[_File]) -> pl.DataFrame:
    """The read columns of every file (as ``read.iter_chunks`` gives them) plus ``_file``:
    one Arrow array over the files' bytes, a newline added to a last line without one."""
    import numpy as np

    parts, starts, firsts = [], [], []
    at = lines = 0
    for f in files:
        data = f.data if f.data.endswith(b"\n") else f.data + b"\n"
        parts.append(data)
        starts.append(at)
        firsts.append(lines)
        at += len(data)
        lines += data.count(b"\n")
    frame = _fast_frame(bytearray(b"".join(parts)), 0, at, 0, 0)
    assert frame is not None, "plain files are valid UTF-8 without NUL bytes"
    pos = np.searchsorted(np.array(starts, dtype=np.int64), frame["_off"].to_numpy(), side="right") - 1
    index = pl.Series("_k", pos, dtype=pl.Int64)
    meta = pl.DataFrame({"_k": range(len(files)), "_file": [f.index for f in files], "_first": firsts,
                         "_start": starts}, schema={"_k": pl.Int64, "_file": pl.Int64, "_first": pl.Int64,
                                                     "_start": pl.Int64})
    frame = frame.with_columns(index).join(meta, on="_k", how="left", maintain_order="left")
    frame = frame.with_columns((pl.col("line_no") - pl.col("_first") + 1).alias("line_no"),
                               (pl.col("_off") - pl.col("_start")).alias("_off"))
    return _post(frame, None).with_columns(frame["_file"])


def _open_records(frame: pl.DataFrame) -> list:
    """Files holding a line that opens a multi-line prompt record (redaction would carry its
    state over the next lines, maybe into the next file)."""
    pol = policy()  # the test redact_frame makes (_mask_open_records), on every file at once
    hinted = pl.col("raw").str.contains(f"{pol.secret_hint}|{pol.prompt_hint}").fill_null(False)
    opens = hinted & pl.col("raw").str.contains(pol.open_re).fill_null(False)
    return frame.filter(opens)["_file"].unique().to_list()


def _contexts(files: list[_File]) -> dict:
    out: dict = {}
    for f in files:
        if f.plain:
            out.setdefault((f.det.kind == "server_log", f.parse_engine), []).append(f)
    return out


def _context_for(key, opts, grammars):
    """The pattern sets ``pipeline._context`` gives a file of this kind and engine."""
    from .pipeline import _context

    server_log, engine = key
    det = Detection("server_log" if server_log else "unknown", engine, {})
    return _context(None, None, opts, grammars, det, engine, 0, TimeState(), RunState(base_run_id=0))


def _not_plain(sub: pl.DataFrame, ctx, grammars) -> set:
    """Files of ``sub`` (parsed) that need the per-file path (see the module docstring)."""
    bad: set = set()
    # a traceback start or a benchmark title opens a record; a body line first would be the
    # tail of a traceback (fold reads those at the start of the text only). Body lines and
    # benchmark rows elsewhere are strays that fold re-labels line by line.
    titles = [p.name for p in ctx.pats if "bench_start" in p.roles]
    opens = (_fold_role(ctx) == "start").fill_null(False) | pl.col("pattern").is_in(titles).fill_null(False)
    folds = sub.filter(opens | ((pl.col("line_no") == 1) & _body_like(ctx)))
    bad |= set(folds["_file"].to_list())
    bad |= _switches(sub, ctx, grammars)
    bad |= _launches(sub, ctx)
    return bad


def _fold_role(ctx) -> pl.Expr:
    return pl.col("pattern").replace_strict({p.name: p.fold for p in ctx.pats if p.fold}, default=None,
                                            return_dtype=pl.Utf8)


def _body_like(ctx) -> pl.Expr:
    """Lines fold joins to the record before them (fold._flags ``_body``): body lines, and
    error lines that read as an exception line."""
    exc = (pl.col("table") == "errors") & (_fold_role(ctx) != "start").fill_null(True) \
        & pl.col("msg").str.contains(_EXC_LINE).fill_null(False)
    return ((_fold_role(ctx) == "body") | exc).fill_null(False)


def _switches(sub: pl.DataFrame, ctx, grammars) -> set:
    """Files where a launch of another engine would switch the grammar (segment.EngineSwitch)."""
    sw = ctx.switch
    if sw is None or not sw.literals:
        return set()
    from .parse import parse_frame

    hits = sub.filter(pl.col("raw").str.contains_any(sw.literals).fill_null(False))
    if hits.height == 0:
        return set()
    read = hits.select("line_no", "raw", "truncated")
    own = other = pl.Series([False] * hits.height)
    for engine in sw.engines:
        claims = parse_frame(read, grammars, engine).frame["pattern"].is_in(list(sw.launch[engine])).fill_null(False)
        other = other | claims
        if engine == ctx.parse_engine:
            own = claims
    return set(hits.filter(other & ~own)["_file"].to_list())


def _launch_rank(sub: pl.DataFrame, ctx) -> pl.DataFrame:
    """The launch markers of ``sub`` with their rank and whether each starts a run
    (normalize.starts_run: a lower rank, a second rank-0 marker, or the same rank again from the
    same process)."""
    proc = pl.col("proc") if "proc" in sub.columns else pl.lit(None, dtype=pl.Utf8)
    m = sub.filter(pl.col("pattern").is_in(list(ctx.launch_rank))).select("_file", "line_no", "pid", "pattern",
                                                                           proc.alias("_proc"))
    rank = pl.col("pattern").replace_strict(ctx.launch_rank, return_dtype=pl.Int64) if ctx.launch_rank \
        else pl.lit(None, dtype=pl.Int64)  # (an empty mapping would keep the strings)
    m = m.with_columns(rank.alias("_rank"))
    prev, prev_proc = pl.col("_rank").shift(1).over("_file"), pl.col("_proc").shift(1).over("_file")
    same_step = (pl.col("_rank") == prev) & ((prev == 0) | pl.col("_proc").eq_missing(prev_proc))
    return m.with_columns((prev.is_null() | (pl.col("_rank") < prev) | same_step).alias("_new"))


def _launches(sub: pl.DataFrame, ctx) -> set:
    """Files with more than one launch, or with a run's activity before their launch (run
    derivation would split those lines off as a run of their own: ids not known before)."""
    m = _launch_rank(sub, ctx)
    if m.height == 0:
        return set()
    per = m.group_by("_file").agg(pl.col("_new").sum().alias("n"), pl.col("line_no").min().alias("first"))
    bad = set(per.filter(pl.col("n") > 1)["_file"].to_list())
    active = {p.name for p in ctx.pats if p.table in _ACTIVITY_TABLES
              or (p.table == "events" and p.kind in _ACTIVITY_EVENTS) or (p.table == "errors" and p.const.get("fatal"))}
    early = sub.join(per.select("_file", "first"), on="_file").filter(
        (pl.col("line_no") < pl.col("first")) & pl.col("pattern").is_in(list(active)).fill_null(False))
    return bad | set(early["_file"].to_list())


def _cut(sub: pl.DataFrame, ctx, by_index: dict) -> pl.DataFrame:
    """Fold the plain files' lines and mark each line's part: ``_seg`` 0 for what the per-file
    path stores with the chunk, 1 for the open tail (stored last, where an append resumes):
    the last line from the last one no body line follows, moved back over the pre-launch
    streak before it (fold.fold and fold._carry_prelaunch_streak on a file of no record).
    A last line without its newline is always tail; when nothing else would be carried
    (``cut`` 0) the per-file path stores the other lines with the chunk."""
    pats = ctx.pats
    prelaunch = [p.name for p in pats if "prelaunch" in p.roles]
    ends = pl.DataFrame({"_file": list(by_index), "_partial": [not f.data.endswith(b"\n") for f in by_index.values()]},
                        schema={"_file": pl.Int64, "_partial": pl.Boolean})
    f = sub.join(ends, on="_file", how="left", maintain_order="left")
    r = pl.int_range(pl.len()).over("_file")
    n_full = pl.len().over("_file") - pl.col("_partial").cast(pl.Int64)
    f = f.with_columns(r.alias("_r"), n_full.alias("_n"))
    body = _body_like(ctx)
    pre = pl.col("pattern").is_in(prelaunch).fill_null(False)
    in_frame = pl.col("_r") < pl.col("_n")
    head = pl.col("_r").filter(~body & in_frame).max().over("_file")  # first line of the last group
    f = f.with_columns(head.fill_null(0).alias("_head"))
    cut = (pl.col("_r").filter(~pre & (pl.col("_r") < pl.col("_head"))).max().over("_file") + 1).fill_null(0)
    f = f.with_columns(cut.alias("_cut"))
    too_long = f.filter((pl.col("_n") - pl.col("_cut")) > _MAX_CARRY)["_file"].unique().to_list()
    for i in too_long:
        by_index[int(i)].plain = False
    f = f.filter(~pl.col("_file").is_in(too_long))
    # the tail: from the cut on; a partial last line alone when the cut is 0 (the chunk before
    # the partial line was stored whole as one open record, fold's ``all_open``)
    tail = pl.when(pl.col("_partial") & (pl.col("_cut") == 0) & (pl.col("_n") > 0)).then(~in_frame) \
        .otherwise(pl.col("_r") >= pl.col("_cut"))
    f = f.with_columns(tail.cast(pl.Int8).alias("_seg"))
    folded = fold(f, pats, ctx.bench_columns, final=True)
    assert folded.errors is None and folded.bench is None, "plain files hold no record"
    return folded.frame.drop("_partial", "_r", "_n", "_head", "_cut").with_columns(
        pl.lit(int(ctx.switch is not None)).alias("_server"))


# --------------------------------------------------------------------------- stamping


def _stamp(frame: pl.DataFrame, group: list[_File], year: int | None, ctx_of) -> tuple[pl.DataFrame, dict]:
    """Timestamps and run ids of the group's lines, per file as ``normalize.add_timestamps``
    and ``assign_runs`` give them over its two parts (stored part, then tail); the states
    each file leaves."""
    check_year(year)
    meta = pl.DataFrame({
        "_file": [f.index for f in group],
        "_mtime": [dt.datetime.fromtimestamp(f.src.mtime) for f in group],
        "_run": [f.base_run for f in group]}, schema={"_file": pl.Int64, "_mtime": pl.Datetime("us"),
                                                     "_run": pl.Int32})
    f = frame.join(meta, on="_file", how="left", maintain_order="left")
    month = pl.col("md").str.slice(0, 2).cast(pl.Int32, strict=False)
    f = f.with_columns(month.alias("_m"))
    f = f.with_columns(pl.col("_m").forward_fill().over("_file").alias("_mf"))
    prev = pl.col("_mf").shift(1).over("_file")
    roll = ((pl.col("_mf") < prev) & ((prev - pl.col("_mf")) >= 6)).fill_null(False)
    f = f.with_columns(roll.cast(pl.Int32).cum_sum().over("_file").alias("_yo"))
    first_month = pl.col("_m").drop_nulls().first().over("_file")
    mt = pl.col("_mtime")
    if year:
        base_year = pl.lit(year, dtype=pl.Int32)
    else:
        base_year = pl.when(first_month.is_not_null()).then(
            mt.dt.year() - (first_month > mt.dt.month()).cast(pl.Int32)).otherwise(mt.dt.year())
    f = f.with_columns(base_year.cast(pl.Int32).alias("_by"), mt.dt.strftime("%Y-%m-%d").alias("_bd"))
    full = pl.concat_str([pl.col("date"), pl.col("time")], separator=" ")
    vllm = pl.concat_str([(pl.col("_yo") + pl.col("_by")).cast(pl.Utf8), pl.lit("-"), pl.col("md"),
                          pl.lit(" "), pl.col("time")])
    only_time = pl.concat_str([pl.col("_bd"), pl.lit(" "), pl.col("time")])
    text = (pl.when(pl.col("date").is_not_null()).then(full)
            .when(pl.col("md").is_not_null()).then(vllm)
            .otherwise(only_time))
    ts = text.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    ts = pl.when(ts.dt.year().is_between(*YEARS)).then(ts).otherwise(None)
    f = f.with_columns(pl.when(pl.col("time").is_not_null()).then(ts).otherwise(None).alias("ts"),
                       pl.col("_run").alias("run_id"))
    states = _states(f, group, year, ctx_of)
    return f.drop("_mtime", "_run", "_m", "_mf", "_yo", "_by", "_bd"), states


def _states(f: pl.DataFrame, group: list[_File], year, ctx_of) -> dict:
    """Per file, the ``_Stamped`` states (Python over a few aggregates per file)."""
    segs = f.group_by("_file", "_seg").agg(
        pl.col("_m").drop_nulls().first().alias("first_month"),
        (pl.col("date").is_null().all() & pl.col("time").is_not_null().any()).alias("time_only"),
        pl.col("_yo").last().alias("yo"), pl.col("_mf").drop_nulls().last().alias("last_month"),
        pl.col("_bad").sum(), pl.col("_nul").sum(), pl.col("truncated").sum(), pl.col("_cr").sum(),
        pl.len().alias("n"), pl.col("line_no").first().alias("first_line"), pl.col("_off").first().alias("first_off"),
    ).sort("_file", "_seg")
    by_file: dict = {}
    for row in segs.iter_rows(named=True):
        by_file.setdefault(row["_file"], []).append(row)
    movable = _movable(f, group, ctx_of)
    markers = _main_markers(f, ctx_of)
    out = {}
    for g in group:
        rows = by_file[g.index]
        mtime = dt.datetime.fromtimestamp(g.src.mtime)
        st = TimeState()
        main = [r for r in rows if r["_seg"] == 0]
        stats_main = _stats(main)
        for r in rows:
            _advance(st, r, mtime, year)
            if r["_seg"] == 0:
                time_main = TimeState(**vars(st))
        if not main:
            time_main = TimeState()
        runs = RunState(base_run_id=g.base_run)
        if main:
            m = markers.get(g.index)
            if m is not None:
                line, pid, last_rank, last_proc, n_new = m
                runs.prev_rank, runs.prev_proc = last_rank, last_proc
                if n_new:
                    runs.ordinal = 1
                    runs.starts.append((1, line))
                    if pid is not None:
                        runs.pid_starts.append((int(pid), line, 1))
            runs.mv_tail_from = movable.get(g.index)
            for o in range(runs.ordinal + 1):
                runs.run_id(o)
        tail = [r for r in rows if r["_seg"] == 1]
        out[g.index] = _Stamped(time_main=time_main, time_all=st, runs_main=runs, stats_main=stats_main,
                                stats_all=_stats(rows),
                                tail=(int(tail[0]["first_off"]), int(tail[0]["first_line"])) if tail else None,
                                n_lines=sum(r["n"] for r in rows), main_rows=sum(r["n"] for r in main))
    return out


def _advance(st: TimeState, seg: dict, mtime: dt.datetime, year) -> None:
    """The time state after ``normalize.add_timestamps`` stamped one part of a file."""
    if st.base_date is None:
        st.base_date = mtime.strftime("%Y-%m-%d")
    if st.base_year is None:
        if year:
            st.base_year, st.basis = year, "--year"
        elif seg["first_month"] is not None:
            st.base_year = mtime.year - (1 if seg["first_month"] > mtime.month else 0)
            st.basis = "file mtime"
    if seg["last_month"] is not None:
        st.last_month = int(seg["last_month"])
    st.year_offset = int(seg["yo"])
    if st.basis == "" and seg["time_only"]:
        st.basis = "file mtime (time-only timestamps)"


def _stats(rows: list) -> dict:
    return {"bad_bytes": sum(int(r["_bad"] or 0) for r in rows), "nul_bytes": sum(int(r["_nul"] or 0) for r in rows),
            "truncated_lines": sum(int(r["truncated"] or 0) for r in rows),
            "crlf_lines": sum(int(r["_cr"] or 0) for r in rows)}


def _movable(f: pl.DataFrame, group: list[_File], ctx_of) -> dict:
    """Per file, the first line of the streak of pre-launch chatter its stored part ends in
    (``RunState.mv_tail_from``), for files whose stored part ends in one."""
    out = {}
    for (server, engine), sub in f.filter(pl.col("_seg") == 0).group_by("_server", "_engine"):
        roles = ctx_of(server, engine).roles
        mv = (pl.col("pattern").is_in(roles.get("prelaunch", [])).fill_null(False) & pl.col("ts").is_null()) \
            | pl.col("pattern").is_in(roles.get("prelaunch_stamped", [])).fill_null(False)
        ends = sub.with_columns(mv.alias("_mv")).group_by("_file").agg(
            pl.col("_mv").last().alias("last"),
            pl.col("line_no").filter(~pl.col("_mv")).max().alias("stop"),
            pl.col("line_no").min().alias("first"))
        for i, last, stop, first in ends.iter_rows():
            if last:
                out[i] = int(stop) + 1 if stop is not None else int(first)
    return out


def _main_markers(f: pl.DataFrame, ctx_of) -> dict:
    """Per file, the launch markers of its stored part: (line and pid of the one that starts
    the run, rank and process tag of the last (``RunState.prev_rank``/``prev_proc``), how many
    start a run)."""
    out = {}
    for (server, engine), sub in f.filter(pl.col("_seg") == 0).group_by("_server", "_engine"):
        m = _launch_rank(sub, ctx_of(server, engine))
        if m.height == 0:
            continue
        agg = m.group_by("_file").agg(
            pl.col("line_no").filter(pl.col("_new")).first().alias("line"),
            pl.col("pid").filter(pl.col("_new")).first().alias("pid"),
            pl.col("_rank").last().alias("last_rank"), pl.col("_proc").last().alias("last_proc"),
            pl.col("_new").sum().alias("n_new"))
        for i, line, pid, last_rank, last_proc, n_new in agg.iter_rows():
            out[i] = (None if line is None else int(line), pid, int(last_rank), last_proc, int(n_new))
    return out


# --------------------------------------------------------------------------- storing


def _store_group(con, group: list[_File], frame: pl.DataFrame | None, results: list,
                 pending: PendingDerivation) -> None:
    """Store the plain files of ``group`` (and the skipped ones, in order) and derive their runs."""
    if not group:
        return
    plain = [f for f in group if f.skipped is None]
    if plain:
        source_id = int(fetch_one(con.execute(ingest_sql("next_source_id")))[0])
        base_run = pending.base_run(con)
        for f in plain:  # a plain file has one run: ids follow the order of the files
            f.source_id, f.base_run = source_id, base_run
            source_id, base_run = source_id + 1, base_run + 1
        done = _store_plain(con, plain, frame, pending)
    else:
        done = {}
    notes = ["same content already ingested (sha256); use --replace to re-ingest"]
    for f in group:
        if f.skipped is not None:
            results.append(IngestResult(f.src.display_name, "skipped", f.skipped, notes=list(notes)))
        else:
            results.append(done[f.index])


def _store_plain(con, plain: list[_File], frame: pl.DataFrame, pending: PendingDerivation) -> dict:
    opts = plain[0].opts
    grammars = checked_grammars(opts.grammar_dirs)
    ctxs: dict = {}

    def ctx_of(server: int, engine: str):
        key = (bool(server), engine)
        if key not in ctxs:
            ctxs[key] = _context_for(key, opts, grammars)
        return ctxs[key]

    f = frame.filter(pl.col("_file").is_in([p.index for p in plain]))
    f, states = _stamp(f, plain, opts.year, ctx_of)
    _insert_sources(con, plain)
    source_of = {p.base_run: p.source_id for p in plain}
    sid = pl.col("run_id").replace_strict(source_of, return_dtype=pl.Int32)
    bulk, spans = BulkLines(con), {}
    for (server, engine), sub in f.group_by(["_server", "_engine"], maintain_order=True):
        ctx = ctx_of(server, engine)
        # (the frame is stamped, so the typed rows carry their timestamps and runs)
        store_chunk(con, sub, Folded(sub, None, None, None, set()), ctx.pats, ctx.by_name, sid,
                    extract(sub, ctx.pats, spans), bulk)
    bulk.flush()  # before run derivation reads the lines
    for p in plain:
        if p.opts.progress:
            p.opts.progress(p.src.size, p.src.size)
    return _finish(con, plain, states, pending)


def _insert_sources(con, plain: list[_File]) -> None:
    """The ``sources`` rows of the plain files (as ``pipeline._insert_source``), one insert."""
    now = dt.datetime.now()
    rows = pl.DataFrame({
        "source_id": [p.source_id for p in plain], "path": [p.src.display_name for p in plain],
        "name": [Path(p.src.display_name).name for p in plain], "sha256": [p.src.sha256 for p in plain],
        "bytes": [p.src.size for p in plain], "kind": [p.det.kind for p in plain],
        "engine": [p.det.engine for p in plain], "label": [p.opts.label for p in plain],
        "ingested_at": [now] * len(plain), "compressed": [p.src.compressed for p in plain]},
        schema={"source_id": pl.Int32, "path": pl.Utf8, "name": pl.Utf8, "sha256": pl.Utf8, "bytes": pl.Int64,
                "kind": pl.Utf8, "engine": pl.Utf8, "label": pl.Utf8, "ingested_at": pl.Datetime("us"),
                "compressed": pl.Boolean})
    insert(con, "sources", rows)


def _finish(con, plain: list[_File], states: dict, pending: PendingDerivation) -> dict:
    """Resume states, the results (``pipeline._finish`` for each file) and their run
    derivation, queued on ``pending`` (derived with the batch's other new sources)."""
    saved, items, out = [], [], {}
    for p in plain:
        s: _Stamped = states[p.index]
        src = p.src
        src.read_end = src.size
        src.partial = None
        check_growth(src)
        src.stats.update(s.stats_all)
        p.det.run_engines = {p.base_run: p.parse_engine}
        time_d, runs_d = source_mod.snapshot(s.time_main, s.runs_main)
        offset, line_no = s.tail if s.tail is not None else (src.size, s.n_lines + 1)
        extra = {"switches": [], "run_engines": [[p.base_run, p.parse_engine]] if s.main_rows else [],
                 "redact_inside": False}
        head_len, head_sha, edge_sha = source_mod.fingerprint_bytes(p.data, src.size)
        saved.append((p.source_id, source_mod.ResumeState(
            resume_offset=offset, resume_line=line_no, read_end=src.size, head_len=head_len, head_sha=head_sha,
            edge_sha=edge_sha, kind=p.det.kind, engine=p.det.engine, parse_engine=p.parse_engine,
            scores=p.det.scores, report_kind=p.det.report_kind, time=time_d, runs=runs_d, stats=s.stats_main,
            extra=extra, real_path=p.real, family=p.family)))
        items.append((p.source_id, p.det, src, s.time_all, p.base_run, p.opts, p.head))
    source_mod.save_many(con, saved)
    for p, item in zip(plain, items):
        s = states[p.index]
        notes = []
        if p.det.kind == "unknown":
            notes.append("unknown format: stored as raw lines with mined templates")
        if p.src.grew:
            notes.append("file grew while ingesting: only the bytes present at start were read")
        if s.stats_all["truncated_lines"]:
            notes.append(f"{s.stats_all['truncated_lines']} over-long line(s) stored truncated")
        out[p.index] = IngestResult(p.src.display_name, "ingested", p.source_id, p.det.kind, p.det.engine,
                                    s.n_lines, [], notes)
        pending.add(con, item, out[p.index], split=False)  # a plain file has nothing to split off
    return out
