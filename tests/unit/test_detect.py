"""detect(): what a file is, from its head (the first 64 KiB), scored by each grammar's detect literals."""
from __future__ import annotations

import pytest

from support.paths import SAMPLES
from support.stages import detect, grammars


def head(path) -> str:
    return path.read_bytes()[:65536].decode("utf-8", "replace")


@pytest.mark.parametrize("name, kind, engine", [
    ("sglang_baseline.log", "server_log", "sglang"),
    ("sglang_tuned_v1.log", "server_log", "sglang"),
    ("eras/sglang_v0.3_hms.log", "server_log", "sglang"),        # time-only timestamps
    ("eras/sglang_v0.4.3_tp2.log", "server_log", "sglang"),
    ("eras/sglang_ray_actor.log", "server_log", "sglang"),        # Ray actor prefixes on every line
    ("vllm_kimi_k25.log", "server_log", "vllm"),
    ("eras/vllm_v0_0.5.4.log", "server_log", "vllm"),
    ("eras/vllm_v0.31_procname.log", "server_log", "vllm"),
    ("eras/vllm_v1_0.12_color.log", "server_log", "vllm"),       # ANSI colours
    ("bench_sglang_tuned_v1_c1.txt", "bench", "bench"),           # names its backend: "Backend: sglang-oai-chat"
    ("bench_vllm_kimi_k25_c128.txt", "bench", "bench"),
    ("eras/bench_vllm_0.14_spec.txt", "bench", "bench"),
    ("env/rtxpro6000_nvidia-smi.txt", "env_report", "env"),
    ("env/rtxpro6000_topo.txt", "env_report", "env"),
    ("env/rtxpro6000_collect_env.txt", "env_report", "env"),
])
def test_samples_are_recognised(name, kind, engine):
    d = detect(head(SAMPLES / name), grammars())
    assert (d.kind, d.engine) == (kind, engine), d.scores


def test_env_reports_name_their_kind():
    d = detect(head(SAMPLES / "env" / "rtxpro6000_nvidia-smi.txt"), grammars())
    assert d.report_kind
    assert detect(head(SAMPLES / "env" / "rtxpro6000_topo.txt"), grammars()).report_kind != d.report_kind


def test_text_of_no_known_format_is_unknown():
    d = detect("hello\nthis is a shopping list\n- eggs\n- milk\n", grammars())
    assert (d.kind, d.engine) == ("unknown", "unknown")
    assert all(v == 0 for v in d.scores.values())


def test_empty_head_is_unknown():
    assert detect("", grammars()).kind == "unknown"


def test_a_server_log_that_prints_a_benchmark_result_stays_a_server_log():
    # a server log with a benchmark block pasted in: the server's own literals outweigh the title
    text = head(SAMPLES / "sglang_tuned_v1.log")
    bench = head(SAMPLES / "bench_sglang_tuned_v1_c1.txt")
    d = detect(text + "\n" + bench, grammars())
    assert (d.kind, d.engine) == ("server_log", "sglang")


def test_scores_are_counts_of_the_grammar_literals():
    text = head(SAMPLES / "vllm_kimi_k25.log")
    once = detect(text, grammars()).scores
    twice = detect(text + "\n" + text, grammars()).scores
    assert once["vllm"] > once.get("sglang", 0)
    assert twice["vllm"] == pytest.approx(2 * once["vllm"])
