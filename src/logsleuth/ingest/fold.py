"""Fold multi-line records: tracebacks into one error each, benchmark blocks into one row.

Contract: ``fold(frame, patterns, bench_columns, final)`` takes a classified chunk and
returns ``Folded``: the frame with corrected ``pattern``/``table`` columns (lines inside
a traceback become ``traceback``; body-looking lines outside one become
``continuation`` or stay unclaimed), the ``errors`` rows of folded tracebacks, the
``bench_results`` rows, and ``carry``: trailing lines of a record that may continue in
the next chunk (empty when ``final``). Everything is column arithmetic (cumulative sums
over flags, group-bys); no Python loop over lines.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..formats.grammar import Pattern
from .read import READ_COLUMNS

#: a line that ends a Python traceback: "pkg.SomeError: message"
_EXC_LINE = r"^(?:[A-Za-z_][\w.]*\.)?((?:[A-Za-z_]\w*)?(?:Error|Exception|Exit|Interrupt|Failure|Dead\w*|Warning))(?::\s*(.*))?$"
_BENCH_ROW = r"^\s*(?P<key>[^:]+?):\s+(?P<val>\S.*?)\s*$"
#: "The above exception was the direct cause..." / "During handling...": the next traceback continues the record
_CHAIN = r"^\s*(?:The above exception was the direct cause of the following exception|During handling of the above exception, another exception occurred)"
_FRAME = r'^\s*File "[^"]*", line \d+'
_BLANK = r"^\s*$"
_MAX_CARRY = 20000  # a "record" longer than this is cut rather than carried forever

BENCH_NUMERIC = {"backend"}
  # (the only text column; everything else is numeric)


@dataclass
class Folded:
    frame: pl.DataFrame
    errors: pl.DataFrame | None
    bench: pl.DataFrame | None
    carry: pl.DataFrame | None
    inner_error_lines: set  # line_no of error-pattern lines swallowed by a traceback
    # not final, and the whole frame is one record that may continue (it is folded as it is,
    # since a carry that never shrinks would never be stored; the last chunk of an ingest
    # keeps it as the open tail instead)
    all_open: bool = False


def fold(frame: pl.DataFrame, patterns: list[Pattern], bench_columns: dict[str, str],
         final: bool) -> Folded:
    # grammar roles (parsers/*.toml [roles]): the lines of a benchmark block, and launch chatter
    bench = _BenchRoles([p.name for p in patterns if "bench" in p.roles],
                        [p.name for p in patterns if "bench_start" in p.roles],
                        [p.name for p in patterns if "bench_end" in p.roles])
    prelaunch = [p.name for p in patterns if "prelaunch" in p.roles]
    roles = {p.name: p.fold for p in patterns if p.fold}
    f = frame.with_columns(
        pl.col("pattern").replace_strict(roles, default=None, return_dtype=pl.Utf8).alias("_role"))
    n = f.height
    # Only lines claimed by a fold role, an error or a benchmark pattern ("relevant") and their
    # close neighbours take part in folding; the rest (nearly all lines of a busy server) are
    # single-line records that fold leaves alone. They are set aside first so the regexes and
    # window functions below run on a few hundred rows instead of the whole chunk. Exact: a
    # dropped row is neither body nor start, so it forms its own group, and every shift below
    # looks at most two rows back or one row ahead of a relevant row, which are kept.
    relevant = (pl.col("_role").is_not_null() | (pl.col("table") == "errors").fill_null(False)
                | pl.col("pattern").is_in(bench.lines).fill_null(False))
    f = f.with_columns(relevant.alias("_rel")).with_row_index("_row")
    keep = (pl.col("_rel") | pl.col("_rel").shift(-1).fill_null(False) | pl.col("_rel").shift(-2).fill_null(False)
            | pl.col("_rel").shift(1).fill_null(False) | (pl.col("_row") == 0) | (pl.col("_row") == n - 1))
    c = _flags(f.filter(keep), bench)

    cut = n
    if not final and n:
        last_gid = c["_gid"][-1]
        gid_start = c.select(pl.col("_row").filter(pl.col("_gid") == last_gid).first()).item()
        cut = min(cut, gid_start)
        cut = _keep_blocks_whole(c, cut)
        cut = _carry_prelaunch_streak(f, c, prelaunch, cut)
    carry = None
    all_open = not final and n > 0 and cut == 0 and n <= _MAX_CARRY
    if 0 < cut < n and n - cut <= _MAX_CARRY:
        # the read columns only (they are parsed again with the next chunk), byte offsets and
        # per-line counters included
        carry = frame.slice(cut).select([c for c in READ_COLUMNS if c in frame.columns])
        f = f.slice(0, cut)
        c = c.filter(pl.col("_row") < cut)

    c = _fix_claims(c, bench)
    rows = c["_row"]
    f = f.with_columns(f["pattern"].scatter(rows, c["pattern"]), f["table"].scatter(rows, c["table"]))
    inner = set(c.filter(pl.col("_in_tb") & ~pl.col("_s2") & (pl.col("_role") != "body").fill_null(True)
                         & pl.col("_body"))["line_no"].to_list())
    errors = _traceback_rows(c)
    bench = _bench_rows(c, bench_columns)
    keep_cols = [col for col in frame.columns if col not in ("pattern", "table")] + ["pattern", "table"]
    keep_cols = [col for col in keep_cols if col in f.columns]
    return Folded(f.select(keep_cols), errors, bench, carry, inner, all_open)


def _fix_claims(c: pl.DataFrame, bench) -> pl.DataFrame:
    """The claims fold corrects on the relevant rows: traceback bodies and tails, stray body
    lines (continuations, blanks, or unclaimed), and benchmark lines outside a block."""
    # error-pattern lines inside a record keep their own claim (they give the record its kind)
    in_tb_body = pl.col("_in_tb") & ~pl.col("_s2") & ((pl.col("table") != "errors").fill_null(True)
                                                      | (pl.col("_role") == "start").fill_null(False))
    stray_body = (pl.col("_role") == "body") & ~pl.col("_in_tb")
    stray_bench = pl.col("pattern").is_in(bench.lines).fill_null(False) & ~pl.col("_bmember")
    indented = pl.col("msg").str.contains(r"^\s+\S")
    stray_blank = stray_body & pl.col("msg").str.contains(_BLANK).fill_null(False)
    return c.with_columns(
        pl.when(pl.col("_tail_head")).then(pl.lit("traceback_tail"))
        .when(in_tb_body).then(pl.lit("traceback"))
        .when(stray_body & indented).then(pl.lit("continuation"))
        .when(stray_blank).then(pl.lit("blank"))
        .when(stray_body | stray_bench).then(pl.lit(None, dtype=pl.Utf8))
        .otherwise(pl.col("pattern")).alias("pattern"),
        pl.when(pl.col("_tail_head")).then(pl.lit("errors"))
        .when(in_tb_body | (stray_body & indented) | stray_blank).then(pl.lit("lines"))
        .when(stray_body | stray_bench).then(pl.lit(None, dtype=pl.Utf8))
        .otherwise(pl.col("table")).alias("table"))


def _keep_blocks_whole(c: pl.DataFrame, cut: int) -> int:
    """Move a carry cut back to the title of the benchmark block it would split.

    The carry starts at the head of the chunk's last traceback group, and a block's closing
    rule heads a group when blank lines follow it (a blank line reads as a traceback body
    line). Cutting there left the rule to be folded on its own with the next chunk, where
    no block claims it: the block's last_line came out one short. So the block holding the
    first carried row, or the chunk's last row, is carried whole (closed or not)."""
    at = c.filter((pl.col("_row") == cut) | (pl.col("_row") == c["_row"][-1]))
    blocks = at.filter(pl.col("_bmember") & (pl.col("_bgrp") > 0))["_bgrp"]
    if blocks.len():
        b_start = c.filter(pl.col("_bgrp") == blocks.min())["_row"][0]
        cut = min(cut, int(b_start))
    return cut


