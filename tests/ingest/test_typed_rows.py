"""Typed rows cut at parse time reach the writer as if they were cut after the fold.

``TypedRows`` keeps the rows of parsed lines until their lines are folded and stamped
(a record the fold carries into the next chunk keeps its rows waiting; a carry parsed again
replaces them); ``with_line_context`` keeps the rows of lines still claimed by the row's
pattern and gives them the line's timestamp and run. End to end, chunked = unchunked and
parse workers = inline (tests/ingest/test_chunking.py, test_workers.py) check the same on
whole logs.
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.ingest.extract import TypedRows, with_line_context


def _rows(pattern: str, lines: list[int], tag: str = "a") -> pl.DataFrame:
    """Rows as ``extract`` gives them for one pattern: line order, a field, kind and pattern."""
    return pl.DataFrame({"line_no": pl.Series(lines, dtype=pl.Int64), "field": [f"{tag}{n}" for n in lines]}).with_columns(
        pl.lit("k").alias("_kind"), pl.lit(pattern).alias("_pattern"))


def _lines(tables: dict) -> dict:
    return {t: [p["line_no"].to_list() for p in parts] for t, parts in tables.items()}


def test_take_through_hands_on_the_rows_up_to_a_line_in_the_order_patterns_first_claim_a_line():
    pool = TypedRows()
    pool.add({"decode_stats": [_rows("decode", [2, 4, 9])], "events": [_rows("ready", [1, 10])]})
    pool.add({"decode_stats": [_rows("decode", [12, 14])], "events": [_rows("backend", [11])]})
    first = pool.take_through(9)
    assert list(first) == ["events", "decode_stats"]  # "ready" claims line 1, "decode" line 2
    assert _lines(first) == {"events": [[1]], "decode_stats": [[2, 4, 9]]}
    rest = pool.take_through(100)
    assert _lines(rest) == {"decode_stats": [[12, 14]], "events": [[10], [11]]}
    assert pool.take_through(1000) == {}


def test_rows_of_a_chunk_split_by_the_cut_come_whole_with_the_next_chunk():
    pool = TypedRows()
    pool.add({"decode_stats": [_rows("decode", [1, 2, 3])]})
    pool.add({"decode_stats": [_rows("decode", [4, 5])]})
    assert _lines(pool.take_through(2)) == {"decode_stats": [[1, 2]]}
    later = pool.take_through(5)
    assert _lines(later) == {"decode_stats": [[3, 4, 5]]}  # one part per pattern, in line order
    assert later["decode_stats"][0]["field"].to_list() == ["a3", "a4", "a5"]


def test_drop_from_forgets_the_rows_of_lines_parsed_again():
    pool = TypedRows()
    pool.add({"decode_stats": [_rows("decode", [5, 6, 7, 8])], "events": [_rows("ready", [8])]})
    pool.drop_from(7)
    pool.add({"events": [_rows("launch", [7, 8], tag="b")]})  # the carry, parsed with another grammar
    out = pool.take_through(8)
    assert _lines(out) == {"decode_stats": [[5, 6]], "events": [[7, 8]]}
    assert out["events"][0]["field"].to_list() == ["b7", "b8"]


def test_line_context_keeps_the_rows_of_lines_the_fold_left_claimed_with_their_time_and_run():
    t0 = dt.datetime(2026, 6, 1, 12, 0)
    tables = {"decode_stats": [_rows("decode", [1, 2, 3, 4])], "events": [_rows("ready", [5])]}
    lines = pl.DataFrame({
        "line_no": pl.Series([1, 2, 3, 4, 5], dtype=pl.Int64),
        # the fold took line 2 into a traceback and dropped the claim of line 4
        "pattern": ["decode", "traceback", "decode", None, "ready"],
        "ts": [t0 + dt.timedelta(seconds=i) for i in range(5)],
        "run_id": pl.Series([1, 1, 2, 2, 2], dtype=pl.Int32),
    })
    out = with_line_context(tables, lines)
    dec = out["decode_stats"][0]
    assert dec["line_no"].to_list() == [1, 3]
    assert dec["run_id"].to_list() == [1, 2]
    assert dec["ts"].to_list() == [t0, t0 + dt.timedelta(seconds=2)]
    assert dec["field"].to_list() == ["a1", "a3"]
    assert "_claim" not in dec.columns
    assert out["events"][0]["line_no"].to_list() == [5]


def test_line_context_of_rows_whose_lines_all_lost_their_claim_is_empty():
    lines = pl.DataFrame({"line_no": pl.Series([1], dtype=pl.Int64), "pattern": ["traceback"],
                          "ts": [None], "run_id": pl.Series([1], dtype=pl.Int32)})
    assert with_line_context({"decode_stats": [_rows("decode", [1])]}, lines) == {}


def test_line_context_is_the_same_whatever_the_order_of_the_lines():
    """Lines in line order take the binary-search path, others a join: same rows."""
    t0 = dt.datetime(2026, 6, 1, 12, 0)
    lines = pl.DataFrame({"line_no": pl.Series([1, 2, 3, 4, 6], dtype=pl.Int64),
                          "pattern": ["decode", "traceback", "decode", "decode", "decode"],
                          "ts": [t0 + dt.timedelta(seconds=i) for i in range(5)],
                          "run_id": pl.Series([1, 1, 2, 2, 3], dtype=pl.Int32)})
    tables = {"decode_stats": [_rows("decode", [1, 2, 3, 5, 6, 7])]}  # 5 and 7: no such line here
    ordered = with_line_context(tables, lines)["decode_stats"][0]
    shuffled = with_line_context(tables, lines.reverse())["decode_stats"][0]
    assert ordered["line_no"].to_list() == [1, 3, 6]
    assert ordered.equals(shuffled)
