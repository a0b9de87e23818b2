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

from logsleuth.formats.grammar import default_grammars
from logsleuth.ingest import extract as X
from logsleuth.ingest import parse as P

from support.paths import SAMPLES
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
    monkeypatch.setattr(X, "SHAPE_MIN_ROWS", 10**12)
    slow = X.extract(parsed, pats)
    monkeypatch.setattr(X, "SHAPE_MIN_ROWS", 1)
    fast = X.extract(parsed, pats)
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


def _corpus_frames():
    from support.paths import CORPUS

    files = sorted(p for p in CORPUS.glob("*") if p.is_file() and p.suffix in (".log", ".txt", ".md"))
    for f in files:
        yield f.name, f.read_text(encoding="utf-8", errors="replace").split("\n")


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_shape_classification_equals_line_by_line(engine, monkeypatch):
    """``classify`` decides per digit-masked shape (with a cache across chunks); it must claim
    exactly what trying every pattern on every line claims, on every sample and corpus file,
    including shapes that hold the literal of a pattern that is not digit invariant."""
    grammars = default_grammars()
    pats = P.patterns_for(grammars, engine)
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 1)
    monkeypatch.setattr(P, "_SHAPE_MAX_SHARE", 2.0)  # take the shape path even without repetition
    cache = P.ShapeCache()
    n = 0
    extra = ["Use triton as attention backend on sm100", "Use triton as attention backend on sm120",
             "Using FP8 KV cache but no scaling factors provided", "Using fp8 data type to store kv cache"]
    for name, lines in list(_frames()) + list(_corpus_frames()):
        frame = pl.DataFrame({"raw": lines + extra})
        peeled = P.peel(frame, P.prefix_regex(grammars, engine))
        slow = P._classify_iter(peeled, pats, peeled["msg"], peeled["level"])
        fast = P.classify(peeled, pats, cache)["pattern"]
        assert fast.to_list() == slow.to_list(), name
        n += 1
    assert n > 20 and cache.frame is not None and cache.frame.height > 100


def test_shape_plan_marks_non_invariant_literals():
    plan = P._shape_plan((("^Use (?P<text>\\w+) as attention backend on sm100", "as attention backend on sm100"),
                          ("^Decode batch", "Decode batch")))
    assert plan == ("as attention backend on sm000",)
    assert P._shape_plan((("^v1 (?P<x>.*)$", ""),)) is None  # no literal to find its shapes by


