"""The shape fast paths of parse.py give exactly what the per-line capture engine gives.

``_header_groups_fast`` (prefix peel) and ``_shape_extract`` (typed fields) are compared
with polars ``str.extract_groups`` / ``str.extract`` on every bundled sample, with both
engines' prefix regexes, plus hand-made lines that stress the edge cases (the Ray
``[repeated Nx across cluster]`` suffix, ANSI colour, process tags, no header at all).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logsleuth.grammar import default_grammars
from logsleuth.pipeline import parse as P

SAMPLES = Path(__file__).resolve().parent / "samples"
EDGE = [
    "(SGLangEngine pid=13265) [2025-08-14 23:22:40 TP7] KV cache pool is full. Retract requests. "
    "#retracted_reqs: 1, #new_token_ratio: 0.4533 -> 0.4767 [repeated 7x across cluster]",
    "(SGLangEngine pid=13265, ip=10.0.0.1) [2025-08-14 23:22:40 DP1 TP3 EP3] Decode batch, #running-req: 9",
    "\x1b[1;36m(VllmWorker TP1 pid=354)\x1b[0;0m INFO 08-28 14:31:31 [pynccl.py:70] vLLM is using nccl==2.26.2",
    "(APIServer pid=1) INFO 02-01 10:00:00 [utils.py:290]  model   deepseek-ai/DeepSeek-V3 [repeated 2x across cluster]",
    "2026-05-12T08:01:39.331095044Z (EngineCore_DP0 pid=312) WARNING 09-15 10:00:09 [core.py:76] x",
    "[2025-03-07 21:49:33 TP13] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00",
    "[04:40:55 TP0] Prefill batch. #new-seq: 1, #new-token: 2062",
    "[gpu=3] Decode batch. #running-req: 3", "", "   ", "no header at all 123",
    "[2026-01-02 03:04:05.123 DP1 PP0 TP1 EP1] 2026 line ٣ with a non-ASCII digit",
    "INFO 01-23 12:34:56 llm_engine.py:161] old vLLM",
]


def _frames():
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".log", ".txt", ".md"))
    assert files
    for f in files:
        lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
        yield f.name, lines + EDGE


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_header_fast_path_equals_capture_engine(engine):
    regex = P.prefix_regex(default_grammars(), engine)
    plan = P._prefix_plan(regex)
    assert plan is not None, "the shipped prefix regex should take the fast path"
    for name, lines in _frames():
        frame = pl.DataFrame({"raw": lines})
        frame = frame.with_columns(P._clean_text(frame).alias("_text"))
        slow = frame.select(pl.col("_text").str.extract_groups(regex).alias("_h")).unnest("_h")
        fast = P._header_groups_fast(frame, plan)
        assert fast is not None, name
        assert fast.select(slow.columns).equals(slow), name


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_field_fast_path_equals_capture_engine(engine, monkeypatch):
    grammars = default_grammars()
    pats = P.patterns_for(grammars, engine)
    lines = [ln for _, ls in _frames() for ln in ls]  # every sample at once: one parse
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1).with_columns(
        pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    parsed = P.parse_frame(frame, grammars, engine).frame
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 10**12)
    slow = P.extract(parsed, pats)
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 1)
    fast = P.extract(parsed, pats)
    assert slow.keys() == fast.keys()
    n_fast = 0
    for table in slow:
        for a, b in zip(slow[table], fast[table]):
            assert a.equals(b), f"{table} {a['_pattern'][0]}"
            n_fast += 1
    assert n_fast > 10


def test_digit_invariance_check():
    assert P._digit_invariant(r"^\[(?P<t>\d\d:\d\d)\] (?:TP(?P<tp>\d+))?")
    assert P._digit_invariant(r"#running-req: (\d+)")
    assert not P._digit_invariant(r"sm_120")  # literal digit
    assert not P._digit_invariant(r"TP[0-3]")  # class holding some digits only
    assert not P._digit_invariant(r"foo\b")  # boundary assertion
    assert not P._digit_invariant(r"x$")  # end assertion
    assert P._digit_invariant(r"[^)]*[\w.-]+\S")
