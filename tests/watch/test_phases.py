"""The phase tracker as pure logic: observations of real/authored logs in, notices out.
No terminal, no clock: silence is passed in as log seconds."""
from __future__ import annotations

import datetime as dt

import pytest

from logsleuth.watch.history import History
from logsleuth.watch.observe import LineObserver
from logsleuth.watch.phases import SourceTracker

from support.paths import SAMPLES


def _lines(name: str) -> list[str]:
    # bytes split on \n only: a tqdm line grown with \r stays one physical line
    return (SAMPLES / name).read_bytes().decode("utf-8", "replace").split("\n")


def _feed(tracker: SourceTracker, lines: list[str], first: int) -> list[dict]:
    obs = LineObserver().observe(lines, first)
    out = []
    for o in obs:
        out += tracker.feed(o)
    return out


def _phases(notices) -> list[str]:
    return [n["phase"] for n in notices if n["event"] == "phase"]


@pytest.fixture(scope="module")
def history() -> History:
    # what sglang_tuned_v1.log's healthy starts left in the database (see tests/samples/MANIFEST.md)
    return History([{"model": "moonshotai/Kimi-K2.5", "tp_size": 8, "weight_load_s": 447.0,
                     "cuda_graph_capture_s": 96.71, "time_to_ready_s": 558.0, "single_stream_tok_s": 63.6,
                     "weights_gb": 511.6}])


def test_sglang_launch_to_serving(history):
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed", history=history)
    notices = _feed(t, lines[103:600], 104)  # run 2: a full start, then traffic
    assert _phases(notices) == ["loading_weights", "kv_cache", "cuda_graphs", "ready", "serving"]
    run = t.current
    assert run.model == "moonshotai/Kimi-K2.5" and run.tp_size == 8
    # weight phase from "Load weight begin" (10:47:13) to the last rank's "Load weight end" (10:54:45)
    assert run.phase_times["loading_weights"] == pytest.approx(452, abs=3)
    ready = next(n for n in notices if n["event"] == "phase" and n["phase"] == "ready")
    assert ready["line"] == 289 and ready["time_to_ready_s"] == pytest.approx(555, abs=15)
    # the CUDA-graph bar of this file is one physical line grown with \r: its updates were read
    graph = [n for n in notices if n["event"] == "progress" and n["what"] == "CUDA-graph capture"]
    assert graph and graph[-1]["done"] == 52 and graph[-1]["total"] == 52
    snap = t.snapshot(run, run.last_ts)
    assert snap["serving"]["running_reqs"] >= 1 and snap["cuda_graph_share"] == 1.0
    assert snap["single_stream_tok_s"] == pytest.approx(55.0, abs=1.0)
    # compared with the best earlier run of the same model: single-stream is below it
    assert any("single-stream" in c and "below the best run" in c for c in snap["compare"])


def test_seed_story_at_the_four_minute_mark(history):
    """Run 1 of the seed story: killed at 41/64 shards. At minute 4 after the launch the
    tracker must say: loading weights at about 1.1-1.3 GB/s, about 3 minutes left, not a hang."""
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed", history=history)
    obs = LineObserver().observe(lines[:101], 1)
    launch = next(o for o in obs if o.kind == "launch").ts
    for o in obs:
        t.feed(o)
        if t.last_ts and (t.last_ts - launch).total_seconds() >= 240:
            break
    run = t.current
    info = t.progress_info(run, run.bars["loading_weights"])
    assert 34 <= info["done"] <= 38 and info["total"] == 64
    assert 1.0 <= info["gb_per_s"] <= 1.5  # 511.6 GB over 64 shards at ~6.3 s per shard
    assert 150 <= info["eta_s"] <= 210  # "about 3 minutes left"
    assert info["moving"] is True
    # the weight phase will take about as long as the previous healthy start did
    assert info["projected_s"] == pytest.approx(info["previous_s"], rel=0.15)


def test_moving_bar_never_stalls_and_a_stopped_one_does(history):
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed", history=history)
    _feed(t, lines[:101], 1)  # up to 41/64, ~6.3 s per shard
    run = t.current
    gap = t.expected_gap(run)
    assert 30 <= gap <= 60  # a few of the bar's own intervals, not minutes
    # silences as long as the longest the bar ever had between updates: no notice
    ups = list(run.bars["loading_weights"].updates)
    longest = max(b[0] - a[0] for a, b in zip(ups, ups[1:]))
    assert t.check(run.last_ts, longest) == []
    # the server killed (no more lines): stalled, naming the phase and the last line
    stalled = t.check(run.last_ts + dt.timedelta(seconds=120), 120.0)
    assert len(stalled) == 1
    n = stalled[0]
    assert n["event"] == "stalled" and n["phase"] == "loading_weights" and n["title"] == "loading weights"
    assert "41/64" in n["message"] or "40/64" in n["message"]
    assert t.check(run.last_ts + dt.timedelta(seconds=180), 180.0) == []  # said once
    assert t.resumed()[0]["event"] == "resumed"


