"""assign_runs(): which launch (run) each line belongs to.

A launch marker (a pattern with ``launch = N`` in its grammar) starts a new run unless it continues
the launch sequence of the current one (vLLM: banner 0 -> non-default args 1 -> engine config 2).
The chatter printed just before a marker without a timestamp (shell trace, launcher warnings) belongs
to the launch it precedes. Lines before the first launch share the first launch's run (derive splits
them off later only when they hold a run of their own). Runs are numbered from the state's base id
without gaps. Chunk boundaries never change the answer: fold carries a trailing streak of
such chatter into the next chunk, so assign_runs sees it beside its marker.
"""
from __future__ import annotations

import polars as pl
import pytest

from support.paths import SAMPLES
from logsleuth.ingest.parse import patterns_for
from support.stages import file_lines, grammars, run_ids_in_chunks

BASE = 100  # run ids count from BASE: the first run is BASE, the next BASE + 1


def ordinals(lines: list[str], engine: str, cuts: tuple[int, ...] = ()) -> list[int]:
    """Run index (0 = the first run) of each line, the lines ingested in chunks cut after each count in ``cuts``."""
    runs, _ = run_ids_in_chunks(lines, engine, cuts, base_run_id=BASE)
    assert runs["line_no"].to_list() == list(range(1, len(lines) + 1))  # every line once
    return [rid - BASE for rid in runs["run_id"].to_list()]


@pytest.fixture(scope="module")
def baseline():
    return file_lines(SAMPLES / "sglang_baseline.log")


def test_two_launches_appended_to_one_file(baseline):
    # run 1: wrapper lines 1-3 and the bare warning line 4 precede the server_args dump (line 5);
    # killed during weight loading; run 2 starts with its own wrapper at line 104
    got = ordinals(baseline, "sglang")
    assert set(got[:103]) == {0}
    assert set(got[103:]) == {1}


# cuts inside run 2's wrapper (104-107), right after its marker (line 108: fold carries the marker,
# whose record may continue, and with it the wrapper streak before it), and several at once
@pytest.mark.parametrize("cuts", [(50,), (103,), (104,), (106,), (107,), (108,), (109,), (600,), (20, 105, 900),
                                  (105, 108)])
def test_chunk_boundaries_do_not_move_runs(baseline, cuts):
    assert ordinals(baseline, "sglang", cuts) == ordinals(baseline, "sglang")


def _sample(name: str) -> str:
    by_name = {p.name: p for p in patterns_for(grammars(), "vllm")}
    return by_name[name].samples[0]


STATS = "INFO 09-15 10:05:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s"


def test_vllm_launch_sequence_is_one_run_and_a_new_banner_starts_the_next():
    lines = [
        _sample("vllm_banner"), _sample("vllm_non_default_args"), _sample("vllm_engine_config"), STATS,
        "+ vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8",  # the relaunch's shell trace
        _sample("vllm_banner"), _sample("vllm_non_default_args"), _sample("vllm_engine_config"), STATS,
    ]
    assert ordinals(lines, "vllm") == [0, 0, 0, 0, 1, 1, 1, 1, 1]


def test_a_marker_going_back_in_the_sequence_starts_a_run():
    # engine config (2) then non-default args (1) without a banner: a second launch
    lines = [_sample("vllm_non_default_args"), _sample("vllm_engine_config"), STATS,
             _sample("vllm_non_default_args"), _sample("vllm_engine_config"), STATS]
    assert ordinals(lines, "vllm") == [0, 0, 0, 1, 1, 1]


def test_two_banners_in_a_row_are_two_launches():
    lines = [_sample("vllm_banner"), STATS, _sample("vllm_banner"), STATS]
    assert ordinals(lines, "vllm") == [0, 0, 1, 1]


def test_a_log_without_markers_is_one_run():
    assert set(ordinals([STATS] * 5, "vllm")) == {0}
