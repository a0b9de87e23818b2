"""Classify lines and extract typed fields, vectorized with polars.

Contract: ``parse_frame(frame, grammars, engine)`` takes a chunk frame (``line_no``,
``raw``, ``truncated``) and returns a ``Parsed`` with the frame enriched by the peeled
header (``msg``, ``date``, ``md``, ``time``, ``level``, ``proc``, ``pid``, ``rank``,
``tp_rank``, ``dp_rank``) and by ``pattern``/``table`` (null = nothing claimed it), plus
one polars frame per target table holding the typed fields of the claimed lines.

How: one prefix regex peels the header (``str.extract_groups``), then each pattern in
priority order is tried only on still-unclaimed lines that contain its literal (a cheap
substring test) and then its anchored regex. No Python code runs per line.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..grammar import Grammar, Pattern
from .read import strip_ansi

_PREFIX_GROUPS = ["ext_ts", "date", "md", "time", "procs", "level", "file", "lineno",
                  "dp", "pp", "tp", "ep", "pp2", "gpu", "repeated", "msg"]
#: innermost "(Name pid=N[, ip=...])" tag of a stack of process tags
_INNER_PROC = r"\(([^()]*?)\s*pid=(\d+)[^()]*\)\s*$"


@dataclass
class Parsed:
    frame: pl.DataFrame
    tables: dict[str, list[pl.DataFrame]]


def patterns_for(grammars: list[Grammar] | tuple[Grammar, ...], engine: str) -> list[Pattern]:
    """Patterns that apply to a file of ``engine``: its own grammar, then common ones."""
    out: list[Pattern] = []
    for g in grammars:
        if g.engine in (engine, "common"):
            out.extend(g.patterns)
    return out


def prefix_regex(grammars, engine: str) -> str | None:
    for g in grammars:
        if g.engine == engine and g.prefix_regex:
            return g.prefix_regex
    return None


def peel(frame: pl.DataFrame, regex: str | None) -> pl.DataFrame:
    """Add header columns; a line whose header does not match keeps its text as msg."""
    clean = strip_ansi(pl.col("raw"))
    # tqdm joins updates with \r: the last segment is the one a terminal would show
    clean = clean.str.replace(r"^.*\r", "")
    frame = frame.with_columns(clean.alias("_text"))
    if regex is None:
        groups = []
    else:
        ext = frame.select(pl.col("_text").str.extract_groups(regex).alias("_h")).unnest("_h")
        groups = [g for g in ext.columns if g in _PREFIX_GROUPS]
        frame = frame.with_columns([ext[g].alias(g) for g in groups])
    for g in _PREFIX_GROUPS:
        if g not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.Utf8).alias(g))
    procs = pl.col("procs").str.strip_chars()
    tp = pl.coalesce(pl.col("tp"), procs.str.extract(r"TP(\d+)", 1),
                     procs.str.extract(r"rank=(\d+)", 1), pl.col("gpu"))
    dp = pl.coalesce(pl.col("dp"), procs.str.extract(r"DP(\d+)", 1))
    rank = pl.concat_str(
        [pl.when(pl.col(c).is_not_null()).then(pl.lit(p) + pl.col(c)).otherwise(None)
         for c, p in (("dp", "DP"), ("pp", "PP"), ("tp", "TP"), ("ep", "EP"), ("pp2", "PP"))],
        separator=" ", ignore_nulls=True,
    )
    frame = frame.with_columns(
        pl.coalesce(pl.col("msg"), pl.col("_text")).alias("msg"),
        procs.str.extract(_INNER_PROC, 1).alias("proc"),
        procs.str.extract(_INNER_PROC, 2).cast(pl.Int64, strict=False).alias("pid"),
        pl.when(rank == "").then(None).otherwise(rank).alias("rank"),
        tp.cast(pl.Int32, strict=False).alias("tp_rank"),
        dp.cast(pl.Int32, strict=False).alias("dp_rank"),
    )
    return frame.drop("_text")


def classify(frame: pl.DataFrame, patterns: list[Pattern]) -> pl.DataFrame:
    """Set ``pattern`` to the first pattern claiming each line (null when none does)."""
    n = frame.height
    msg = frame["msg"]
    claimed = pl.Series("pattern", [None] * n, dtype=pl.Utf8)
    open_rows = pl.Series("i", range(n), dtype=pl.UInt32)  # still unclaimed rows
    open_msg = msg
    open_level = frame["level"]
    literal_hits: dict[str, pl.Series] = {}
    for p in patterns:
        if open_rows.len() == 0:
            break
        if p.literal:
            hit = literal_hits.get(p.literal)
            if hit is None or hit.len() != open_msg.len():
                hit = open_msg.str.contains(p.literal, literal=True)
                literal_hits = {p.literal: hit}  # keep only the last: patterns group by literal
            if not hit.any():
                continue
            cand = hit
        else:
            cand = pl.Series([True] * open_msg.len())
        if p.anchor == "header":  # only lines that carried the engine's log header
            cand = cand & open_level.is_not_null()
        elif p.anchor == "noheader":  # e.g. benchmark rows: printed bare, never via the logger
            cand = cand & open_level.is_null()
        sub_idx = cand.arg_true()
        sub_msg = open_msg.gather(sub_idx)
        ok = sub_msg.str.contains(p.regex).fill_null(False)
        if not ok.any():
            continue
        won = sub_idx.filter(ok)
        rows = open_rows.gather(won)
        claimed = claimed.scatter(rows, p.name)
        keep = pl.Series([True] * open_rows.len()).scatter(won, False)
        open_rows = open_rows.filter(keep)
        open_msg = open_msg.filter(keep)
        open_level = open_level.filter(keep)
        literal_hits = {k: v.filter(keep) for k, v in literal_hits.items()}
    return frame.with_columns(claimed)


def _cast(expr: pl.Expr, ftype: str, scale: float | None) -> pl.Expr:
    if ftype == "int":
        out = expr.str.replace_all(",", "").cast(pl.Int64, strict=False)
    elif ftype == "thousands":
        out = expr.str.replace_all(",", "").cast(pl.Int64, strict=False)
    elif ftype == "float":
        out = expr.str.replace_all(",", "").cast(pl.Float64, strict=False)
    elif ftype == "pct":
        out = expr.str.strip_suffix("%").cast(pl.Float64, strict=False) / 100.0
    elif ftype == "bool":
        out = expr.str.to_lowercase().is_in(["true", "yes", "1"])
        return out
    elif ftype == "float_list":
        out = expr.str.split(",").list.eval(pl.element().str.strip_chars().cast(pl.Float64, strict=False))
    elif ftype == "pct_list":
        out = expr.str.split(",").list.eval(
            pl.element().str.strip_chars().str.strip_suffix("%").cast(pl.Float64, strict=False) / 100.0)
    else:
        return expr
    if scale is not None:
        out = out * scale
    return out


def extract(frame: pl.DataFrame, patterns: list[Pattern]) -> dict[str, list[pl.DataFrame]]:
    """Typed rows per target table for every claimed line (one pass per pattern)."""
    out: dict[str, list[pl.DataFrame]] = {}
    claimed = frame.filter(pl.col("pattern").is_not_null())
    if claimed.height == 0:
        return out
    by_name = {p.name: p for p in patterns}
    for (name,), sub in claimed.group_by("pattern", maintain_order=True):
        p = by_name.get(name)
        if p is None or (p.table == "lines" and not p.fields):  # fold labels, no typed row
            continue
        cols: list[pl.Expr] = []
        named = [f for f in p.fields if f.group]
        if named:
            groups = sub.select(pl.col("msg").str.extract_groups(p.regex).alias("_g")).unnest("_g")
            sub = sub.with_columns([groups[f.group].alias(f"_g_{f.name}") for f in named])
        for f in p.fields:
            src = pl.col(f"_g_{f.name}") if f.group else pl.col("msg").str.extract(f.regex, 1)
            cols.append(_cast(src, f.type, f.scale).alias(f.name))
        for k, v in p.const.items():
            cols.append(pl.lit(v).alias(k))
        base = ["line_no", "date", "md", "time", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg",
                "level"]
        rows = sub.select([pl.col(c) for c in base] + cols).with_columns(
            pl.lit(p.kind).alias("_kind"), pl.lit(p.name).alias("_pattern"))
        out.setdefault(p.table, []).append(rows)
    return out


def parse_frame(frame: pl.DataFrame, grammars, engine: str) -> Parsed:
    pats = patterns_for(grammars, engine)
    frame = peel(frame, prefix_regex(grammars, engine))
    frame = classify(frame, pats)
    mapping = {p.name: p.table for p in pats}
    frame = frame.with_columns(pl.col("pattern").replace_strict(mapping, default=None,
                                                                return_dtype=pl.Utf8).alias("table"))
    return Parsed(frame=frame, tables={})


def classify_lines(lines: list[str], grammars, engine: str) -> list[str | None]:
    """Pattern name claiming each line (used to check grammar samples)."""
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1)
    frame = frame.with_columns(pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    return parse_frame(frame, grammars, engine).frame["pattern"].to_list()