def test_field_spans_cached_across_chunks_match_a_fresh_parse(monkeypatch):
    monkeypatch.setattr(X, "SHAPE_MIN_ROWS", 1)
    grammars = default_grammars()
    pats = P.patterns_for(grammars, "sglang")
    lines = (SAMPLES / "sglang_tuned_v1.log").read_text(encoding="utf-8").split("\n")
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1).with_columns(
        pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    parsed = P.parse_frame(frame, grammars, "sglang").frame
    spans: dict = {}
    half = parsed.height // 2
    warm = [X.extract(parsed.slice(0, half), pats, spans), X.extract(parsed.slice(half), pats, spans)]
    assert spans, "the span cache was not used"
    cold = [X.extract(parsed.slice(0, half), pats), X.extract(parsed.slice(half), pats)]
    for w, c in zip(warm, cold):
        assert w.keys() == c.keys()
        for table in w:
            for a, b in zip(w[table], c[table]):
                assert a.equals(b), table


def test_caches_do_not_pin_chunk_text():
    """A cache entry must own its bytes: a string view into the chunk would keep every
    chunk's whole text alive for the rest of the file (RSS grew ~12 MB per chunk)."""
    grammars = default_grammars()
    pats = P.patterns_for(grammars, "sglang")
    line = "[2026-02-06 09:22:45 TP0] Decode batch, #running-req: 4, #token: 387, token usage: 0.00, " + "x" * 400
    frame = pl.DataFrame({"raw": [line] * 20000 + [f"[2026-02-06 09:22:45 TP0] other line {i}" for i in range(10)]})
    peeled = P.peel(frame, P.prefix_regex(grammars, "sglang"))
    cache = P.ShapeCache()
    P.classify(peeled, pats, cache)
    assert cache.frame.height <= 20
    assert cache.frame.estimated_size() < 100_000, cache.frame.estimated_size()


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_parse_by_shape_equals_the_separate_steps(engine, monkeypatch):
    """``_parse_by_shape`` (header, message and pattern decided once per line shape) gives the
    frame ``classify(peel(...))`` gives, column for column, on every sample and corpus file
    plus the edge lines (suffix, ANSI, process tags, no header, non-ASCII digits)."""
    grammars = default_grammars()
    pats = P.patterns_for(grammars, engine)
    regex = P.prefix_regex(grammars, engine)
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 1)
    monkeypatch.setattr(P, "_SHAPE_PATH_MAX_SHARE", 2.0)  # by shape even where every line differs
    cache = P.ShapeCache()  # shared by all files, as by the files of one ingest process
    n = 0
    for name, lines in list(_frames()) + list(_corpus_frames()):
        frame = pl.DataFrame({"raw": lines + EDGE}).with_row_index("line_no", offset=1).with_columns(
            pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
        result = P._parse_by_shape(frame, regex, pats, cache)
        assert result is not None, name
        by_shape, keys = result
        # a line's message shape comes as an index into the chunk's message shapes
        by_shape = by_shape.with_columns(keys.gather(by_shape["_sid"]).alias("_sid")).rename({"_sid": "_shape"})
        separate = P.classify(P.peel(frame, regex), pats, P.ShapeCache())
        assert by_shape.columns == separate.columns, name
        for col in separate.columns:
            assert by_shape[col].equals(separate[col]), f"{name}: {col}"
        n += 1
    assert n > 20


def test_shape_path_steps_aside_for_logs_of_unique_lines(monkeypatch):
    """A chunk with nearly one shape per line (request ids in hex) is parsed by the separate
    steps from the next chunk on, and tried by shape again now and then."""
    grammars = default_grammars()
    pats = P.patterns_for(grammars, "vllm")
    regex = P.prefix_regex(grammars, "vllm")
    lines = [f"(APIServer pid=1) INFO 02-01 10:00:00 [async_llm.py:1] Added request chatcmpl-{i:x}ab{i * 7:x}."
             for i in range(2000)]
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1).with_columns(
        pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    cache = P.ShapeCache()
    assert P._parse_by_shape(frame, regex, pats, cache) is not None
    assert cache.shape_share > P._SHAPE_PATH_MAX_SHARE
    taken = [P._parse_by_shape(frame, regex, pats, cache) is not None for _ in range(P._SHAPE_REPROBE)]
    assert taken == [False] * (P._SHAPE_REPROBE - 1) + [True]
    # the result is the same whichever way a chunk went
    a = P.parse_frame(frame, grammars, "vllm", cache).frame
    b = P.parse_frame(frame, grammars, "vllm", P.ShapeCache()).frame
    assert a.equals(b)


@pytest.mark.parametrize("with_commas", [True, False])
def test_thousands_separators_are_removed_only_where_a_shape_has_them(with_commas, monkeypatch):
    """The shape path skips the ',' removal for a field no shape shows a comma in; a value
    printed with separators still parses whole."""
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 1)
    monkeypatch.setattr(X, "SHAPE_MIN_ROWS", 1)
    grammars = default_grammars()
    pats = P.patterns_for(grammars, "vllm")
    value = "94,135" if with_commas else "94135"
    lines = [f"(EngineCore_DP0 pid=1) INFO 08-01 21:05:30 [kv_cache_utils.py:1] GPU KV cache size: {value} tokens, "
             f"Maximum concurrency for 65,536 tokens per request: 1.44x"] * 50
    frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1).with_columns(
        pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
    parsed = P.parse_frame(frame, grammars, "vllm").frame
    rows = pl.concat(X.extract(parsed, pats, {})["events"], how="diagonal_relaxed")
    assert rows["value"].to_list() == [94135.0] * 50
    assert rows["tokens_per_request"].to_list() == [65536] * 50


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_typed_rows_cut_at_parse_equal_a_later_extraction(engine, monkeypatch):
    """``parse_frame(typed=True)`` cuts the fields with each line's shape index (``_sid``
    into the chunk's message shapes); the rows equal those ``extract`` gives later from the
    untyped frame (its ``_shape`` text), table for table and part for part, on every sample
    and corpus file."""
    monkeypatch.setattr(P, "_SHAPE_MIN_ROWS", 1)
    monkeypatch.setattr(P, "_SHAPE_PATH_MAX_SHARE", 2.0)
    monkeypatch.setattr(X, "SHAPE_MIN_ROWS", 1)
    grammars = default_grammars()
    pats = P.patterns_for(grammars, engine)
    n_rows = 0
    for name, lines in list(_frames()) + list(_corpus_frames()):
        frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=1).with_columns(
            pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated"))
        typed = P.parse_frame(frame, grammars, engine, P.ShapeCache(), typed=True)
        untyped = P.parse_frame(frame, grammars, engine, P.ShapeCache()).frame
        later = X.extract(untyped, pats, {})
        assert typed.tables.keys() == later.keys(), name
        for table, parts in later.items():
            assert len(typed.tables[table]) == len(parts), f"{name}: {table}"
            for a, b in zip(typed.tables[table], parts):
                assert a.drop("_sid", strict=False).equals(b.drop("_shape", strict=False)), f"{name}: {table}"
                n_rows += b.height
        assert "_sid" not in typed.frame.columns and "_shape" not in typed.frame.columns
    assert n_rows > 1000