def test_phase_without_bar_uses_the_previous_run_and_a_floor(history):
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed", history=history)
    _feed(t, lines[103:260], 104)  # into CUDA-graph capture, before its bar line
    run = t.current
    assert run.phase == "cuda_graphs"
    assert t.expected_gap(run) >= 1.5 * 96.71  # the previous run's capture took 97 s
    assert t.check(run.last_ts, 100.0) == []


def test_idle_server_is_not_stalled():
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed")
    _feed(t, lines[103:300], 104)
    run = t.current
    assert run.phase in ("ready", "serving")
    if run.serving.get("running_reqs", 0) == 0:
        assert t.expected_gap(run) is None
        assert t.check(run.last_ts, 3600.0) == []


def test_crash_during_graph_capture():
    lines = _lines("eras/sglang_capture_oom.log")
    t = SourceTracker("oom")
    notices = _feed(t, lines, 1)
    assert _phases(notices)[:2] == ["loading_weights", "kv_cache"]
    end = [n for n in notices if n["event"] == "end"]
    assert end and end[0]["state"] == "crashed" and end[0]["during"] == "CUDA-graph capture"
    errors = [n for n in notices if n["event"] == "error" and n["fatal"]]
    assert errors and errors[0]["line"] == end[0]["line"]
    assert t.current.ended == "crashed"
    assert t.check(t.current.last_ts, 9999.0) == []  # an ended run does not stall


def test_vllm_start_phases():
    lines = _lines("vllm_kimi_k25.log")
    t = SourceTracker("vllm")
    notices = _feed(t, lines, 1)
    phases = _phases(notices)
    assert phases[0] == "loading_weights"
    assert "ready" in phases and phases.index("ready") > phases.index("loading_weights")
    assert "compiling" in phases and "cuda_graphs" in phases
    run = t.current
    assert run.model == "moonshotai/Kimi-K2.5" and run.tp_size == 8


def test_status_notices_at_each_interval(history):
    lines = _lines("sglang_baseline.log")
    t = SourceTracker("seed", history=history)
    obs = LineObserver().observe(lines[:101], 1)
    statuses = []
    for o in obs:
        t.feed(o)
        statuses += t.status(t.last_ts, 60.0)
    marks = [int(s["since_launch_s"] // 60) for s in statuses]
    assert marks == sorted(set(marks)) and marks[:4] == [1, 2, 3, 4]
    assert all(s["phase"] == "loading_weights" for s in statuses[1:])
    four = next(s for s in statuses if s["since_launch_s"] >= 240)
    assert "not a hang" in four["text"] and "GB/s" in four["text"]


def test_history_prefers_the_same_gpu_once_known():
    h = History([{"model": "org/M", "tp_size": 8, "gpu_name": "H100", "weight_load_s": 100.0},
                 {"model": "/models/M", "tp_size": 8, "gpu_name": "B200", "weight_load_s": 50.0},
                 {"model": "org/M", "tp_size": 4, "gpu_name": "H100", "weight_load_s": 300.0}])
    assert h.phase_seconds("M", 8, "loading_weights") == 50.0  # the latest of the model at TP 8
    h.gpu["m"] = "H100"  # the database learned the live run's GPU
    assert h.phase_seconds("M", 8, "loading_weights") == 100.0
    assert h.phase_seconds("M", 2, "loading_weights") is None


def test_a_new_launch_ends_the_killed_run():
    """sglang_baseline.log appends a second launch after the first was killed (bash's
    "Terminated" job line is the only trace): two runs, the first ended as superseded."""
    t = SourceTracker("seed")
    notices = _feed(t, _lines("sglang_baseline.log"), 1)
    runs = [n for n in notices if n["event"] == "run"]
    assert [r["line"] for r in runs] == [5, 108]
    end = next(n for n in notices if n["event"] == "end")
    assert end["run"] == 1 and end["state"] == "superseded" and end["line"] == 108
    assert t.runs[0].phase_times["loading_weights"] > 200
    assert t.current.phase == "stopped"  # the file ends with the graceful shutdown
