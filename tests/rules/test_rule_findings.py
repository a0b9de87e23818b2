"""The exact findings on the story and on the real corpus, and the golden JSON of `logsleuth diagnose`.

These pin what must fire and, as importantly, what must not (planned shutdowns, idle servers, healthy
speculative decoding, pooling models, ROCm defaults). RULES_A are diagnostics.md sections A-D (R01-R27,
R43) and the start-up failure causes, RULES_B sections E-H and the cross-run rule (R28-R42); the rules
added since are pinned per rule in test_rule_table.py.
"""
from __future__ import annotations

import json
import os

import pytest

from support.paths import GOLDEN as GOLDEN_DIR
from support.paths import SAMPLES
from support.rule_dbs import STORY_FILES, STORY_SERVERS

GOLDEN = GOLDEN_DIR / "diagnose_story.json"
RULES_A = [
    # A. CUDA graphs / execution mode
    "sgl_decode_above_cuda_graph_bs", "sgl_cuda_graph_disabled", "vllm_enforce_eager",
    "vllm_decode_not_graph_covered", "cuda_graph_capture_oom",
    # B. memory, KV cache, admission
    "sgl_kv_pool_full_retract", "sgl_scheduler_too_conservative", "sgl_mem_fraction_too_low",
    "sgl_mem_fraction_too_high", "vllm_preemption", "vllm_kv_too_small_for_max_model_len",
    "vllm_max_concurrency_below_target", "sgl_kv_capacity_vs_context", "request_exceeds_context",
    "queue_saturation", "running_pinned_at_cap", "engine_stalled_with_waiting",
    # C. speculative decoding
    "sgl_spec_max_running_48", "spec_low_acceptance", "spec_at_high_concurrency", "sgl_spec_overlap_disabled",
    # D. kernel / backend selection
    "vllm_attention_backend_fallback", "fp8_kv_backend_fallback", "quant_kernel_not_optimized",
    "fp8_weight_only_marlin", "moe_untuned_kernel_config", "dtype_downcast_fp16",
    # start-up failure causes
    "startup_free_memory_below_utilization", "startup_oom", "illegal_memory_access", "startup_exception",
    "died_without_error",
]
RULES_B = [
    "custom_allreduce_disabled", "nccl_untuned_pcie_tp", "nccl_watchdog_timeout", "sgl_watchdog_timeout",
    "long_weight_loading", "torch_compile_cold_start", "jit_kernel_compile_stall",
    "low_prefix_cache_hit", "prefix_cache_disabled", "chunked_prefill_misfit",
    "sgl_single_stream_continuous_decode", "sampling_defaults_overridden",
    "bench_failed_requests", "bench_concurrency_not_reached", "single_stream_below_reference",
]
DGX = "vllm__sostrowsk__dgx-spark-local-llm__"
R9700 = "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log"
A1_TAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log"
BOOTFAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log"


# ---------------------------------------------------------------- the story (tests/samples/MANIFEST.md)

STORY_EXPECTED_A = {
    ("moe_untuned_kernel_config", "sglang_baseline.log", 2, "warning"),
    ("moe_untuned_kernel_config", "sglang_tuned_v1.log", 1, "warning"),
    ("moe_untuned_kernel_config", "sglang_eagle3.log", 1, "warning"),
    ("sgl_kv_capacity_vs_context", "sglang_baseline.log", 2, "warning"),
    ("sgl_spec_max_running_48", "sglang_eagle3.log", 1, "critical"),
    ("running_pinned_at_cap", "sglang_eagle3.log", 1, "warning"),
    ("spec_at_high_concurrency", "sglang_eagle3.log", 1, "warning"),
    ("sgl_spec_overlap_disabled", "sglang_eagle3.log", 1, "info"),
    ("spec_low_acceptance", "sglang_eagle3.log", 1, "warning"),
    ("spec_low_acceptance", "vllm_eagle3.log", 1, "warning"),
}


def test_story_gives_exactly_the_manifest_findings(samples):
    # MANIFEST "Must stay silent": the config-only graph ceiling (4096 > 512), the 2.41x worst-case
    # concurrency of the vLLM run, TRITON_MLA on SM120, the cap-caused queue of the EAGLE-3 run ...
    assert samples.keys(STORY_SERVERS, RULES_A) == STORY_EXPECTED_A


def test_planned_shutdown_is_not_a_failure(samples):
    # EngineDeadError after `Shutting down`: no failure-cause finding (nor any other of RULES_A) at all
    assert samples.keys({"vllm_planned_shutdown.log"}, RULES_A) == set()


