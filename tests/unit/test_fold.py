"""fold(): multi-line records (Python tracebacks, benchmark blocks) become one row each, and a record
cut by the end of a chunk is carried into the next one. Nothing is lost: every input line comes back
either in the folded frame or in the carry."""
from __future__ import annotations

import pytest

from support.paths import SAMPLES
from support.stages import fold_lines

TRACEBACK = [
    "[2026-02-04 10:00:00] Scheduler hit an exception",
    "Traceback (most recent call last):",
    '  File "/sgl/managers/scheduler.py", line 2100, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    '  File "/sgl/model_executor/cuda_graph_runner.py", line 310, in capture',
    "    raise RuntimeError(msg)",
    "RuntimeError: CUDA error: out of memory",
    "[2026-02-04 10:00:01] Received sigquit from a child process. It usually means the child failed.",
]


def test_a_traceback_becomes_one_error_with_its_type_and_message():
    folded = fold_lines(TRACEBACK, "sglang")
    # the "hit an exception" line is an error of its own; the traceback after it is one record
    assert folded.errors["line_no"].to_list() == [1, 2]
    err = folded.errors.row(1, named=True)
    assert (err["line_no"], err["last_line"]) == (2, 7)
    assert err["exc_type"] == "RuntimeError" and "out of memory" in err["message"]
    assert err["traceback"].startswith("Traceback (most recent call last):")
    assert "cuda_graph_runner.py" in err["traceback"]
    patterns = folded.frame.sort("line_no")["pattern"].to_list()
    assert patterns[2:7] == ["traceback"] * 5  # the body lines belong to the record
    assert folded.carry is None


def _chained(last: str) -> list[str]:
    return TRACEBACK[1:7] + [
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/sgl/launch_server.py", line 14, in <module>',
        "    launch_server(server_args)",
        last,
    ]


def test_chained_tracebacks_are_one_record():
    chained = _chained("ChildProcessError: Rank 0 scheduler is dead. Please check if there are relevant logs.")
    folded = fold_lines(chained, "sglang")
    assert folded.errors.height == 1
    err = folded.errors.row(0, named=True)
    assert (err["line_no"], err["last_line"]) == (1, len(chained))
    # the outermost exception names the record; the cause stays in its text
    assert err["exc_type"] == "ChildProcessError" and "CUDA error: out of memory" in err["traceback"]


@pytest.mark.parametrize("last, exc_type", [
    ("Exception: Rank 0 scheduler is dead. Please check if there are relevant logs.", "Exception"),  # raise Exception(...)
    ("KeyboardInterrupt", "KeyboardInterrupt"),
    ("UserWarning: resource_tracker: leaked semaphore", "UserWarning"),  # a warning raised as an error (-W error)
    ("torch.OutOfMemoryError: CUDA out of memory.", "OutOfMemoryError"),
])
def test_an_exception_line_at_column_0_ends_the_record(last, exc_type):
    chained = _chained(last)
    err = fold_lines(chained, "sglang").errors.row(0, named=True)
    assert (err["last_line"], err["exc_type"]) == (len(chained), exc_type)


def test_a_bare_word_before_a_colon_is_not_an_exception_line():
    # "Error:"/"Warning:" alone name no exception class: a tool's message after a traceback
    # is not swallowed by the record
    lines = TRACEBACK[1:7] + ["Warning: Permanently added 'node-2' to the list of known hosts."]
    err = fold_lines(lines, "sglang").errors.row(0, named=True)
    assert (err["last_line"], err["exc_type"]) == (6, "RuntimeError")


def test_a_traceback_cut_by_the_chunk_end_is_carried_whole():
    part = TRACEBACK[:5]  # the exception line has not arrived yet
    folded = fold_lines(part, "sglang", final=False)
    assert folded.carry is not None
    assert folded.carry["line_no"].to_list() == [2, 3, 4, 5]
    assert folded.frame["line_no"].to_list() == [1]
    assert folded.errors["line_no"].to_list() == [1]  # only the one-line error before the record
    # the next chunk starts with the carry: the record is folded there, once
    rest = folded.carry["raw"].to_list() + TRACEBACK[5:]
    again = fold_lines(rest, "sglang", final=True, first_line_no=2)
    assert again.errors["line_no"].to_list() == [2] and again.errors["last_line"].to_list() == [7]
    assert sorted(folded.frame["line_no"].to_list() + again.frame["line_no"].to_list()) == list(range(1, 9))


