"""Normalise per-line values: timestamps (with year inference), run assignment.

Contract:
* ``TimeState``/``add_timestamps`` build the ``ts`` column. SGLang prints full dates (or
  only ``HH:MM:SS`` before v0.3.4: the date then comes from the file's mtime). vLLM prints
  ``MM-DD HH:MM:SS`` with no year: the year is taken from ``--year`` or the file mtime
  (minus one when the log's first month is later than the mtime's month) and advanced at
  each December->January rollover. ``TimeState.basis`` says which was used.
* ``RunState``/``assign_runs`` give each line a provisional run ordinal from launch markers
  (patterns with ``launch = N``): a marker starts a new run unless it continues the launch
  sequence of the current one (banner 0 -> args 1 -> engine config 2; ``starts_run``). Only markers are
  visited in Python; lines get their ordinal by an as-of join.
Redaction lives in ``ingest/redact.py``.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl


@dataclass
class TimeState:
    base_year: int | None = None
    base_date: str | None = None  # for time-only timestamps
    basis: str = ""
    year_offset: int = 0
    last_month: int | None = None


#: years a log timestamp (and ``--year``) may name: from the Unix epoch (a clock never set
#: prints 1970) to well past any log we will read
YEARS = (1970, 2199)


def check_year(year: int | None) -> None:
    """Refuse a ``--year`` outside ``YEARS`` (UsageError)."""
    if year is not None and not YEARS[0] <= year <= YEARS[1]:
        from ..errors import UsageError

        raise UsageError(f"--year {year}: expected a year from {YEARS[0]} to {YEARS[1]}")


def add_timestamps(f: pl.DataFrame, st: TimeState, mtime: float, year: int | None) -> pl.DataFrame:
    mdt = dt.datetime.fromtimestamp(mtime)
    if st.base_date is None:
        st.base_date = mdt.strftime("%Y-%m-%d")
    month = pl.col("md").str.slice(0, 2).cast(pl.Int32, strict=False)
    check_year(year)
    if st.base_year is None:
        first_month = f.select(month.drop_nulls().first()).item() if "md" in f.columns else None
        if year:
            st.base_year, st.basis = year, "--year"
        elif first_month is not None:
            st.base_year = mdt.year - (1 if first_month > mdt.month else 0)
            st.basis = "file mtime"
    f = f.with_columns(month.alias("_m"))
    f = f.with_columns(pl.col("_m").forward_fill().alias("_mf"))
    prev = pl.col("_mf").shift(1)
    if st.last_month is not None:
        prev = prev.fill_null(st.last_month)
    roll = ((pl.col("_mf") < prev) & ((prev - pl.col("_mf")) >= 6)).fill_null(False)
    f = f.with_columns((roll.cast(pl.Int32).cum_sum() + st.year_offset).alias("_yo"))
    if f.height:
        lm = f["_mf"].drop_nulls()
        if lm.len():
            st.last_month = int(lm[-1])
        st.year_offset = int(f["_yo"][-1])
    base_year = st.base_year or mdt.year
    full = pl.concat_str([pl.col("date"), pl.col("time")], separator=" ")
    vllm = pl.concat_str([(pl.col("_yo") + base_year).cast(pl.Utf8), pl.lit("-"), pl.col("md"),
                          pl.lit(" "), pl.col("time")])
    only_time = pl.concat_str([pl.lit(st.base_date), pl.lit(" "), pl.col("time")])
    text = (pl.when(pl.col("date").is_not_null()).then(full)
            .when(pl.col("md").is_not_null()).then(vllm)
            .otherwise(only_time))
    ts = text.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    # a year outside YEARS (0000 from a zeroed clock, 9999 garbage) is not a time: no ts
    ts = pl.when(ts.dt.year().is_between(*YEARS)).then(ts).otherwise(None)
    if st.basis == "" and f.select(pl.col("date").is_null().all() & pl.col("time").is_not_null().any()).item():
        st.basis = "file mtime (time-only timestamps)"
    return f.with_columns(pl.when(pl.col("time").is_not_null()).then(ts).otherwise(None).alias("ts")
                          ).drop("_m", "_mf", "_yo")


#: Chatter a launch prints just before its marker (shell trace of the launch command,
#: launcher warnings, SGLang's bare post-init warnings) is the grammar role "prelaunch";
#: "prelaunch_stamped" lines (vLLM's "Automatically detected platform", printed with a
#: timestamp by the new process at import) belong to the next launch stamped or not. The
#: pattern names are data: parsers/*.toml [roles].


@dataclass
class RunState:
    base_run_id: int
    ordinal: int = 0  # 0 = lines before the first launch marker
    prev_rank: int | None = None
    prev_proc: str | None = None  # process tag (without pid) of the last launch marker
    starts: list = field(default_factory=list)  # (ordinal, line_no)
    pid_starts: list = field(default_factory=list)  # (pid, line_no, ordinal) of Ray-tagged launches
    mv_tail_from: int | None = None  # first line of the pre-launch streak that ended the last chunk
    # run_id of each ordinal (index): consecutive from base_run_id, but never below ``floor``
    # (an append may find ids after base_run_id taken by sources ingested in between)
    run_ids: list = field(default_factory=list)
    floor: int = 0

    def run_id(self, ordinal: int) -> int:
        while len(self.run_ids) <= ordinal:
            # the first launch shares the id of the lines before it (a job preamble is the
            # launch's context, not a run: ids start at 1 without gaps); derive/runs.py splits
            # those lines off when they hold a run of their own (the tail of an earlier launch)
            self.run_ids.append(self.base_run_id if len(self.run_ids) < 2
                                else max(self.run_ids[-1] + 1, self.floor))
        return self.run_ids[ordinal]


def starts_run(rank: int, prev_rank: int | None, proc: str | None, prev_proc: str | None) -> bool:
    """Whether a launch marker of ``rank`` starts a new run after one of ``prev_rank``: the first
    marker, a step back in the launch sequence (banner 0 -> args 1 -> engine config 2), a
    second banner, or the same step again from the same process (offline runs print no banner:
    twelve ``benchmark_latency`` runs in a file are twelve engine configs in a row; the config of
    each data-parallel engine comes from a process of its own, ``EngineCore_DP1``)."""
    if prev_rank is None or rank < prev_rank:
        return True
    return rank == prev_rank and (rank == 0 or proc == prev_proc)


def assign_runs(f: pl.DataFrame, launch_rank: dict[str, int], st: RunState,
                roles: dict[str, list[str]]) -> pl.DataFrame:
    # A launch owns the chatter printed just before its marker (shell trace of the launch
    # command, launcher warnings, SGLang's bare post-init warnings): the run starts at the
    # first line of the unbroken streak of such lines right before the marker. ``roles`` is
    # formats.grammar.role_map of the grammars in use.
    movable = pl.col("pattern").is_in(roles.get("prelaunch", [])).fill_null(False) & pl.col("ts").is_null() \
        | pl.col("pattern").is_in(roles.get("prelaunch_stamped", [])).fill_null(False)
    f = f.with_columns(movable.alias("_mv"))
    f = f.with_columns((~pl.col("_mv")).cum_sum().alias("_streak"))
    # a streak that began in the previous chunk starts where that chunk's trailing streak began
    carried = pl.lit(st.mv_tail_from, dtype=pl.Int64)
    streak_min = pl.col("line_no").min().over(["_streak", "_mv"])
    if st.mv_tail_from is not None:
        streak_min = pl.when(pl.col("_streak") == 0).then(carried).otherwise(streak_min)
    f = f.with_columns(pl.when(pl.col("_mv")).then(streak_min).otherwise(None).alias("_smin"))
    f = f.with_columns(pl.col("_smin").shift(1, fill_value=st.mv_tail_from).alias("_from"))
    if f.height:
        st.mv_tail_from = f["_smin"][-1] if f["_mv"][-1] else None
    f = f.drop("_smin")
    proc = pl.col("proc") if "proc" in f.columns else pl.lit(None, dtype=pl.Utf8)
    markers = f.filter(pl.col("pattern").is_in(list(launch_rank))).select("line_no", "pattern", "_from", "pid",
                                                                           proc.alias("_proc"))
    f = f.drop("_mv", "_streak", "_from")
    new_starts = []
    for line_no, pattern, from_line, pid, proc_name in markers.iter_rows():  # markers only: a handful per launch
        rank = launch_rank[pattern]
        if starts_run(rank, st.prev_rank, proc_name, st.prev_proc):
            st.ordinal += 1
            start = line_no if from_line is None or not st.starts else max(int(from_line), st.starts[-1][1] + 1)
            if not st.starts:
                start = line_no  # the first launch keeps everything before it (see finalize_source)
            st.starts.append((st.ordinal, start))
            new_starts.append((start, st.ordinal))
            if pid is not None:
                st.pid_starts.append((int(pid), line_no, st.ordinal))
        st.prev_rank, st.prev_proc = rank, proc_name
    first_ordinal = st.ordinal - len(new_starts)
    if new_starts:
        starts = pl.DataFrame(new_starts, schema={"line_no": pl.Int64, "_ord": pl.Int64}, orient="row")
        f = f.sort("line_no").join_asof(starts, on="line_no", strategy="backward")
        f = f.with_columns(pl.col("_ord").fill_null(first_ordinal))
    else:
        f = f.with_columns(pl.lit(st.ordinal, dtype=pl.Int64).alias("_ord"))
    if st.pid_starts:
        # Ray actors interleave several engines in one stream: a line tagged with an actor's pid
        # belongs to that actor's latest launch, whatever other actor launched in between.
        by_pid = pl.DataFrame(st.pid_starts, schema={"pid": pl.Int64, "line_no": pl.Int64, "_pord": pl.Int64},
                              orient="row").sort("line_no")
        import warnings

        with warnings.catch_warnings():  # both sides are sorted by line_no within each pid
            warnings.simplefilter("ignore")
            f = f.sort("line_no").join_asof(by_pid, on="line_no", by="pid", strategy="backward")
        f = f.with_columns(pl.coalesce(pl.col("_pord"), pl.col("_ord")).alias("_ord")).drop("_pord")
    ids = {o: st.run_id(o) for o in range(st.ordinal + 1)}
    return f.with_columns(pl.col("_ord").replace_strict(ids, return_dtype=pl.Int32).alias("run_id")).drop("_ord")
