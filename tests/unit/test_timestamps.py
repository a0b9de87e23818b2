"""add_timestamps(): the ``ts`` of each line, and the year of logs that print none.

SGLang prints full dates (before v0.3.4 only HH:MM:SS: the date comes from the file's mtime). vLLM
prints MM-DD with no year: it comes from --year, else from the mtime (one year earlier when the log
starts in a later month than the mtime's), and advances at each December -> January rollover, also
across chunks."""
from __future__ import annotations

import datetime as dt

import polars as pl

from support.stages import TimeState, add_timestamps, classified

MTIME_FEB_2026 = dt.datetime(2026, 2, 10, 12, 0, 0).timestamp()  # local time, as add_timestamps reads it


def vllm_line(md: str, hms: str, text: str = "Avg prompt throughput: 0.0 tokens/s") -> str:
    return f"INFO {md} {hms} [loggers.py:123] {text}"


def stamps(lines: list[str], engine: str, year: int | None = None, mtime: float = MTIME_FEB_2026,
           state: TimeState | None = None) -> tuple[list, TimeState]:
    st = state or TimeState()
    f = add_timestamps(classified(lines, engine), st, mtime, year)
    return f.sort("line_no")["ts"].to_list(), st


def test_sglang_full_dates_are_taken_as_printed():
    ts, st = stamps(["[2026-02-04 14:02:18] server_args=ServerArgs(model_path='x')",
                     "[2026-02-04 14:02:26 TP3] Init torch distributed begin.",
                     "[2026-02-04 14:02:26.512 TP3] Load weight begin. avail mem=78.53 GB"], "sglang")
    assert ts[:2] == [dt.datetime(2026, 2, 4, 14, 2, 18), dt.datetime(2026, 2, 4, 14, 2, 26)]
    assert ts[2] in (dt.datetime(2026, 2, 4, 14, 2, 26), dt.datetime(2026, 2, 4, 14, 2, 26, 512000))
    assert st.basis == ""  # nothing was inferred


def test_sglang_time_only_takes_the_date_from_the_mtime():
    ts, st = stamps(["[14:02:11] server_args=ServerArgs(model_path='x')", "[14:02:17 TP0] Init torch distributed begin."],
                    "sglang")
    assert ts == [dt.datetime(2026, 2, 10, 14, 2, 11), dt.datetime(2026, 2, 10, 14, 2, 17)]
    assert st.basis == "file mtime (time-only timestamps)"


def test_vllm_year_from_the_option():
    ts, st = stamps([vllm_line("02-09", "13:02:46")], "vllm", year=2024)
    assert ts == [dt.datetime(2024, 2, 9, 13, 2, 46)] and st.basis == "--year"


def test_vllm_year_from_the_mtime():
    ts, st = stamps([vllm_line("02-09", "13:02:46")], "vllm")
    assert ts == [dt.datetime(2026, 2, 9, 13, 2, 46)] and st.basis == "file mtime"


def test_vllm_log_starting_after_the_mtime_month_is_from_the_year_before_and_rolls_over():
    lines = [vllm_line("12-31", "23:59:58"), vllm_line("12-31", "23:59:59"), vllm_line("01-01", "00:00:01"),
             vllm_line("01-02", "08:00:00")]
    ts, st = stamps(lines, "vllm")
    assert [t.year for t in ts] == [2025, 2025, 2026, 2026]
    assert ts[2] == dt.datetime(2026, 1, 1, 0, 0, 1)
    assert st.basis == "file mtime"


def test_a_small_step_back_in_months_is_no_new_year():
    # interleaved workers can print a line of the previous month after a newer one: not a rollover
    ts, _ = stamps([vllm_line("03-01", "00:00:01"), vllm_line("02-28", "23:59:59"), vllm_line("03-01", "00:00:02")],
                   "vllm", year=2026)
    assert [t.year for t in ts] == [2026, 2026, 2026]


def test_the_rollover_carries_across_chunks():
    lines = [vllm_line("12-30", "10:00:00"), vllm_line("12-31", "23:59:59"), vllm_line("01-01", "00:00:01"),
             vllm_line("01-05", "00:00:00"), vllm_line("02-01", "00:00:00")]
    whole, _ = stamps(lines, "vllm")
    for cut in range(1, len(lines)):
        st = TimeState()
        first = add_timestamps(classified(lines[:cut], "vllm"), st, MTIME_FEB_2026, None)
        second = add_timestamps(classified(lines[cut:], "vllm", first_line_no=cut + 1), st, MTIME_FEB_2026, None)
        assert pl.concat([first, second]).sort("line_no")["ts"].to_list() == whole, cut


def test_lines_without_a_time_have_no_timestamp():
    ts, _ = stamps(["+ export NCCL_ALGO=Ring", vllm_line("02-09", "13:02:46"), "    continuation text"], "vllm")
    assert ts[0] is None and ts[2] is None and ts[1] == dt.datetime(2026, 2, 9, 13, 2, 46)
