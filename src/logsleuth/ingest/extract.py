"""Typed rows of claimed lines: each pattern's fields, cut from the message and cast.

Contract:
* ``extract(frame, patterns, spans)`` returns, per target table, one frame per pattern that
  claimed lines of ``frame`` (a parsed frame: ``pattern``, ``msg`` and the header columns),
  in the order the patterns first claim a line: the header columns, the pattern's typed
  fields and constants, ``_kind`` and ``_pattern``; ``ts`` and ``run_id`` too when
  ``frame`` has them. Fold labels and patterns of the ``lines`` table without fields give
  no rows. ``spans`` keeps the field spans per line shape across calls (one dict per file
  or process).
* ``TypedRows`` holds the rows parsing extracted until the fold has decided the claims of
  their lines and the lines are stamped; ``take_through(line_no)`` hands them on.
* ``with_line_context(parts, lines)`` keeps the rows of the lines a pattern still claims
  after the fold and gives them the ``ts`` and ``run_id`` of their line.

Why here and not in the writer: extraction is line-local like classification, so it runs
where a chunk is parsed (a worker process when there are cores to spare). The fold only
ever takes a claim back (a line inside a traceback becomes ``traceback``; a stray
benchmark line loses its claim) and never gives a line a pattern with fields, so the rows
extracted before it are exactly the rows of the folded lines whose pattern did not change.

How: fields are cut by line *shape* where the regex allows it (see ``_shape_extract``),
else by ``str.extract_groups`` per line; no Python code runs per line.
"""
from __future__ import annotations

import functools
import re

import polars as pl

from ..formats.grammar import Pattern
from .shapes import MAX_SHAPES, SHAPE_MIN_ROWS, detached, digit_invariant, mask_digits


def _cast(expr: pl.Expr, ftype: str, scale: float | None, commas: bool = True) -> pl.Expr:
    """The typed value of a captured text (``commas``: it may hold thousands separators)."""
    plain = expr.str.replace_all(",", "", literal=True) if commas else expr
    if ftype in ("int", "thousands"):
        out = plain.cast(pl.Int64, strict=False)
    elif ftype == "float":
        out = plain.cast(pl.Float64, strict=False)
    elif ftype == "pct":
        # times 0.01, not / 100: polars divides a one-row column exactly but a longer one by
        # multiplying with the reciprocal, so a value depended on how many rows its chunk had
        out = expr.str.strip_suffix("%").cast(pl.Float64, strict=False) * 0.01
    elif ftype == "bool":
        out = expr.str.to_lowercase().is_in(["true", "yes", "1"])
        return out
    elif ftype == "float_list":
        out = expr.str.split(",").list.eval(pl.element().str.strip_chars().cast(pl.Float64, strict=False))
    elif ftype == "pct_list":
        out = expr.str.split(",").list.eval(
            pl.element().str.strip_chars().str.strip_suffix("%").cast(pl.Float64, strict=False) * 0.01)
    else:
        return expr
    if scale is not None:
        out = out * scale
    if ftype in ("float", "pct"):  # 1e309, 400 nines: not a measurement
        out = pl.when(out.cast(pl.Float64).is_finite()).then(out).otherwise(None)
    return out


def extract(frame: pl.DataFrame, patterns: list[Pattern], spans: dict | None = None,
            keys: pl.Series | None = None) -> dict[str, list[pl.DataFrame]]:
    """Typed rows per target table for every claimed line (one pass per pattern).

    ``spans``: a dict kept across the chunks of one file, holding per pattern the field
    spans of every shape seen so far (see ``_shape_extract``). The masked message of a line
    is taken from parsing when the frame has it: ``keys`` (message shapes) with the frame's
    ``_sid`` (each line's index into them; parsing by shape), or ``_shape`` (``classify``)."""
    out: dict[str, list[pl.DataFrame]] = {}
    # only the columns extraction reads: splitting by pattern copies every column it carries
    need = [c for c in _EXTRACT_COLUMNS if c in frame.columns]
    claimed = frame.select(need).filter(pl.col("pattern").is_not_null())
    if claimed.height == 0:
        return out
    by_name = {p.name: p for p in patterns}
    for (name,), sub in claimed.group_by("pattern", maintain_order=True):
        p = by_name.get(name)
        if p is None or (p.table == "lines" and not p.fields):  # fold labels, no typed row
            continue
        cols: list[pl.Expr] = []
        named = [f for f in p.fields if f.group]
        own = [f for f in p.fields if not f.group]
        fast = None
        commas: dict[str, bool] = {}  # (shape path) output name -> some value holds a ','
        if sub.height >= SHAPE_MIN_ROWS and p.fields:
            specs = [(f"_g_{f.name}", p.regex, f.group) for f in named] + [(f"_g_{f.name}", f.regex, 1) for f in own]
            if keys is not None and "_sid" in sub.columns:
                fast = _shape_extract(sub["msg"], specs, None, spans, commas, (sub["_sid"], keys))
            else:
                fast = _shape_extract(sub["msg"], specs, sub["_shape"] if "_shape" in sub.columns else None,
                                      spans, commas)
        if fast is not None:
            sub = sub.with_columns(fast)
        else:
            if named:
                groups = sub.select(pl.col("msg").str.extract_groups(p.regex).alias("_g")).unnest("_g")
                sub = sub.with_columns([groups[f.group].alias(f"_g_{f.name}") for f in named])
            if own:
                sub = sub.with_columns([pl.col("msg").str.extract(f.regex, 1).alias(f"_g_{f.name}") for f in own])
        for f in p.fields:
            cols.append(_cast(pl.col(f"_g_{f.name}"), f.type, f.scale, commas.get(f"_g_{f.name}", True))
                        .alias(f.name))
        for k, v in p.const.items():
            cols.append(pl.lit(v).alias(k))
        base = ["line_no", "date", "md", "time", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg",
                "level"] + [c for c in ("ts", "run_id") if c in sub.columns]
        rows = sub.select([pl.col(c) for c in base] + cols).with_columns(
            pl.lit(p.kind).alias("_kind"), pl.lit(p.name).alias("_pattern"))
        out.setdefault(p.table, []).append(rows)
    return out