def _carry_prelaunch_streak(f: pl.DataFrame, c: pl.DataFrame, prelaunch: list, cut: int) -> int:
    """Move a carry cut back over the unbroken streak of pre-launch chatter right before it.

    That chatter (shell trace, launcher warnings) belongs to a launch marker that follows it
    (ingest/normalize.assign_runs), and the marker may be the first carried line or arrive
    with the next chunk: the streak must be assigned together with it, not stored with this
    chunk's run. Lines of a traceback or benchmark block are never part of a streak (a
    record is carried whole or not at all)."""
    if cut <= 0:
        return cut
    pre = f["pattern"].is_in(prelaunch).fill_null(False)
    rec = c.filter(pl.col("_in_tb") | pl.col("_bmember"))["_row"]
    if rec.len():
        pre = pre.scatter(rec, False)
    if not pre[cut - 1]:
        return cut
    breaks = (~pre.slice(0, cut)).arg_true()
    return int(breaks[-1]) + 1 if breaks.len() else 0


@dataclass(frozen=True)
class _BenchRoles:
    """Pattern names of the grammar roles bench (every line of a block), bench_start, bench_end."""
    lines: list
    start: list
    end: list


def _flags(f: pl.DataFrame, bench: _BenchRoles) -> pl.DataFrame:
    """Traceback groups (``_gid``, ``_s2`` start, ``_b2`` body, ``_in_tb``, ``_tail_head``) and
    benchmark blocks (``_bgrp``, ``_bmember``) as columns, by cumulative sums over flags."""
    is_start = (pl.col("_role") == "start") & (pl.col("table") == "errors")
    exc_line = pl.col("msg").str.contains(_EXC_LINE)
    body_like = ((pl.col("_role") == "body")
                 | ((pl.col("table") == "errors") & (pl.col("_role") != "start").fill_null(True)
                    & exc_line.fill_null(False)))
    f = f.with_columns(is_start.fill_null(False).alias("_start"),
                       body_like.fill_null(False).alias("_body"),
                       (pl.col("_role") == "error").fill_null(False).alias("_err"))
    # an error line right before "Traceback (...)" heads the traceback it introduces
    f = f.with_columns((pl.col("_err") & pl.col("_start").shift(-1).fill_null(False)).alias("_merge"))
    # a chained traceback ("The above exception was the direct cause ...", blank, "Traceback ...")
    # continues the record of the first one
    chain = pl.col("msg").str.contains(_CHAIN).fill_null(False)
    blank = pl.col("msg").str.contains(_BLANK).fill_null(False)
    chained = chain.shift(1).fill_null(False) | (chain.shift(2).fill_null(False) & blank.shift(1).fill_null(False))
    f = f.with_columns(chained.alias("_chained"))
    f = f.with_columns(
        ((pl.col("_start") & ~pl.col("_merge").shift(1).fill_null(False) & ~pl.col("_chained"))
         | pl.col("_merge")).alias("_s2"),
        (pl.col("_body") | (pl.col("_start") & (pl.col("_merge").shift(1).fill_null(False) | pl.col("_chained"))))
        .alias("_b2"),
    )
    f = f.with_columns((~pl.col("_b2") | pl.col("_s2")).cum_sum().alias("_gid"))
    # a traceback tail without its "Traceback (most recent call last):" head (a log that starts
    # mid-traceback): body lines with frames and an exception line, at the start of the text
    first_body = (pl.col("_b2") & ~pl.col("_s2")).first().over("_gid")
    tail = (first_body & pl.col("msg").str.contains(_FRAME).fill_null(False).any().over("_gid")
            & (exc_line.fill_null(False) & pl.col("_b2")).any().over("_gid"))
    head_of_tail = tail & (pl.int_range(pl.len()).over("_gid") == 0)
    f = f.with_columns(head_of_tail.alias("_tail_head"))
    f = f.with_columns((pl.col("_s2") | pl.col("_tail_head")).alias("_s2"))
    f = f.with_columns(pl.col("_s2").first().over("_gid").alias("_in_tb"))

    # ---- benchmark blocks
    is_title = pl.col("pattern").is_in(bench.start)
    f = f.with_columns(
        pl.col("pattern").is_in(bench.lines).fill_null(False).alias("_bflag"),
        is_title.fill_null(False).cum_sum().alias("_bgrp"),
    )
    f = f.with_columns((~pl.col("_bflag")).cum_sum().alias("_bbreak"))
    f = f.with_columns(
        pl.col("pattern").is_in(bench.end).fill_null(False).cast(pl.Int32)
        .cum_sum().over("_bgrp").alias("_bclose"))
    return f.with_columns(
        ((pl.col("_bgrp") > 0) & pl.col("_bflag")
         & (pl.col("_bbreak") == pl.col("_bbreak").first().over("_bgrp"))
         & ((pl.col("_bclose") - pl.col("pattern").is_in(bench.end).fill_null(False).cast(pl.Int32)) == 0)
         ).alias("_bmember"))


