"""Classify lines: peel the log header, find the pattern that claims each message.

Contract: ``parse_frame(frame, grammars, engine)`` takes a chunk frame (``line_no``,
``raw``, ``truncated``) and returns a ``Parsed`` with the frame enriched by the peeled
header (``msg``, ``date``, ``md``, ``time``, ``level``, ``proc``, ``pid``, ``rank``,
``tp_rank``, ``dp_rank``) and by ``pattern``/``table`` (null = nothing claimed it); with
``typed=True`` also the typed rows of the claimed lines per target table (cut by
ingest/extract.py, in the same place: parsing is where a chunk's lines are at hand).

How: one prefix regex peels the header, then each pattern in priority order is tried
only on still-unclaimed lines that contain its literal (a cheap substring test) and then
its anchored regex. No Python code runs per line.

Performance (see docs/performance.md): a regex capture engine costs ~1 us per line, a
DFA-only test (``contains``/``extract_all`` without groups) ~0.2 us. The header and the
typed fields are therefore cut by *shape*: lines are keyed by their digit-masked text, the
capture regex runs once per distinct shape (a log has a few hundred), and every line takes
the slices at its shape's spans. This is exact for regexes that treat all ASCII digits
alike (checked on the regex's parse tree, ``_digit_invariant``); other regexes, too many
shapes, or any disagreement between Python's ``re`` and polars on a shape fall back to
``str.extract_groups`` per line.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import polars as pl

from ..formats.grammar import Grammar, Pattern
from .extract import extract
from .read import strip_ansi
from .shapes import MAX_SHAPES as _MAX_SHAPES, SHAPE_MIN_ROWS as _SHAPE_MIN_ROWS, Shapes, detached as _detached, \
    digit_invariant as _digit_invariant, encode, mask_digits

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
    frame = frame.with_columns(_clean_text(frame).alias("_text"))
    return _with_header(frame, None if regex is None else _header_groups(frame, regex))


def _with_header(frame: pl.DataFrame, ext: pl.DataFrame | None) -> pl.DataFrame:
    """``frame`` (with its cleaned text as ``_text``) plus the header columns: the prefix
    regex's groups ``ext`` (one row per line; None: the engine has no prefix) and what is
    derived from them (process, pid, ranks)."""
    if ext is None:
        groups = []
    else:
        groups = [g for g in ext.columns if g in _PREFIX_GROUPS]
        frame = frame.with_columns([ext[g].alias(g) for g in groups])
    for g in _PREFIX_GROUPS:
        if g not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.Utf8).alias(g))
    # process tags take a handful of distinct values: derive from the distinct ones only
    procs_u = frame.select(pl.col("procs").unique())
    pu = pl.col("procs").str.strip_chars()
    procs_u = procs_u.with_columns(
        pu.str.extract(_INNER_PROC, 1).alias("_p_proc"),
        pu.str.extract(_INNER_PROC, 2).cast(pl.Int64, strict=False).alias("_p_pid"),
        pl.coalesce(pu.str.extract(r"TP(\d+)", 1), pu.str.extract(r"rank=(\d+)", 1)).alias("_p_tp"),
        pu.str.extract(r"DP(\d+)", 1).alias("_p_dp"),
    )
    if procs_u.height == 1:  # one value (often none at all): constants, not a join per line
        one = procs_u.row(0, named=True)
        frame = frame.with_columns([pl.lit(one[c], dtype=procs_u.schema[c]).alias(c)
                                    for c in ("_p_proc", "_p_pid", "_p_tp", "_p_dp")])
    else:
        frame = frame.join(procs_u, on="procs", how="left", nulls_equal=True, maintain_order="left")
    tp = pl.coalesce(pl.col("tp"), pl.col("_p_tp"), pl.col("gpu"))
    dp = pl.coalesce(pl.col("dp"), pl.col("_p_dp"))
    # "DP1 TP3 ..." from the rank groups a line has (a group no line has is left out of the sum)
    parts = [pl.when(pl.col(c).is_not_null()).then(pl.lit(p) + pl.col(c)).otherwise(None)
             for c, p in (("dp", "DP"), ("pp", "PP"), ("tp", "TP"), ("ep", "EP"), ("pp2", "PP"))
             if frame[c].null_count() < frame.height]
    rank = pl.concat_str(parts, separator=" ", ignore_nulls=True) if parts else pl.lit("")
    frame = frame.with_columns(
        pl.coalesce(pl.col("msg"), pl.col("_text")).alias("msg"),
        pl.col("_p_proc").alias("proc"),
        pl.col("_p_pid").alias("pid"),
        pl.when(rank == "").then(None).otherwise(rank).alias("rank"),
        tp.cast(pl.Int32, strict=False).alias("tp_rank"),
        dp.cast(pl.Int32, strict=False).alias("dp_rank"),
    )
    return frame.drop("_text", "_p_proc", "_p_pid", "_p_tp", "_p_dp")


def _clean_text(frame: pl.DataFrame) -> pl.Series:
    """Raw text without ANSI escapes; of a tqdm line joined with \\r, the last segment
    (the one a terminal shows). Rows with neither (nearly all) are not touched."""
    cleaned = _cleaned(frame)
    return frame["raw"].alias("_text") if cleaned is None else cleaned


def _cleaned(frame: pl.DataFrame) -> pl.Series | None:
    """``_clean_text``, or None when no line of the frame needs cleaning (text = raw)."""
    has = frame.select(pl.col("raw").str.contains("\x1b", literal=True).any().alias("esc"),
                       pl.col("raw").str.contains("\r", literal=True).any().alias("cr")).row(0)
    if not any(has):
        return None
    clean = pl.col("raw")
    if has[0]:
        clean = strip_ansi(clean)
    if has[1]:
        clean = clean.str.replace(r"^.*\r", "")
    return frame.select(clean.alias("_text")).to_series()


def _header_groups(frame: pl.DataFrame, regex: str) -> pl.DataFrame:
    """Capture groups of the prefix regex over ``_text`` (fast path when possible)."""
    plan = _prefix_plan(regex)
    if plan is not None:
        out = _header_groups_fast(frame, plan)
        if out is not None:
            return out
    return frame.select(pl.col("_text").str.extract_groups(regex).alias("_h")).unnest("_h")


@dataclass(frozen=True)
class _PrefixPlan:
    regex: str
    header: str  # the part before (?P<msg>, anchored at ^
    header_nocap: str  # the same without capture groups (DFA-only search)
    groups: tuple[str, ...]  # capture names of the header, in order
    tail: str  # (?P<msg>...)...$
    suffix: str | None  # optional trailing group of the tail, e.g. " [repeated Nx ...]"
    all_groups: tuple[str, ...]  # capture names of the whole regex, in order


_MSG_LAZY = "(?P<msg>.*?)"


@functools.lru_cache(maxsize=16)
def _prefix_plan(regex: str) -> _PrefixPlan | None:
    """Decide whether the prefix regex can take the fast path (see _header_groups_fast).

    Conditions: ``^HEADER(?P<msg>.*?)(?:SUFFIX)?$`` or ``^HEADER(?P<msg>.*)$`` (so the tail
    matches any rest and the header match of the whole regex is the leftmost-first match
    of HEADER alone); HEADER treats all ASCII digits alike (no literal digit, no class
    holding only some digits), has no end/word-boundary assertion, look-around or
    back-reference (so its match and group spans on a line equal those on the digit-masked
    header text)."""
    i = regex.find("(?P<msg>")
    if i <= 1 or not regex.startswith("^"):
        return None
    header, tail = regex[:i], regex[i:]
    if tail in ("(?P<msg>.*?)$", "(?P<msg>.*)$"):
        suffix = None
    elif tail.startswith(_MSG_LAZY + "(?:") and tail.endswith(")?$"):
        suffix = tail[len(_MSG_LAZY):-2]
        try:
            re.compile(suffix)
        except re.error:
            return None
    else:
        return None
    try:
        py = re.compile(header)
        full = re.compile(regex)
    except re.error:
        return None
    if not _digit_invariant(header):
        return None
    nocap = re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", header)
    groups = tuple(sorted(py.groupindex, key=py.groupindex.get))
    all_groups = tuple(sorted(full.groupindex, key=full.groupindex.get))
    return _PrefixPlan(regex, header, nocap, groups, tail, suffix, all_groups)




def _header_groups_fast(frame: pl.DataFrame, plan: _PrefixPlan) -> pl.DataFrame | None:  # long: the three steps of the docstring, each checked against the slow path
    """Prefix groups without running a capture engine per line.

    1. The header of each line is found with a DFA-only search of the header regex stripped
       of its groups (``extract_all``): its extent equals that of the full regex's header
       groups (see _prefix_plan).
    2. Headers are keyed by their digit-masked text ("shape"); a log has a few hundred
       shapes. The header regex runs once per shape (Python ``re`` for the spans, checked
       against polars' own captures on the same text); each line's groups are then slices
       of its text at its shape's spans.
    3. The tail (msg and an optional suffix such as ``[repeated 7x across cluster]``) is
       the rest of the line, except on lines that end with the suffix (a DFA test), where
       the tail regex runs.
    Returns None to request the slow path (too many shapes, or the engines disagree)."""
    n = frame.height
    text = frame["_text"]
    hdr = text.str.extract_all(plan.header_nocap).list.first()
    hlen = hdr.str.len_chars()
    # mask only the header part (bytes to convert and mask: ~1/5 of the text)
    keys = pl.DataFrame({"_k": mask_digits(text.str.slice(0, hlen))})
    uniq = keys["_k"].unique(maintain_order=True).drop_nulls()
    if uniq.len() > _MAX_SHAPES:
        return None
    shape = _header_spans(uniq, plan)
    if shape is None:
        return None
    cols = pl.DataFrame({"_text": text, "_hl": hlen, "_k": keys["_k"]}).join(
        shape, on="_k", how="left", maintain_order="left")
    # a group no shape of this chunk has (e.g. Ray process tags in a plain SGLang log) is a
    # null column, not a slice per line
    out = cols.select(
        [(pl.col("_text").str.slice(pl.col(f"_s_{g}"), pl.col(f"_l_{g}"))
          if shape[f"_s_{g}"].is_not_null().any() else pl.lit(None, dtype=pl.Utf8)).alias(g)
         for g in plan.groups]
        + [pl.col("_text").str.slice(pl.col("_hl")).alias("msg")])
    for g in plan.all_groups:
        if g not in out.columns:
            out = out.with_columns(pl.lit(None, dtype=pl.Utf8).alias(g))
    if plan.suffix is not None:
        need = out.select(pl.col("msg").str.contains(plan.suffix + "$").fill_null(False)).to_series()
        if need.any():
            idx = need.arg_true()
            sub = out["msg"].gather(idx).str.extract_groups("^" + plan.tail).struct.unnest()
            tail_groups = [g for g in sub.columns if g in out.columns]
            out = out.with_columns([out[g].scatter(idx, sub[g]) for g in tail_groups])
    assert out.height == n
    return out.select(list(plan.all_groups))


def _header_spans(uniq: pl.Series, plan: _PrefixPlan) -> pl.DataFrame | None:
    """Start and length of each header group on every distinct digit-masked header text
    (``uniq``, column ``_k``): Python ``re`` gives the spans, checked against polars' own
    captures on the same text. None when the two disagree or a header match does not cover
    its whole key."""
    py = re.compile(plan.header)
    check = uniq.str.extract_groups(plan.header).struct.unnest()
    spans: dict[str, list] = {g: [] for g in plan.groups}
    for j, k in enumerate(uniq.to_list()):
        m = py.match(k)
        if m is None or m.end() != len(k):
            return None
        for g in plan.groups:
            a, b = m.span(g)
            if a < 0:
                if check[g][j] is not None:
                    return None
                spans[g].append((None, None))
            else:
                if check[g][j] != k[a:b]:
                    return None
                spans[g].append((a, b - a))
    return pl.DataFrame(
        {"_k": _detached(uniq), **{f"_s_{g}": pl.Series([v[0] for v in spans[g]], dtype=pl.Int64) for g in plan.groups},
         **{f"_l_{g}": pl.Series([v[1] for v in spans[g]], dtype=pl.Int64) for g in plan.groups}})


class ShapeCache:
    """Pattern claimed per shape, kept across the chunks of one file: a server log repeats
    the same few hundred shapes for hours, so after the first chunk nearly every shape is
    known and only new ones are classified. Bounded: cleared past ``limit`` shapes. Also
    keeps the field spans per shape that extraction found (``spans``)."""

    def __init__(self, limit: int = 50_000):
        self.limit = limit
        self.frame: pl.DataFrame | None = None  # _shape, _nolevel, pattern, _amb
        # line shapes per line in the last chunk parsed by shape, and chunks parsed since:
        # see shape_path_expected
        self.shape_share: float = 0.0
        self.chunks_since_probe = 0
        self.spans: dict = {}  # field spans per pattern and shape (ingest/extract.py)

    def split(self, uniq: pl.DataFrame) -> tuple[pl.DataFrame | None, pl.DataFrame]:
        """(known shapes with their pattern, unknown shapes)."""
        if self.frame is None:
            return None, uniq
        # one join: every cached row has a non-null _amb, so a null one marks an unknown shape
        joined = uniq.join(self.frame, on=["_shape", "_nolevel"], how="left", nulls_equal=True)
        found = joined["_amb"].is_not_null()
        return joined.filter(found), joined.filter(~found).select(uniq.columns)

    def add(self, table: pl.DataFrame, counts: pl.Series | None = None) -> None:
        if counts is not None and table.height > 1000:
            # a shape seen once or twice in a chunk of a busy log is mostly an id (request
            # hashes): keeping it would only grow the cache (and memory) and slow every lookup
            table = table.filter(counts > 2)
        table = table.with_columns(_detached(table["_shape"]))
        if self.frame is None or self.frame.height + table.height > self.limit:
            self.frame = table
        else:
            self.frame = pl.concat([self.frame, table], how="vertical_relaxed")


def classify(frame: pl.DataFrame, patterns: list[Pattern], cache: ShapeCache | None = None) -> pl.DataFrame:
    """Set ``pattern`` to the first pattern claiming each line (null when none does).

    Patterns are tried in priority order, each only on still-unclaimed lines that contain
    its literal, then its regex.

    Lines are classified by *shape* (digit-masked message plus whether it carried a log
    header): a 100k-line chunk of a busy server has a few thousand shapes, and a polars call
    costs ~50 us of overhead plus ~0.2-1 us per row, so testing 150-250 patterns on the
    shapes instead of the lines is ~10-50x cheaper. Exact because every pattern whose regex
    treats all digits alike (``_digit_invariant``) gives the same answer on a line and on
    its masked text; lines whose shape contains the (masked) literal of a pattern that is not
    digit invariant are classified one by one. The masked message is kept as ``_shape`` for
    the field extraction (see ``extract``).

    Measured alternatives that did *not* pay on decode-heavy logs (2 cores): routing every
    line with Aho-Corasick (``extract_many`` + explode; recursive ``contains_any``
    halving), one polars call testing all patterns of a block at once, and pre-claiming the
    hot patterns' lines with an exactness check."""
    masked = mask_digits(frame["msg"]).alias("_shape")
    frame = frame.with_columns(masked)
    plan = _shape_plan(tuple((p.regex, p.literal) for p in patterns))
    n = frame.height
    # a small frame takes the shape path only to use (and fill) the cache, which the files of a
    # process share (ingest/pipeline.py shape_cache): a folder of small logs repeats its shapes
    shared = cache is not None and n < _SHAPE_MIN_ROWS
    if plan is None or (n < _SHAPE_MIN_ROWS and not shared):
        return frame.with_columns(_classify_iter(frame, patterns, frame["msg"], frame["level"]).alias("pattern"))
    keys = frame.select(pl.col("_shape"), pl.col("level").is_null().alias("_nolevel"))
    uniq = keys.group_by("_shape", "_nolevel").len("_n")
    if uniq.height > n * _SHAPE_MAX_SHARE and not shared:  # little repetition: shapes would not save work
        return frame.with_columns(_classify_iter(frame, patterns, frame["msg"], frame["level"]).alias("pattern"))
    table = _pattern_table(uniq, patterns, plan, cache or ShapeCache())
    out = keys.join(table, on=["_shape", "_nolevel"], how="left", nulls_equal=True, maintain_order="left")
    return frame.with_columns(_line_by_line_where_ambiguous(frame, patterns, out["pattern"], out["_amb"])
                              .alias("pattern"))


def _pattern_table(uniq: pl.DataFrame, patterns: list[Pattern], plan: tuple[str, ...],
                   cache: ShapeCache) -> pl.DataFrame:
    """The pattern claiming each distinct (message shape, no-level) pair of ``uniq`` (columns
    ``_shape``, ``_nolevel``, ``_n`` = lines of the chunk with it): ``pattern`` (null: none)
    and ``_amb`` (the shape holds the literal of a pattern that is not digit invariant: its
    lines must be classified one by one). Shapes the cache knows are not classified again."""
    known, new = cache.split(uniq)
    if new.height:
        ambiguous = (new["_shape"].str.contains_any(list(plan)).fill_null(False)
                     if plan else pl.Series([False] * new.height))
        level_proxy = pl.Series("level", [None] * new.height, dtype=pl.Utf8).scatter(
            (~new["_nolevel"]).arg_true(), "L")
        by_shape = _classify_iter(new, patterns, new["_shape"], level_proxy, masked=True)
        new = new.with_columns(by_shape.alias("pattern"), ambiguous.alias("_amb"))
        cache.add(new.drop("_n"), new["_n"])
        new = new.drop("_n")
    if known is not None:
        known = known.drop("_n")
    if known is None:
        return new
    if new.height == 0:
        return known
    return pl.concat([known, new], how="vertical_relaxed")


def _line_by_line_where_ambiguous(frame: pl.DataFrame, patterns: list[Pattern], claimed: pl.Series,
                                  amb: pl.Series) -> pl.Series:
    """``claimed`` (the pattern of each line's shape) with the lines whose shape is ambiguous
    (or unknown: null ``amb``) classified one by one on their own text."""
    amb = amb.fill_null(True)
    if amb.any():
        idx = amb.arg_true()
        sub = frame[idx]
        claimed = claimed.scatter(idx, _classify_iter(sub, patterns, sub["msg"], sub["level"]))
    return claimed


@functools.lru_cache(maxsize=8)
def _shape_plan(patterns: tuple[tuple[str, str], ...]) -> tuple[str, ...] | None:
    """Masked literals of the (regex, literal) pairs whose regex is not digit invariant (a
    shape holding one is classified line by line), or None when such a pattern has no
    usable literal."""
    lits = []
    for regex, literal in patterns:
        if _digit_invariant(regex, ends=True):
            continue
        lit = literal.translate(_DIGIT_TO_ZERO) if literal else ""
        if len(lit.strip()) < 2:
            return None
        lits.append(lit)
    return tuple(dict.fromkeys(lits))


#: classify by shape only when shapes are at most this share of the lines (even at 0.9 the
#: shape path costs less: the repeated shapes, e.g. access lines, are classified once, and
#: the mask/unique/join overhead is ~10% of trying the patterns on the other lines)
_SHAPE_MAX_SHARE = 0.9
_DIGIT_TO_ZERO = str.maketrans("123456789", "000000000")
#: frames up to this many rows test pattern literals in Python (see _classify_iter)
_FEW_ROWS = 64


def _classify_iter(frame: pl.DataFrame, patterns: list[Pattern], msg: pl.Series, level: pl.Series,
                   masked: bool = False) -> pl.Series:
    """First claiming pattern per row of ``msg`` (``masked``: ``msg`` holds digit-masked
    shapes, so literals are masked the same way)."""
    n = frame.height
    claimed = pl.Series("pattern", [None] * n, dtype=pl.Utf8)
    open_rows = pl.Series("i", range(n), dtype=pl.UInt32)  # still unclaimed rows
    open_msg = msg
    open_level = level
    literal_hits: dict[str, pl.Series] = {}
    # a few rows (a launch marker, a two-line file, a watch batch): the literal test runs in
    # Python, so a pattern whose literal no row holds costs ~1 us instead of a polars call
    # (~0.3 ms; 250 patterns made a 2-line parse take 80 ms)
    few = msg.to_list() if n <= _FEW_ROWS else None
    for p in patterns:
        if open_rows.len() == 0:
            break
        lit = p.literal.translate(_DIGIT_TO_ZERO) if masked and p.literal else p.literal
        if lit and few is not None and not any(m is not None and lit in m for m in few):
            continue  # no row holds it (rows only leave the open set, so none of the open ones)
        if lit:
            hit = literal_hits.get(lit)
            if hit is None or hit.len() != open_msg.len():
                hit = open_msg.str.contains(lit, literal=True)
                literal_hits = {lit: hit}  # keep only the last: patterns group by literal
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
    return claimed


def _parse_by_shape(frame: pl.DataFrame, regex: str | None, patterns: list[Pattern],
                    cache: ShapeCache | None, shapes: Shapes | None = None) -> tuple[pl.DataFrame, pl.Series] | None:
    """``classify(peel(frame, regex), patterns, cache)``, computed once per line *shape*.

    Each line's cleaned text is digit-masked and encoded once (``shapes.encode``); what is
    the same for every line of a shape is decided on the distinct shapes (``_shape_table``:
    header and message extent, group spans, message shape; then the pattern of each message
    shape, through the file's ``ShapeCache``). Lines then take their shape's spans, pattern
    and message shape by index: no regex runs per line except on the few lines whose shape
    holds the literal of a pattern that is not digit invariant. Exact for the same reason as
    ``_header_groups_fast`` and ``classify``. Returns the frame and the message shapes: the
    frame's ``_sid`` is each line's index into them (``classify`` gives the message shape
    itself, ``_shape``). ``shapes``: the encoding of the frame's raw
    lines if the caller has it (made before redaction, see redact.redact_shaped); used when
    the cleaned text is the raw text. None: the caller takes the separate steps (no prefix
    plan, a small frame, or the engines disagree on a span)."""
    plan = _prefix_plan(regex) if regex else None
    literals = _shape_plan(tuple((p.regex, p.literal) for p in patterns))
    if plan is None or literals is None or not _shape_path_taken(cache, frame.height):
        return None
    cleaned = _cleaned(frame)
    frame = frame.with_columns((frame["raw"] if cleaned is None else cleaned).alias("_text"))
    sh = shapes if shapes is not None and cleaned is None and shapes.ids.len() == frame.height \
        else encode(frame["_text"])
    if sh is None:
        return None
    if cache is not None:
        cache.shape_share = sh.shapes.len() / frame.height
    table = _shape_table(sh.shapes, plan)
    if table is None:
        return None
    st, present = table
    # the header groups and the message of every line: slices of its text at its shape's spans
    # (a group no shape has, e.g. Ray process tags in a plain SGLang log, is a null column)
    cols = {"_text": frame["_text"], "_hl": sh.take(st["_hl"]), "_ml": sh.take(st["_ml"])}
    for g in present:
        cols[f"_s_{g}"], cols[f"_l_{g}"] = sh.take(st[f"_s_{g}"]), sh.take(st[f"_l_{g}"])
    ext = pl.DataFrame(cols).select(
        [(pl.col("_text").str.slice(pl.col(f"_s_{g}"), pl.col(f"_l_{g}")) if g in present
          else pl.lit(None, dtype=pl.Utf8)).alias(g) for g in plan.all_groups if g != "msg"]
        + [pl.col("_text").str.slice(pl.col("_hl"), pl.col("_ml")).alias("msg")]
    ).select(list(plan.all_groups))
    frame = _with_header(frame, ext)
    # the pattern of each message shape, then of each line
    counts = pl.Series("_n", _bincount(sh.ids, st.height), dtype=pl.UInt32)
    uniq = st.select("_shape", "_nolevel", counts).group_by("_shape", "_nolevel").agg(pl.col("_n").sum())
    claims = _pattern_table(uniq, patterns, literals, cache or ShapeCache())
    st = st.select("_shape", "_nolevel").join(claims, on=["_shape", "_nolevel"], how="left", nulls_equal=True,
                                               maintain_order="left")
    claimed = _line_by_line_where_ambiguous(frame, patterns, sh.take(st["pattern"]), sh.take(st["_amb"]))
    return frame.with_columns(sh.ids.alias("_sid"), claimed.alias("pattern")), st["_shape"]


def _shape_table(keys: pl.Series, plan: _PrefixPlan) -> tuple[pl.DataFrame, list[str]] | None:
    """Per distinct line shape (``keys``, digit-masked lines): the header length ``_hl``, the
    start ``_s_g`` and length ``_l_g`` of every prefix group ``g`` (header groups and suffix
    groups), the message length ``_ml`` (null: to the end), the message shape ``_shape`` and
    ``_nolevel``; plus the groups some shape has. The header extent is a DFA-only search, the
    spans come from the Python regex per distinct masked header (``_header_spans``) and per
    suffixed message (``_cut_suffix``). None: the two regex engines disagree."""
    hl = keys.str.extract_all(plan.header_nocap).list.first().str.len_chars()
    if hl.null_count():
        return None
    st = pl.DataFrame({"_k": keys, "_h": keys.str.slice(0, hl), "_hl": hl.cast(pl.Int64)})
    spans = _header_spans(st["_h"].unique(maintain_order=True), plan)
    if spans is None:
        return None
    st = st.join(spans.rename({"_k": "_h"}), on="_h", how="left", maintain_order="left")
    tail_groups = [g for g in plan.all_groups if g not in plan.groups and g != "msg"]
    st = st.with_columns([pl.lit(None, dtype=pl.Int64).alias(c) for c in
                          ["_ml"] + [f"_{x}_{g}" for g in tail_groups for x in "sl"]])
    if plan.suffix is not None:
        st = _cut_suffix(st, plan, tail_groups)
        if st is None:
            return None
    st = st.with_columns(pl.col("_k").str.slice(pl.col("_hl"), pl.col("_ml")).alias("_shape"),
                         pl.col("_s_level").is_null().alias("_nolevel") if "_s_level" in st.columns
                         else pl.lit(True).alias("_nolevel"))
    present = [g for g in plan.groups + tuple(tail_groups) if st[f"_s_{g}"].is_not_null().any()]
    return st, present


#: above this share of distinct line shapes per line, parsing by shape costs more than the
#: separate steps (measured: vLLM request lines with unique hex ids, ~0.5 shapes per line,
#: 356 vs 328 ms per 100k lines; a decode-heavy SGLang log, 0.01, 208 vs 324 ms)
_SHAPE_PATH_MAX_SHARE = 0.3
#: a file whose chunks took the separate steps tries the shape path again after this many
_SHAPE_REPROBE = 8


def shape_path_expected(cache: ShapeCache | None, n_lines: int) -> bool:
    """Whether the next chunk of a file (``n_lines`` lines, parsed with ``cache``) goes by
    shape: it is not small, and its file's last chunk had few enough distinct shapes or it is
    time to probe again. No side effect (callers use it to decide whether to encode a chunk
    ahead, for redaction)."""
    if n_lines < _SHAPE_MIN_ROWS:
        return False
    return cache is None or cache.shape_share <= _SHAPE_PATH_MAX_SHARE \
        or cache.chunks_since_probe + 1 >= _SHAPE_REPROBE


def _shape_path_taken(cache: ShapeCache | None, n_lines: int) -> bool:
    """``shape_path_expected``, counting the chunks a file with many shapes skips the path."""
    taken = shape_path_expected(cache, n_lines)
    if cache is not None and n_lines >= _SHAPE_MIN_ROWS and cache.shape_share > _SHAPE_PATH_MAX_SHARE:
        cache.chunks_since_probe = 0 if taken else cache.chunks_since_probe + 1
    return taken


def _bincount(ids: pl.Series, n: int):
    import numpy as np

    return np.bincount(ids.to_numpy(), minlength=n)


def _cut_suffix(st: pl.DataFrame, plan: _PrefixPlan, tail_groups: list[str]) -> pl.DataFrame | None:
    """On the shapes whose message ends with the prefix regex's optional suffix, the message
    length (``_ml``) and the suffix groups' spans (from the line start), by the Python
    regex on the masked message, checked against polars; None if they disagree."""
    msg = st["_k"].str.slice(st["_hl"])
    need = msg.str.contains(plan.suffix + "$").fill_null(False)
    if not need.any():
        return st
    idx = need.arg_true()
    sub = msg.gather(idx)
    rx = "^" + plan.tail
    py = re.compile(rx)
    check = sub.str.extract_groups(rx).struct.unnest()
    hl = st["_hl"].gather(idx).to_list()
    out: dict[str, list] = {c: [] for c in ["_ml"] + [f"_{x}_{g}" for g in tail_groups for x in "sl"]}
    for j, text in enumerate(sub.to_list()):
        m = py.match(text)
        if m is None or check["msg"][j] != m["msg"]:
            return None
        out["_ml"].append(m.end("msg"))
        for g in tail_groups:
            a, b = m.span(g)
            if (check[g][j] if g in check.columns else None) != (m[g] if a >= 0 else None):
                return None
            out[f"_s_{g}"].append(hl[j] + a if a >= 0 else None)
            out[f"_l_{g}"].append(b - a if a >= 0 else None)
    return st.with_columns([st[c].scatter(idx, pl.Series(v, dtype=pl.Int64)) for c, v in out.items()])


def parse_frame(frame: pl.DataFrame, grammars, engine: str, cache: ShapeCache | None = None,
                shapes: Shapes | None = None, typed: bool = False) -> Parsed:
    """Header columns, ``pattern`` and ``table`` of every line of ``frame`` (``shapes``: the
    encoding of its raw lines, when the caller made one); with ``typed``, the typed rows of
    the claimed lines too (``Parsed.tables``, see ingest/extract.py; field spans are kept in
    ``cache``)."""
    pats = patterns_for(grammars, engine)
    regex = prefix_regex(grammars, engine)
    by_shape = _parse_by_shape(frame, regex, pats, cache, shapes)
    keys = None
    if by_shape is not None:
        frame, keys = by_shape
    else:
        frame = classify(peel(frame, regex), pats, cache)
    mapping = {p.name: p.table for p in pats}
    frame = frame.with_columns(pl.col("pattern").replace_strict(mapping, default=None,
                                                                return_dtype=pl.Utf8).alias("table"))
    if not typed:  # the caller extracts later, from each line's message shape
        if keys is not None:
            frame = frame.with_columns(keys.gather(frame["_sid"]).alias("_sid")).rename({"_sid": "_shape"})
        return Parsed(frame=frame, tables={})
    tables = extract(frame, pats, cache.spans if cache is not None else None, keys)
    # the shapes served parsing and extraction; the fold and the store do not read them
    return Parsed(frame=frame.drop("_shape", "_sid", strict=False), tables=tables)


def classify_lines(lines: list[str], grammars, engine: str) -> list[str | None]:
    """Pattern name claiming each line (used to check grammar samples)."""
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1)
    frame = frame.with_columns(pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    return parse_frame(frame, grammars, engine).frame["pattern"].to_list()