_EXTRACT_COLUMNS = ["pattern", "line_no", "date", "md", "time", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg",
                    "level", "_shape", "_sid", "ts", "run_id"]


@functools.lru_cache(maxsize=1024)
def _py_regex(rx: str):
    """Python compile of a grammar regex usable for the shape fast path, else None."""
    if not digit_invariant(rx):
        return None
    try:
        return re.compile(rx)
    except re.error:
        return None


def _shape_extract(msg: pl.Series, specs: list[tuple[str, str, str | int]], masked: pl.Series | None = None,
                   cache: dict | None = None, commas: dict | None = None,
                   indexed: tuple[pl.Series, pl.Series] | None = None) -> list[pl.Series] | None:
    """Capture groups of several regexes over ``msg`` without a capture engine per line.

    ``specs``: (output name, regex, group name or 1). Lines are keyed by their digit-masked
    text (``masked``, computed here when not given); each regex runs once per distinct key
    (Python ``re`` for spans, checked against polars' captures on the same keys) and every
    line takes the slices of its key's spans. Sound because each regex treats all ASCII
    digits alike (``shapes.digit_invariant``), so its match structure on a line equals that on the
    masked line. ``cache`` keeps the span table of each ``specs`` across calls, so a shape
    seen in an earlier chunk costs nothing. ``commas`` (a dict) is filled with, per output
    name, whether any shape's capture holds a ',' (a digit-masked shape shows every comma, so
    a False spares the thousands-separator removal on every line). ``indexed``: (ids, keys),
    each line's index into a series of masked keys, instead of ``masked``: lines then take
    their spans by index (no hashing of text per line). None = use the slow path (a regex
    not eligible, too many distinct keys, or the two engines disagree)."""
    regexes = {rx for _, rx, _ in specs}
    py = {rx: _py_regex(rx) for rx in regexes}
    if any(v is None for v in py.values()):
        return None
    if indexed is not None:
        ids = indexed[0].unique()
        per_id = pl.DataFrame({"_i": ids, "_k": indexed[1].gather(ids)})
        uniq = per_id["_k"].unique().drop_nulls()
    else:
        if masked is None:
            masked = mask_digits(msg)
        uniq = masked.unique().drop_nulls()
    if uniq.len() > MAX_SHAPES or uniq.len() * 4 > msg.len():
        return None
    key = tuple(specs)
    known = cache.get(key) if cache is not None else None
    if known is not None:
        uniq = uniq.filter(~uniq.is_in(known["_k"].implode()))
    shape = _span_table(uniq, specs, py) if uniq.len() else None
    if shape is None and uniq.len():
        return None
    if known is not None:
        shape = known if shape is None else pl.concat([known, shape], how="vertical_relaxed")
    if cache is not None:
        cache[key] = shape if shape.height <= MAX_SHAPES else None
    if commas is not None:
        commas.update(shape.select([pl.col("_k").str.slice(pl.col(f"_s{n}"), pl.col(f"_l{n}"))
                                    .str.contains(",", literal=True).any().alias(n) for n, _, _ in specs]).row(0, named=True))
    if indexed is not None:
        # per key index: its spans (a small join), then per line a gather by index
        by_index = (pl.DataFrame({"_i": pl.int_range(indexed[1].len(), dtype=pl.UInt32, eager=True)})
                    .join(per_id.join(shape, on="_k", how="left"), on="_i", how="left", maintain_order="left"))
        cols = by_index.drop("_i", "_k")[indexed[0]].with_columns(msg.alias("_m"))
    else:
        cols = pl.DataFrame({"_m": msg, "_k": masked}).join(shape, on="_k", how="left", maintain_order="left")
    out = cols.select([pl.col("_m").str.slice(pl.col(f"_s{n}"), pl.col(f"_l{n}")).alias(n) for n, _, _ in specs])
    return [out[n] for n, _, _ in specs]