def _traceback_rows(f: pl.DataFrame) -> pl.DataFrame | None:
    tb = f.filter(pl.col("_in_tb"))
    if tb.height == 0:
        return None
    exc = pl.col("msg").str.extract(_EXC_LINE, 1)
    tb = tb.with_columns(exc.alias("_exc"))
    rows = tb.group_by("_gid", maintain_order=True).agg(
        pl.col("line_no").first().alias("line_no"),
        pl.col("line_no").last().alias("last_line"),
        pl.col("date").first(), pl.col("md").first(), pl.col("time").first(),
        pl.col("rank").first(), pl.col("tp_rank").first(), pl.col("dp_rank").first(),
        pl.col("proc").first(), pl.col("pid").first(), pl.col("level").first(),
        pl.col("msg").first().alias("head"),
        pl.col("pattern").first().alias("head_pattern"),
        pl.col("_exc").drop_nulls().last().alias("exc_type"),
        pl.col("msg").filter(pl.col("_exc").is_not_null()).last().alias("exc_msg"),
        pl.col("msg").str.join("\n").alias("traceback"),
    )
    return rows.with_columns(
        pl.coalesce(pl.col("exc_msg"), pl.col("head")).str.slice(0, 4000).alias("message"),
        pl.col("traceback").str.slice(0, 200_000),
    ).drop("_gid", "exc_msg")


