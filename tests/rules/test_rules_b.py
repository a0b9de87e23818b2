"""Rules of diagnostics.md sections E-H and the cross-run rule (R28-R42).

Each rule has a sample where it fires (run, evidence line, key numbers) and one where it stays
silent. The story samples (sglang_baseline, sglang_tuned_v1, vllm_kimi_k25, their benchmark files
and the env reports) must give exactly the story's findings for these rules; every real corpus
file is diagnosed once and the rules that fire there are pinned; a golden file pins the JSON of
`logsleuth diagnose` on the story.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import logsleuth
from support.paths import CORPUS, SAMPLES, corpus_files
from support.paths import GOLDEN as GOLDEN_DIR

GOLDEN = GOLDEN_DIR / "diagnose_story.json"
RULES_B = [
    "custom_allreduce_disabled", "nccl_untuned_pcie_tp", "nccl_watchdog_timeout", "sgl_watchdog_timeout",
    "long_weight_loading", "torch_compile_cold_start", "jit_kernel_compile_stall",
    "low_prefix_cache_hit", "prefix_cache_disabled", "chunked_prefill_misfit",
    "sgl_single_stream_continuous_decode", "sampling_defaults_overridden",
    "bench_failed_requests", "bench_concurrency_not_reached", "single_stream_below_reference",
]
STORY_FILES = ["sglang_baseline.log", "sglang_tuned_v1.log", "vllm_kimi_k25.log",
               "bench_sglang_tuned_v1_c1.txt", "bench_sglang_tuned_v1_c128.txt",
               "bench_vllm_kimi_k25_c1.txt", "bench_vllm_kimi_k25_c128.txt"]
# files outside the story that the per-rule tests use (ingested together, one database)
OTHER_FILES = [
    "rules/nccl_watchdog_timeout_fires.log", "rules/chunked_prefill_misfit_fires.log",
    "rules/bench_concurrency_not_reached_fires.log",
    "eras/sglang_2026_ms_hybrid.log", "eras/vllm_v0_0.5.4.log", "eras/bench_vllm_0.14_spec.txt",
    "eras/vllm_v0_0.6.6_prefix_cache.log", "eras/sglang_disable_cuda_graph.log",
]


class Db:
    """An ingested database with its findings for RULES_B, addressed by file name and launch ordinal."""

    def __init__(self, con):
        self.con = con
        self.findings = logsleuth.diagnose(con, rule_ids=RULES_B)
        self.runs = {(name, ordinal): run_id for run_id, name, ordinal in con.execute(
            "SELECT r.run_id, s.name, r.ordinal FROM runs r JOIN sources s USING (source_id)").fetchall()}

    def run(self, name: str, ordinal: int = 1) -> int:
        return self.runs[(name, ordinal)]

    def of(self, rule: str, name: str | None = None, ordinal: int | None = None) -> list:
        out = [f for f in self.findings if f.rule_id == rule]
        if name is not None:
            run_ids = {rid for (n, o), rid in self.runs.items() if n == name and (ordinal is None or o == ordinal)}
            out = [f for f in out if f.run_id in run_ids]
        return out

    def one(self, rule: str, name: str, ordinal: int = 1):
        found = self.of(rule, name, ordinal)
        assert len(found) == 1, (rule, name, ordinal, [f.title for f in self.findings if f.rule_id == rule])
        return found[0]


def _open(tmp_path_factory, label: str, paths: list[str]) -> Db:
    con = logsleuth.open_db(str(tmp_path_factory.mktemp(label) / "db.duckdb"))
    for p in paths:  # one call per file keeps run ids in this order
        logsleuth.ingest_files(con, [p])
    return Db(con)


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    db = _open(tmp_path_factory, "story_b", [str(SAMPLES / f) for f in STORY_FILES]
               + [str(p) for p in sorted((SAMPLES / "env").iterdir())])
    yield db
    db.con.close()


@pytest.fixture(scope="module")
def others(tmp_path_factory):
    db = _open(tmp_path_factory, "others_b", [str(SAMPLES / f) for f in OTHER_FILES])
    yield db
    db.con.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    files = corpus_files()
    if not files:
        pytest.skip("real corpus not available (../shared/corpus/real)")
    db = _open(tmp_path_factory, "corpus_b", [str(p) for p in files])
    yield db
    db.con.close()


# ---------------------------------------------------------------- the story, as a whole

#: (rule, file, launch ordinal, severity): the story's findings for these rules
STORY_EXPECTED = {
    ("custom_allreduce_disabled", "sglang_baseline.log", 1, "warning"),
    ("custom_allreduce_disabled", "sglang_baseline.log", 2, "warning"),
    ("custom_allreduce_disabled", "vllm_kimi_k25.log", 1, "warning"),
    ("nccl_untuned_pcie_tp", "sglang_baseline.log", 1, "warning"),
    ("nccl_untuned_pcie_tp", "sglang_baseline.log", 2, "warning"),
    ("long_weight_loading", "sglang_baseline.log", 1, "info"),
    ("long_weight_loading", "sglang_baseline.log", 2, "info"),
    ("long_weight_loading", "sglang_tuned_v1.log", 1, "info"),
    ("long_weight_loading", "vllm_kimi_k25.log", 1, "info"),
    ("torch_compile_cold_start", "vllm_kimi_k25.log", 1, "info"),
    ("sgl_single_stream_continuous_decode", "sglang_baseline.log", 2, "info"),
    ("single_stream_below_reference", "sglang_baseline.log", 2, "warning"),
    ("single_stream_below_reference", "sglang_tuned_v1.log", 1, "info"),
}


def test_story_gives_exactly_the_story_findings(story):
    by_run = {rid: key for key, rid in story.runs.items()}
    got = {(f.rule_id, *by_run[f.run_id], f.severity) for f in story.findings}
    assert got == STORY_EXPECTED


# ---------------------------------------------------------------- E. multi-GPU communication

def test_custom_allreduce_disabled_fires_once_per_run(story):
    f = story.one("custom_allreduce_disabled", "sglang_baseline.log", 2)
    assert f.line_no == 139 and f.values["tp_size"] == 8 and f.values["n_ranks"] == 8
    assert "PCIe-only" in f.title and "Custom allreduce is disabled" in f.evidence
    assert story.one("custom_allreduce_disabled", "sglang_baseline.log", 1).line_no == 36
    assert story.one("custom_allreduce_disabled", "vllm_kimi_k25.log").line_no == 211


def test_custom_allreduce_disabled_silent_when_disabled_by_flag(story):
    # the tuned launch passes --disable-custom-all-reduce: no warning, a choice, not a finding
    assert story.of("custom_allreduce_disabled", "sglang_tuned_v1.log") == []


def test_nccl_untuned_pcie_tp_fires_on_the_untuned_baseline(story):
    f = story.one("nccl_untuned_pcie_tp", "sglang_baseline.log", 2)
    assert f.line_no == 139 and f.values["tp_size"] == 8
    assert "shell trace" in f.title and "NCCL_PROTO" in f.title


def test_nccl_untuned_pcie_tp_silent_when_nccl_env_is_set(story):
    # both export NCCL_PROTO/NCCL_ALGO/NCCL_P2P_LEVEL (shell trace and NCCL_DEBUG echoes)
    assert story.of("nccl_untuned_pcie_tp", "sglang_tuned_v1.log") == []
    assert story.of("nccl_untuned_pcie_tp", "vllm_kimi_k25.log") == []


def test_nccl_watchdog_timeout_fires_on_early_collective(others):
    f = others.one("nccl_watchdog_timeout", "nccl_watchdog_timeout_fires.log")
    assert f.severity == "critical" and f.line_no == 32
    assert f.values["seq"] == 1 and f.values["timeout_s"] == 600 and f.values["n_ranks"] == 4
    assert "peer-to-peer" in f.title and "Watchdog caught collective operation timeout" in f.evidence


def test_nccl_watchdog_timeout_silent_on_one_shm_notice_during_compile(story):
    # vllm_kimi_k25 prints one "No available shared memory broadcast block" during torch.compile
    assert story.con.execute("SELECT count(*) FROM events WHERE kind = 'shm_broadcast_wait'").fetchone()[0] == 1
    assert story.of("nccl_watchdog_timeout") == []


def test_sgl_watchdog_timeout_fires_while_serving(others):
    f = others.one("sgl_watchdog_timeout", "sglang_2026_ms_hybrid.log")
    assert f.severity == "critical" and f.line_no == 224 and f.values["timeout_s"] == 300
    assert "while serving" in f.title and "300 s before" in f.title
    assert f.evidence_lines[0]["line_no"] == 223


def test_sgl_watchdog_timeout_silent_without_watchdog(story):
    assert story.of("sgl_watchdog_timeout") == []


# ---------------------------------------------------------------- F. start-up time

def test_long_weight_loading_explains_the_killed_first_launch(story):
    f = story.one("long_weight_loading", "sglang_baseline.log", 1)
    assert f.line_no == 101 and f.values["shards_done"] == 41 and f.values["shards_total"] == 64
    relaunch = story.run("sglang_baseline.log", 2)
    for text in ("killed during weight loading at 41/64 shards (64 %) after 4 min 19 s",
                 "still advancing", "not a hang", f"relaunch in this file (run {relaunch}) loaded in 453 s (7.5 min)"):
        assert text in f.title
    assert f.evidence_lines[0]["line_no"] == 102 and "Terminated" in f.evidence_lines[0]["text"]


def test_long_weight_loading_measures_the_relaunch(story):
    f = story.one("long_weight_loading", "sglang_baseline.log", 2)
    assert f.line_no == 235 and f.values["load_s"] == 453 and f.severity == "info"
    assert f.values["gb_per_s"] == pytest.approx(1.13, abs=0.01)
    assert "512 GB" in f.title and "not a hang" in f.title and "was stopped at 41/64" in f.title
    assert story.one("long_weight_loading", "sglang_tuned_v1.log").values["load_s"] == 447
    assert story.one("long_weight_loading", "vllm_kimi_k25.log").values["load_s"] == pytest.approx(413.2)


def test_long_weight_loading_silent_on_fast_load(others):
    assert others.of("long_weight_loading", "sglang_disable_cuda_graph.log") == []


def test_torch_compile_cold_start_fires_without_cache_hit(story):
    f = story.one("torch_compile_cold_start", "vllm_kimi_k25.log")
    assert f.line_no == 325 and f.values["compile_s"] == pytest.approx(96.4)


def test_torch_compile_cold_start_silent_on_cache_hit(corpus):
    # vllm.log loads the compiled graph from the cache ("Directly load the compiled graph(s)")
    assert corpus.of("torch_compile_cold_start", "vllm__sostrowsk__dgx-spark-local-llm__vllm.log") == []


def test_jit_kernel_compile_stall_fires_on_real_warmup_gap_and_runtime_jit(corpus):
    f = corpus.one("jit_kernel_compile_stall", "vllm__sostrowsk__dgx-spark-local-llm__qwen36.log")
    assert f.line_no == 69 and f.values["gap_s"] == pytest.approx(622, abs=1) and f.values["n_jit"] == 4
    assert "while serving" in f.title
    assert [e["line_no"] for e in f.evidence_lines] == [70, 214, 215, 216, 217]


def test_jit_kernel_compile_stall_silent_on_the_story(story):
    assert story.of("jit_kernel_compile_stall") == []


# ---------------------------------------------------------------- G. caching, prefill, scheduling

def test_low_prefix_cache_hit_fires_on_prompt_heavy_traffic(corpus):
    f = corpus.one("low_prefix_cache_hit", "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out")
    assert f.severity == "info" and f.values["hit_pct"] == pytest.approx(0.9)
    assert f.values["prompt_per_output"] >= 4


def test_low_prefix_cache_hit_silent_on_random_prompts_and_healthy_cache(story, others):
    assert story.of("low_prefix_cache_hit") == []  # benchmark prompts: ~1 prompt token per output token
    assert others.of("low_prefix_cache_hit", "vllm_v0_0.6.6_prefix_cache.log") == []  # 66 % hit


def test_prefix_cache_disabled_fires_on_v0_default(others):
    f = others.one("prefix_cache_disabled", "vllm_v0_0.5.4.log")
    assert f.severity == "info" and "V0" in f.title and f.values["n_prefill"] > 0


def test_prefix_cache_disabled_silent_when_idle_or_enabled(story, corpus):
    assert story.of("prefix_cache_disabled") == []
    # MapCoder: V0 with caching off, but the server never took a request
    assert corpus.of("prefix_cache_disabled", "vllm__0324wy__MapCoder__vllm.log") == []


def test_chunked_prefill_misfit_fires_on_small_chunks(others):
    f = others.one("chunked_prefill_misfit", "chunked_prefill_misfit_fires.log")
    assert f.line_no == 33 and f.values["chunk"] == 2048 and f.values["n_prompts"] == 8


def test_chunked_prefill_misfit_silent_on_default_chunk(story):
    assert story.of("chunked_prefill_misfit") == []  # 8192-token chunks


def test_sgl_single_stream_continuous_decode(story):
    f = story.one("sgl_single_stream_continuous_decode", "sglang_baseline.log", 2)
    assert f.line_no == 295 and f.values["n_small"] == 231 and f.values["n_busy"] == 300
    assert f.values["median_tok_s"] == pytest.approx(55.0)
    assert story.of("sgl_single_stream_continuous_decode", "sglang_tuned_v1.log") == []  # steps = 4


def test_sampling_defaults_overridden_fires_on_both_engines(corpus):
    f = corpus.one("sampling_defaults_overridden", "vllm__vllm-project__production-stack__vllm_server.log")
    assert f.line_no == 33 and "'temperature': 0.6" in f.title
    f = corpus.one("sampling_defaults_overridden", "sglang__bowenwan6__sglang-vllm-profiler__sglang_server.log")
    assert "'top_k': 20" in f.title


def test_sampling_defaults_overridden_silent_on_story(story):
    assert story.of("sampling_defaults_overridden") == []


# ---------------------------------------------------------------- H. benchmark blocks

def test_bench_failed_requests_fires(others):
    f = others.one("bench_failed_requests", "bench_vllm_0.14_spec.txt")
    assert f.severity == "critical" and f.values["failed"] == 3 and f.values["sent"] == 200
    assert f.evidence_lines and f.evidence_lines[0]["text"].startswith("Failed requests:")


def test_bench_failed_requests_silent_on_clean_blocks(story):
    assert story.of("bench_failed_requests") == []


def test_bench_concurrency_not_reached_fires(others):
    f = others.one("bench_concurrency_not_reached", "bench_concurrency_not_reached_fires.log")
    assert f.line_no == 9 and f.values["max_concurrency"] == 64
    assert f.values["achieved_ratio"] == pytest.approx(0.31, abs=0.01) and "4.0 req/s" in f.title


def test_bench_concurrency_not_reached_silent_on_story_and_real_blocks(story, corpus):
    assert story.of("bench_concurrency_not_reached") == []  # 115.13 of 128, peak 128
    assert corpus.of("bench_concurrency_not_reached") == []  # 81 % / 87 % of 512; peak 16 of 8


# ---------------------------------------------------------------- cross-run

def test_single_stream_below_reference_names_best_run_and_differences(story):
    best = story.run("vllm_kimi_k25.log")
    f = story.one("single_stream_below_reference", "sglang_tuned_v1.log")
    assert f.severity == "info" and f.line_no == 396  # the single-stream line at the median (63.60)
    assert f.values["tok_s"] == pytest.approx(63.6) and f.values["best_tok_s"] == pytest.approx(82.5)
    assert f.values["best_run"] == best and f.values["gap_pct"] == 23
    assert f.title.startswith(f"Run {f.run_id} (sglang) decodes a single stream at 63.6 tok/s, 23% below run {best} "
                              "(vllm, 82.5 tok/s) on the same model; differences: attention flashinfer vs TRITON_MLA")
    f = story.one("single_stream_below_reference", "sglang_baseline.log", 2)
    assert f.severity == "warning" and f.values["gap_pct"] == 33 and f.values["tok_s"] == pytest.approx(55.0)
    assert "NCCL env none vs NCCL_ALGO=Ring, NCCL_P2P_LEVEL=SYS, NCCL_PROTO=LL" in f.values["differences"]
    assert "attention triton vs TRITON_MLA" in f.values["differences"]


def test_single_stream_below_reference_silent_on_best_and_alone(story, others):
    assert story.of("single_stream_below_reference", "vllm_kimi_k25.log") == []
    assert others.of("single_stream_below_reference") == []  # no second run of the same model


# ---------------------------------------------------------------- real corpus

#: file -> the rules of this module that fire on it (all other rules stay silent on every file)
CORPUS_EXPECTED = {
    "vllm__parallelworks__activate-rag-vllm__run.debug-00074.out":
        {"custom_allreduce_disabled", "nccl_untuned_pcie_tp", "long_weight_loading", "torch_compile_cold_start"},
    "vllm__sostrowsk__dgx-spark-local-llm__qwen36.log":
        {"torch_compile_cold_start", "jit_kernel_compile_stall", "prefix_cache_disabled",
         "sampling_defaults_overridden"},
    "vllm__sostrowsk__dgx-spark-local-llm__vllm.log":
        {"long_weight_loading", "jit_kernel_compile_stall", "sampling_defaults_overridden"},
    "vllm__sostrowsk__dgx-spark-local-llm__vllm-run1-oom.log": {"long_weight_loading", "torch_compile_cold_start"},
    "vllm__amdgoose__arno_vllm_chat__vllm_server.log": {"torch_compile_cold_start", "sampling_defaults_overridden"},
    "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out":
        {"low_prefix_cache_hit", "sampling_defaults_overridden"},
    "vllm__faradawn__bench3__vllm_server.log": {"sampling_defaults_overridden"},
    "vllm__vllm-project__production-stack__vllm_server.log": {"sampling_defaults_overridden"},
    "sglang__bowenwan6__sglang-vllm-profiler__sglang_server.log": {"sampling_defaults_overridden"},
    "sglang__udbhav-ag__SGLang_setup__sglang.log": {"sampling_defaults_overridden"},
    "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log":
        {"sampling_defaults_overridden", "sgl_single_stream_continuous_decode"},
}


def test_real_corpus_findings(corpus):
    got: dict[str, set] = {}
    names = {rid: name for (name, _), rid in corpus.runs.items()}
    for f in corpus.findings:
        got.setdefault(names[f.run_id], set()).add(f.rule_id)
    assert got == CORPUS_EXPECTED
    # the 748 s load of the OOM-killed run is past the 600 s orchestrator-like threshold
    f = corpus.one("long_weight_loading", "vllm__sostrowsk__dgx-spark-local-llm__vllm-run1-oom.log")
    assert f.severity == "warning" and f.values["load_s"] == pytest.approx(748.4)
    # three shm notices during a 191 s torch.compile: slow start-up, not a hang
    assert corpus.of("nccl_watchdog_timeout") == []


# ---------------------------------------------------------------- golden JSON of the CLI

def _normalise(findings: list) -> list:
    return json.loads(json.dumps(findings, sort_keys=True))


def test_golden_diagnose_json_on_story(cli, db_path):
    args = ["diagnose", *[str(SAMPLES / f) for f in STORY_FILES], str(SAMPLES / "env"), "--format", "json"]
    for r in RULES_B:
        args += ["--rule", r]
    r = cli(*args, db=db_path)
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode()
    assert str(SAMPLES) not in out and db_path not in out  # nothing machine-specific
    data = _normalise(json.loads(out))
    if os.environ.get("LOGSLEUTH_UPDATE_GOLDEN") or not GOLDEN.exists():
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    assert data == json.loads(GOLDEN.read_text(encoding="utf-8")), (
        "diagnose JSON changed; if intended, regenerate with LOGSLEUTH_UPDATE_GOLDEN=1 pytest tests/test_rules_b.py")