def _span_table(uniq: pl.Series, specs, py) -> pl.DataFrame | None:
    """Start and length of every spec's capture on each masked key (None: engines disagree)."""
    regexes = list(py)
    keys = uniq.to_list()
    check: dict[str, pl.DataFrame] = {}
    for rx in regexes:
        groups = [g for _, r, g in specs if r == rx]
        if all(isinstance(g, str) for g in groups):
            check[rx] = uniq.str.extract_groups(rx).struct.unnest()
        else:
            check[rx] = pl.DataFrame({"1": uniq.str.extract(rx, 1)})
    starts: dict[str, list] = {name: [] for name, _, _ in specs}
    lens: dict[str, list] = {name: [] for name, _, _ in specs}
    for j, k in enumerate(keys):
        ms = {rx: py[rx].search(k) for rx in regexes}
        for name, rx, g in specs:
            m = ms[rx]
            want = check[rx][g if isinstance(g, str) else "1"][j]
            if m is None or m.span(g)[0] < 0:
                if want is not None:
                    return None
                starts[name].append(None)
                lens[name].append(None)
                continue
            a, b = m.span(g)
            if want != k[a:b]:
                return None
            starts[name].append(a)
            lens[name].append(b - a)
    return pl.DataFrame({"_k": detached(uniq), **{f"_s{n}": pl.Series(v, dtype=pl.Int64) for n, v in starts.items()},
                         **{f"_l{n}": pl.Series(v, dtype=pl.Int64) for n, v in lens.items()}})


class TypedRows:
    """The typed rows of parsed lines not stored yet, per pattern, in line order.

    Lines reach the writer later than they are parsed: the fold carries a chunk's open
    record (its last lines) to the next chunk, and a carried line may be parsed again (a
    later launch of another engine moved the engine switch over it). ``add`` appends the rows
    of newly parsed lines, ``drop_from(line_no)`` forgets the rows from a line on (before its
    lines are added again), ``take_through(line_no)`` returns and forgets the rows up to a
    line, as ``extract`` would give them for those lines. Line numbers grow with each
    ``add`` (one source, read in order)."""

    def __init__(self):
        self.parts: dict[str, tuple[str, list[pl.DataFrame]]] = {}  # pattern -> (table, frames)

    def add(self, tables: dict[str, list[pl.DataFrame]]) -> None:
        for table, frames in tables.items():
            for frame in frames:
                if frame.height:
                    name = frame["_pattern"][0]
                    self.parts.setdefault(name, (table, []))[1].append(frame)

    def drop_from(self, line_no: int) -> None:
        for name, (table, frames) in list(self.parts.items()):
            kept = [f.head(int(f["line_no"].search_sorted(line_no, side="left"))) for f in frames]
            self.parts[name] = (table, [f for f in kept if f.height])

    def take_through(self, line_no: int) -> dict[str, list[pl.DataFrame]]:
        taken: list[tuple[int, str, pl.DataFrame]] = []
        for name, (table, frames) in list(self.parts.items()):
            head, rest = [], []
            for f in frames:
                cut = int(f["line_no"].search_sorted(line_no, side="right"))
                if cut:
                    head.append(f.head(cut))
                if cut < f.height:
                    rest.append(f.slice(cut))
            self.parts[name] = (table, rest)
            if head:
                rows = head[0] if len(head) == 1 else pl.concat(head, how="vertical")
                taken.append((int(rows["line_no"][0]), table, rows))
        out: dict[str, list[pl.DataFrame]] = {}
        for _, table, rows in sorted(taken, key=lambda t: t[0]):
            out.setdefault(table, []).append(rows)
        return out


def with_line_context(tables: dict[str, list[pl.DataFrame]], lines: pl.DataFrame) -> dict[str, list[pl.DataFrame]]:
    """The rows of ``tables`` whose line (in ``lines``: ``line_no``, ``pattern``, ``ts``,
    ``run_id``, one source) is still claimed by the row's pattern, with the line's
    ``ts`` and ``run_id``."""
    ctx = lines.select("line_no", "ts", "run_id", pl.col("pattern").alias("_claim"))
    # the lines of a chunk are in line order: each row finds its line by binary search
    # (a gather instead of a hash join per table part)
    ordered = ctx.height > 0 and ctx["line_no"].is_sorted()
    out: dict[str, list[pl.DataFrame]] = {}
    for table, parts in tables.items():
        for part in parts:
            if ordered:
                at = ctx[ctx["line_no"].search_sorted(part["line_no"]).clip(upper_bound=ctx.height - 1)]
                rows = (part.hstack(at.drop("line_no"))
                        .filter((at["line_no"] == part["line_no"]) & (pl.col("_claim") == pl.col("_pattern"))))
            else:
                rows = part.join(ctx, on="line_no", how="inner", maintain_order="left").filter(
                    pl.col("_claim") == pl.col("_pattern"))
            rows = rows.drop("_claim")
            if rows.height:
                out.setdefault(table, []).append(rows)
    return out
