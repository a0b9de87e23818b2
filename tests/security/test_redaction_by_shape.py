"""Redaction given the lines' shapes (``redact_shaped``, what the ingest does for a chunk it
parses by shape) masks exactly what line-by-line redaction masks, and hands back shapes that
are those of the redacted text: every container of a secret, prompts in every spelling, a
multi-line prompt record cut by a chunk boundary anywhere, with and without --keep-prompts.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

from logsleuth.ingest.redact import RedactState, redact_frame, redact_shaped  # noqa: E402
from logsleuth.ingest.shapes import encode, mask_digits  # noqa: E402

_spec = importlib.util.spec_from_file_location("_redaction_property", Path(__file__).with_name("test_redaction_property.py"))
_prop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_prop)

# ordinary lines around the secrets: the same shape many times, as in a real chunk
ORDINARY = st.integers(min_value=0, max_value=10**6).map(
    lambda n: f"[2026-01-01 10:00:{n % 60:02d} TP{n % 8}] Decode batch, #running-req: {n % 97}, #token: {n}")


def _both(lines: list[str], keep: bool, cut: int | None = None) -> None:
    frame = pl.DataFrame({"line_no": list(range(1, len(lines) + 1)), "raw": lines})
    parts = [frame] if cut is None else [frame[:cut], frame[cut:]]
    s1, s2 = RedactState(), RedactState()
    for part in parts:
        want = redact_frame(part, "raw", keep, s1)
        got, shapes = redact_shaped(part, "raw", keep, s2, encode(part["raw"]))
        assert got.equals(want)
        assert s1.inside == s2.inside
        assert shapes.take(shapes.shapes).to_list() == mask_digits(got["raw"]).to_list()


@pytest.mark.parametrize("form", sorted(_prop.CONTAINERS))
def test_shaped_redaction_equals_line_by_line(form):
    @settings(max_examples=15, deadline=None)
    @given(st.lists(st.one_of(_prop.CONTAINERS[form], ORDINARY.map(lambda x: (x, ""))), min_size=10, max_size=30),
           st.booleans())
    def check(cases, keep):
        _both([line for line, _ in cases], keep)

    check()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(_prop.PROMPT_LINE, min_size=2, max_size=6),
                          st.sampled_from([_prop._vllm_record, _prop._sglang_record])), min_size=3, max_size=8),
       st.integers(min_value=1, max_value=60), st.booleans())
def test_multi_line_records_across_a_cut(records, cut, keep):
    lines = ["[2026-01-01 09:59:59] starting"]
    for prompt, record in records:
        lines += record(prompt) + ["[2026-01-01 10:00:01] Decode batch. #running-req: 1, #token: 82"]
    _both(lines, keep, min(cut, len(lines) - 1))
