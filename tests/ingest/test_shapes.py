"""shapes.py: digit masking and shape encoding (property tests)."""
from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from logsleuth.ingest.shapes import encode, mask_digits

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=30))
def test_mask_writes_each_ascii_digit_as_zero_and_nothing_else(lines):
    masked = mask_digits(pl.Series("x", lines, dtype=pl.Utf8)).to_list()
    assert masked == [s.translate(str.maketrans("123456789", "000000000")) for s in lines]


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=30))
def test_encode_gives_each_line_its_masked_text(lines):
    sh = encode(pl.Series("x", lines, dtype=pl.Utf8))
    want = mask_digits(pl.Series("x", lines, dtype=pl.Utf8)).to_list()
    assert sh.take(sh.shapes).to_list() == want
    assert sh.shapes.n_unique() == sh.shapes.len() == len(set(want))


def test_encode_of_a_sliced_series_and_of_nulls():
    s = pl.Series("x", ["a1", "b22", "a9", None, "c"])
    sh = encode(s.slice(0, 3))  # an Arrow offset not at zero
    assert sh.take(sh.shapes).to_list() == ["a0", "b00", "a0"]
    assert sh.shapes.len() == 2
    assert encode(s) is None  # a null line has no shape
    assert mask_digits(s).to_list() == ["a0", "b00", "a0", None, "c"]