def _bench_rows(f: pl.DataFrame, columns: dict[str, str]) -> pl.DataFrame | None:
    b = f.filter(pl.col("_bmember"))
    if b.height == 0:
        return None
    kv = b.select("_bgrp", "line_no", pl.col("msg").str.extract_groups(_BENCH_ROW).alias("kv")).unnest("kv")
    kv = kv.with_columns(pl.col("key").replace_strict(columns, default=None, return_dtype=pl.Utf8).alias("col"))
    heads = b.group_by("_bgrp", maintain_order=True).agg(
        pl.col("line_no").first().alias("line_no"), pl.col("line_no").last().alias("last_line"),
        pl.col("msg").str.contains("(retokenized)", literal=True).any().alias("_sgl"),
        (pl.col("msg").str.starts_with("Backend:")).any().alias("_has_backend"),
    )
    vals = kv.filter(pl.col("col").is_not_null()).group_by("_bgrp", "col").agg(pl.col("val").first())
    if vals.height:
        wide = vals.pivot(on="col", index="_bgrp", values="val")
        heads = heads.join(wide, on="_bgrp", how="left")
    out = heads.with_columns(
        pl.when(pl.col("_sgl") | pl.col("_has_backend")).then(pl.lit("sglang.bench_serving"))
        .otherwise(pl.lit("vllm bench serve")).alias("tool"))
    casts = []
    for col in set(columns.values()):
        if col in out.columns and col != "backend":
            casts.append(pl.col(col).str.replace_all(",", "").cast(pl.Float64, strict=False).alias(col))
    out = out.with_columns(casts)
    if "accept_rate_pct" in out.columns:
        out = out.with_columns((pl.col("accept_rate_pct") * 0.01).alias("accept_rate")).drop("accept_rate_pct")
    return out.drop("_bgrp", "_sgl", "_has_backend")