def test_the_final_chunk_keeps_an_unfinished_traceback():
    folded = fold_lines(TRACEBACK[:5], "sglang", final=True)
    assert folded.carry is None
    assert folded.frame["line_no"].to_list() == [1, 2, 3, 4, 5]


def _bench_lines() -> list[str]:
    return (SAMPLES / "bench_sglang_tuned_v1_c1.txt").read_text(encoding="utf-8").splitlines()


def test_a_benchmark_block_becomes_one_row_with_numbers():
    lines = _bench_lines()
    folded = fold_lines(lines, "sglang")
    assert folded.bench is not None and folded.bench.height == 1
    row = folded.bench.row(0, named=True)
    assert row["backend"] == "sglang-oai-chat"
    numeric = {k: v for k, v in row.items() if isinstance(v, float)}
    assert pytest.approx(157.58) in numeric.values()  # Benchmark duration (s)
    assert pytest.approx(63.42) in numeric.values()   # Output token throughput (tok/s)
    assert folded.frame.height == len(lines)


def test_a_benchmark_block_cut_by_the_chunk_end_is_carried():
    lines = _bench_lines()
    title = next(i for i, s in enumerate(lines) if "Serving Benchmark Result" in s)
    folded = fold_lines(lines[:title + 5], "sglang", final=False)
    assert folded.bench is None or folded.bench.height == 0
    assert folded.carry is not None and folded.carry["line_no"].min() <= title + 1
    assert folded.frame.height + folded.carry.height == title + 5


def test_a_closed_block_with_blank_lines_after_it_is_carried_whole():
    # the closing rule heads a group with the blank lines (they read as traceback body lines):
    # the carry must start at the title, not at the rule, or the rule is folded without its block
    lines = _bench_lines() + ["", ""]
    title = next(i for i, s in enumerate(lines) if "Serving Benchmark Result" in s)
    close = max(i for i, s in enumerate(lines) if s.startswith("====="))
    part = fold_lines(lines, "sglang", final=False)
    assert part.carry is not None and part.carry["line_no"].min() == title + 1
    rest = fold_lines(part.carry["raw"].to_list(), "sglang", final=True, first_line_no=title + 1)
    assert rest.bench.select("line_no", "last_line").row(0) == (title + 1, close + 1)


def test_pre_launch_chatter_before_a_carried_marker_is_carried_with_it():
    lines = ["[2026-02-04 10:00:00] Decode batch. #running-req: 1, #token: 100, token usage: 0.01, "
             "gen throughput (token/s): 50.00, #queue-req: 0",
             "+ date", "Tue Feb  3 10:46:52 UTC 2026",
             "+ python3 -m sglang.launch_server --model-path m --tp 8",
             "[2026-02-04 10:01:00] server_args=ServerArgs(model_path='m', tp_size=8)"]
    part = fold_lines(lines, "sglang", final=False)
    assert part.carry["line_no"].to_list() == [2, 3, 4, 5]
    assert part.frame["line_no"].to_list() == [1]


def test_plain_lines_pass_through_unchanged():
    lines = [f"[2026-02-04 10:00:{i:02d}] Prefill batch. #new-seq: 1, #new-token: 128, #cached-token: 0, "
             f"token usage: 0.00, #running-req: 0, #queue-req: 0" for i in range(30)]
    folded = fold_lines(lines, "sglang", final=True)
    assert folded.frame.height == 30 and folded.carry is None
    assert folded.frame["line_no"].to_list() == list(range(1, 31))
    assert (folded.errors is None or folded.errors.height == 0) and (folded.bench is None or folded.bench.height == 0)
    assert set(folded.frame["pattern"].to_list()) == {"sgl_prefill"}
    # not the last chunk: only the last line (it could be the head of a record) may wait for the next one
    part = fold_lines(lines, "sglang", final=False)
    assert part.frame.height + (part.carry.height if part.carry is not None else 0) == 30
    assert part.frame.height >= 29