#: (rule, file, launch ordinal, severity): the story's findings for these rules
STORY_EXPECTED_B = {
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
    assert story.keys(rules=RULES_B) == STORY_EXPECTED_B



# ---------------------------------------------------------------- the real corpus

#: (rule, file, launch ordinal, severity) — the findings of these rules on the real corpus
CORPUS_EXPECTED_A = {
    ("died_without_error", "sglang__TianyangChen357__LLM__sglang.log", 1, "critical"),
    ("died_without_error", DGX + "vllm-run1-oom.log", 1, "critical"),
    ("dtype_downcast_fp16", "sglang__TianyangChen357__LLM__sglang.log", 1, "warning"),
    ("dtype_downcast_fp16", "vllm__amdgoose__arno_vllm_chat__vllm_server.log", 1, "warning"),
    ("dtype_downcast_fp16", "vllm__zjpzhao__vllm-qwen3vl-cu118-t4__vllm_server.log", 1, "warning"),
    ("moe_untuned_kernel_config", "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out", 1, "warning"),
    ("quant_kernel_not_optimized", R9700, 1, "info"),
    ("sgl_cuda_graph_disabled", R9700, 1, "critical"),
    ("sgl_decode_above_cuda_graph_bs", "sglang__BBuf__sglang__openai_api.ipynb-outputs.log", 1, "warning"),
    ("sgl_decode_above_cuda_graph_bs", "sglang__udbhav-ag__SGLang_setup__sglang.log", 1, "info"),
    ("sgl_kv_capacity_vs_context", "sglang__udbhav-ag__SGLang_setup__sglang.log", 1, "warning"),
    ("sgl_mem_fraction_too_low", "sglang__udbhav-ag__SGLang_setup__sglang.log", 1, "warning"),
    ("spec_low_acceptance", DGX + "vllm.log", 1, "warning"),
    ("startup_exception", A1_TAIL, 1, "critical"),
    ("startup_exception", BOOTFAIL, 1, "critical"),
    ("startup_free_memory_below_utilization", "vllm__mrpid12org__imageworks__nohup.out", 1, "critical"),
    ("vllm_attention_backend_fallback", "vllm__mrpid12org__imageworks__nohup.out", 2, "info"),
    ("vllm_attention_backend_fallback", "vllm__vllm-project__production-stack__vllm_server.log", 1, "info"),
    ("vllm_attention_backend_fallback", "vllm__zjpzhao__vllm-qwen3vl-cu118-t4__vllm_server.log", 1, "warning"),
    ("vllm_enforce_eager", "vllm__vllm-project__production-stack__vllm_server.log", 1, "critical"),
}


def test_corpus_findings_are_exactly_the_expected_ones(corpus):
    assert corpus.keys(rules=RULES_A) == CORPUS_EXPECTED_A


def test_corpus_false_alarms_stay_away(corpus):
    # healthy MTP (mean acceptance ~2.8-4.0) is silent; the DFlash shutdown EngineDeadError is no crash
    assert corpus.of("spec_low_acceptance", DGX + "qwen36.log") == []
    for rule in ("illegal_memory_access", "startup_exception", "died_without_error"):
        assert corpus.of(rule, DGX + "vllm.log") == []
    # idle V0 servers, the embedding server run eagerly on purpose, ROCm's Triton attention
    assert corpus.keys({"vllm__leadawon__structrag__vllm.log", "vllm__0324wy__MapCoder__vllm.log"}, RULES_A) == set()
    assert corpus.of("vllm_enforce_eager", "vllm__zjpzhao__vllm-qwen3vl-cu118-t4__vllm_server.log") == []
    assert corpus.of("vllm_attention_backend_fallback", "vllm__amdgoose__arno_vllm_chat__vllm_server.log") == []


#: file -> the rules of this module that fire on it (all other rules stay silent on every file)
CORPUS_EXPECTED_B = {
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
    # issue 12: TP4 launched with disable_custom_all_reduce=True (no warning printed), and 17 shards
    # in 7 min 52 s seen only on the shard bar (V0 prints the weights' size, not the time)
    "vllm__leadawon__structrag__vllm.log": {"custom_allreduce_disabled", "long_weight_loading"},
}


def test_real_corpus_findings(corpus):
    assert corpus.rules_by_file(RULES_B) == CORPUS_EXPECTED_B
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
        "diagnose JSON changed; if intended, regenerate with LOGSLEUTH_UPDATE_GOLDEN=1 pytest tests/rules/test_rule_findings.py")
