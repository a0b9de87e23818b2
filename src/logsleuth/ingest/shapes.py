"""Lines keyed by their shape: the text with every ASCII digit 1-9 written as 0.

Contract:
* ``mask_digits(series)`` returns ``series`` with each ASCII digit 1-9 replaced by ``0``
  (same length in bytes and characters; nulls stay null).
* ``encode(series)`` returns ``Shapes(ids, shapes)``: the distinct masked lines
  (``shapes``, a Series in first-seen order) and, per line, the index of its shape
  (``ids``, UInt32), or None when a line is null. ``Shapes.slice`` takes the lines of a
  contiguous part, ``Shapes.replaced`` follows lines whose text changed (redaction), so a
  chunk is encoded once, before redaction, and parsed with the same encoding.

Why: a server log repeats a few hundred shapes (a decode line differs from the next only in
its numbers), so whatever is the same for every line of a shape (where the log header ends,
which grammar pattern claims the message, where each typed field sits) is computed once per
shape and taken to the lines with ``ids``. That is exact for every regex that treats all
ASCII digits alike, which ``digit_invariant(pattern)`` checks on the regex's parse tree.

How: the masking runs on the Arrow bytes with numpy (a regex replace over every line costs
~50x more, polars' ``replace_many`` ~3x) and the encoding is Arrow's hash-based
``dictionary_encode`` (~3x cheaper than polars' unique plus a join back to the lines).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import polars as pl


#: most distinct shapes a chunk may have for the shape path (header spans, field spans)
MAX_SHAPES = 20000
#: fewer lines than this take the capture engine per line: it is cheap enough there
SHAPE_MIN_ROWS = 512


def detached(series: pl.Series) -> pl.Series:
    """A copy of a (small) string column that owns its bytes. Polars string columns are
    views into the buffers of the column they were cut from; a cache holding such a view
    keeps every chunk's whole text alive (RSS grew ~12 MB per 16 MB chunk)."""
    return pl.Series(series.name, series.to_list(), dtype=series.dtype)

@dataclass(frozen=True)
class Shapes:
    ids: pl.Series  # UInt32 per line: index into ``shapes``
    shapes: pl.Series  # the distinct masked lines (owning their bytes)

    def take(self, per_shape: pl.Series) -> pl.Series:
        """A per-shape column as a per-line one."""
        return per_shape.gather(self.ids)

    def slice(self, offset: int, length: int) -> "Shapes":
        """The shapes of the lines ``offset .. offset + length`` (same shape table)."""
        return Shapes(ids=self.ids.slice(offset, length), shapes=self.shapes)

    def replaced(self, rows: pl.Series, texts: pl.Series) -> "Shapes | None":
        """The shapes after the lines at ``rows`` became ``texts`` (e.g. redacted): their new
        shapes are appended to the table (a shape may then appear twice; every user of the
        table groups by its text)."""
        new = encode(texts)
        if new is None:
            return None
        ids = self.ids.scatter(rows, new.ids + self.shapes.len())
        return Shapes(ids=ids, shapes=pl.concat([self.shapes, new.shapes]))

def _masked_arrow(series: pl.Series):
    import pyarrow as pa

    arr = series.to_arrow(compat_level=pl.CompatLevel.oldest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    validity, off_buf, data_buf = arr.buffers()
    off = np.frombuffer(off_buf, dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    lo, hi = int(off[0]), int(off[-1])
    data = np.frombuffer(data_buf, dtype=np.uint8)[lo:hi].copy() if data_buf is not None else np.zeros(0, np.uint8)
    # bytes '1'..'9' (49..57) -> '0': one unsigned compare (x - 49 wraps below 49)
    np.putmask(data, (data - np.uint8(49)) < 9, np.uint8(48))
    return pa.LargeStringArray.from_buffers(len(arr), pa.py_buffer(off - lo), pa.py_buffer(data),
                                            validity, arr.null_count, 0)

def mask_digits(series: pl.Series) -> pl.Series:
    """``series`` with every ASCII digit 1-9 replaced by 0."""
    return pl.from_arrow(_masked_arrow(series)).alias(series.name)

def encode(series: pl.Series) -> Shapes | None:
    """The shapes of ``series`` and each line's shape index (None if a line is null)."""
    import pyarrow.compute as pc

    if series.null_count():
        return None
    enc = pc.dictionary_encode(_masked_arrow(series))
    ids = pl.from_arrow(enc.indices).cast(pl.UInt32)
    return Shapes(ids=ids, shapes=pl.from_arrow(enc.dictionary).alias("_k"))

@functools.lru_cache(maxsize=2048)
def digit_invariant(pattern: str, ends: bool = False) -> bool:  # noqa: C901 (one branch per regex parse-tree node type)  # long: one walk over sre's parse tree, its opcode tables beside it
    """True if every atom of ``pattern`` treats the ASCII digits 0-9 alike and it has no
    assertion other than ^ (checked on Python's parse tree of the pattern). With ``ends``,
    ``$``, ``\\Z``, ``\\b`` and ``\\B`` are allowed too: they keep a *match test* digit
    invariant (digits stay word characters when masked), though not the extent of a
    header match on a cut-off header text."""
    try:
        import re._parser as sre_parse  # Python 3.11+
        from re import _constants as C
    except ImportError:  # pragma: no cover
        return False
    digits = set(range(48, 58))
    all_cats = {C.CATEGORY_DIGIT, C.CATEGORY_WORD, C.CATEGORY_NOT_SPACE, C.CATEGORY_UNI_DIGIT,
                C.CATEGORY_UNI_WORD, C.CATEGORY_UNI_NOT_SPACE, C.CATEGORY_LOC_WORD}
    no_cats = {C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_WORD, C.CATEGORY_SPACE, C.CATEGORY_UNI_NOT_DIGIT,
               C.CATEGORY_UNI_NOT_WORD, C.CATEGORY_UNI_SPACE, C.CATEGORY_LOC_NOT_WORD,
               C.CATEGORY_LINEBREAK, C.CATEGORY_NOT_LINEBREAK, C.CATEGORY_UNI_LINEBREAK,
               C.CATEGORY_UNI_NOT_LINEBREAK}

    end_ats = {C.AT_END, C.AT_END_STRING, C.AT_BOUNDARY, C.AT_NON_BOUNDARY}

    def cls_ok(items) -> bool:
        got: set[int] = set()
        for op, av in items:
            if op is C.NEGATE:
                continue
            if op is C.LITERAL:
                got |= {av} & digits
            elif op is C.RANGE:
                got |= set(range(av[0], av[1] + 1)) & digits
            elif op is C.CATEGORY:
                if av in all_cats:
                    got |= digits
                elif av not in no_cats:
                    return False
            else:
                return False
        return not got or got == digits

    def walk(seq) -> bool:
        for op, av in seq:
            if op in (C.LITERAL, C.NOT_LITERAL):
                if av in digits:
                    return False
            elif op is C.ANY:
                continue
            elif op is C.IN:
                if not cls_ok(av):
                    return False
            elif op is C.AT:
                if av not in (C.AT_BEGINNING, C.AT_BEGINNING_STRING) and not (ends and av in end_ats):
                    return False
            elif op is C.SUBPATTERN:
                if not walk(av[-1]):
                    return False
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                if not walk(av[2]):
                    return False
            elif op is C.BRANCH:
                if not all(walk(b) for b in av[1]):
                    return False
            else:  # GROUPREF, ASSERT, ASSERT_NOT, ATOMIC_GROUP, POSSESSIVE_REPEAT, ...
                return False
        return True

    try:
        return walk(sre_parse.parse(pattern))
    except Exception:
        return False
