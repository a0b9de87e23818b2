"""Every rule in queries/rules/ fires on a sample and stays silent on another: one row per rule.

A row names the database (sample sets in tests/support/rule_dbs.py), the file and launch ordinal where the rule
fires, and a file where it must stay silent (a near miss where one exists: the same engine, the same
feature healthy or configured away). Rules with no sample yet are listed in NO_SAMPLE_YET, which the
test prints, so the gap stays visible. The key numbers of each finding are pinned in test_rule_values.py.
"""
from __future__ import annotations


import pytest

from support.paths import ROOT

DGX = "vllm__sostrowsk__dgx-spark-local-llm__"
NOHUP = "vllm__mrpid12org__imageworks__nohup.out"
BOOTFAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log"

#: rule -> ((database, file, ordinal) where it fires, (database, file) where it stays silent)
TABLE: dict[str, tuple[tuple[str, str, int], tuple[str, str]]] = {
    # A. CUDA graphs / execution mode
    "sgl_decode_above_cuda_graph_bs": (("samples", "sglang_v0.4.8_dp.log", 1), ("samples", "sglang_tuned_v1.log")),
    "sgl_cuda_graph_disabled": (("samples", "sglang_disable_cuda_graph.log", 1), ("samples", "sglang_tuned_v1.log")),
    "vllm_enforce_eager": (("samples", "vllm_enforce_eager_awq.log", 1), ("samples", "vllm_kimi_k25.log")),
    "vllm_decode_not_graph_covered": (("samples", "vllm_decode_not_graph_covered_fires.log", 1),
                                      ("samples", "vllm_eagle3.log")),
    "cuda_graph_capture_oom": (("samples", "sglang_capture_oom.log", 1), ("samples", "startup_oom_fires.log")),
    # B. memory, KV cache, admission
    "sgl_kv_pool_full_retract": (("samples", "sglang_v0.4.3_tp2.log", 1), ("samples", "sglang_tuned_v1.log")),
    "sgl_scheduler_too_conservative": (("samples", "sgl_scheduler_too_conservative_fires.log", 1),
                                       ("samples", "sglang_eagle3.log")),
    "sgl_mem_fraction_too_low": (("samples", "sglang_not_enough_memory.log", 1), ("samples", "sglang_baseline.log")),
    "sgl_mem_fraction_too_high": (("samples", "sgl_mem_fraction_too_high_fires.log", 1),
                                  ("samples", "sglang_tuned_v1.log")),
    "vllm_preemption": (("samples", "vllm_v0_0.5.4.log", 1), ("samples", "vllm_kimi_k25.log")),
    "vllm_kv_too_small_for_max_model_len": (("samples", "vllm_kv_too_small.log", 1), ("samples", "vllm_kimi_k25.log")),
    "vllm_max_concurrency_below_target": (("samples", "vllm_v1_0.10.1_workers.log", 1),
                                          ("samples", "vllm_kimi_k25.log")),
    "hybrid_kv_pool_below_context": (("truth", "sglang_hybrid_kv_pool.log", 1), ("samples", "sglang_tuned_v1.log")),
    "sgl_kv_capacity_vs_context": (("samples", "sglang_baseline.log", 2), ("samples", "sglang_tuned_v1.log")),
    "request_exceeds_context": (("samples", "vllm_v0_0.6.6_prefix_cache.log", 1), ("samples", "vllm_kimi_k25.log")),
    "queue_saturation": (("samples", "vllm_v1_0.10.1_workers.log", 1), ("samples", "sglang_eagle3.log")),
    "running_pinned_at_cap": (("samples", "sglang_eagle3.log", 1), ("samples", "vllm_kimi_k25.log")),
    "engine_stalled_with_waiting": (("samples", "engine_stalled_with_waiting_fires.log", 1),
                                    ("samples", "vllm_kimi_k25.log")),
    # C. speculative decoding
    "sgl_spec_max_running_48": (("samples", "sglang_eagle3.log", 1), ("samples", "sglang_tuned_v1.log")),
    "spec_low_acceptance": (("samples", "sglang_eagle3.log", 1), ("samples", "sglang_v0.5.4_fwd_counter.log")),
    "spec_at_high_concurrency": (("samples", "sglang_eagle3.log", 1), ("samples", "vllm_eagle3.log")),
    "sgl_spec_overlap_disabled": (("samples", "sglang_eagle3.log", 1), ("samples", "sglang_tuned_v1.log")),
    # D. kernel / backend selection
    "vllm_attention_backend_fallback": (("corpus", NOHUP, 2), ("corpus", "vllm__amdgoose__arno_vllm_chat__vllm_server.log")),
    # MANIFEST expects BAS1 too, but its GPU is unknown (no MoE config line before the kill): launch 2 only
    "sgl_mla_triton_fallback_non_sm100": (("story", "sglang_baseline.log", 2), ("story", "sglang_tuned_v1.log")),
    "fp8_kv_backend_fallback": (("samples", "fp8_kv_backend_fallback_fires.log", 1), ("samples", "sglang_tuned_v1.log")),
    "quant_kernel_not_optimized": (("samples", "vllm_enforce_eager_awq.log", 1), ("samples", "vllm_kimi_k25.log")),
    "fp8_weight_only_marlin": (("samples", "fp8_weight_only_marlin_fires.log", 1), ("samples", "vllm_kimi_k25.log")),
    "moe_untuned_kernel_config": (("samples", "sglang_tuned_v1.log", 1), ("samples", "vllm_kimi_k25.log")),
    "vllm_cudagraph_mode_downgraded": (("truth", "vllm_eagle3_k2_low.log", 1), ("truth", "vllm_eagle3_k3_healthy.log")),
    "rocm_aiter_jit_build": (("truth", "vllm_rocm_aiter_jit.log", 1), ("truth", "vllm_eagle3_k3_healthy.log")),
    "dtype_downcast_fp16": (("corpus", "sglang__TianyangChen357__LLM__sglang.log", 1), ("samples", "vllm_kimi_k25.log")),
    # start-up failure causes
    "startup_free_memory_below_utilization": (("corpus", NOHUP, 1), ("samples", "vllm_kimi_k25.log")),
    "startup_oom": (("samples", "startup_oom_fires.log", 1), ("samples", "sglang_capture_oom.log")),
    "illegal_memory_access": (("samples", "vllm_illegal_memory_access.log", 1), ("samples", "vllm_kimi_k25.log")),
    "startup_exception": (("corpus", BOOTFAIL, 1), ("samples", "vllm_kv_too_small.log")),
    "died_without_error": (("corpus", DGX + "vllm-run1-oom.log", 1), ("samples", "vllm_planned_shutdown.log")),
    "engine_crashed": (("truth", "vllm_engine_core_died.log", 1), ("truth", "vllm_eagle3_k3_healthy.log")),
    # E. multi-GPU communication
    "custom_allreduce_disabled": (("story", "sglang_baseline.log", 1), ("story", "sglang_tuned_v1.log")),
    "nccl_untuned_pcie_tp": (("story", "sglang_baseline.log", 2), ("story", "sglang_tuned_v1.log")),
    "nccl_watchdog_timeout": (("others", "nccl_watchdog_timeout_fires.log", 1), ("story", "vllm_kimi_k25.log")),
    "sgl_watchdog_timeout": (("others", "sglang_2026_ms_hybrid.log", 1), ("story", "sglang_tuned_v1.log")),
    # F. start-up time
    "long_weight_loading": (("story", "sglang_tuned_v1.log", 1), ("others", "sglang_disable_cuda_graph.log")),
    "torch_compile_cold_start": (("story", "vllm_kimi_k25.log", 1), ("corpus", DGX + "vllm.log")),
    "jit_kernel_compile_stall": (("corpus", DGX + "qwen36.log", 1), ("story", "vllm_kimi_k25.log")),
    # G. caching, prefill, scheduling
    "low_prefix_cache_hit": (("corpus", "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out", 1),
                             ("others", "vllm_v0_0.6.6_prefix_cache.log")),
    "prefix_cache_disabled": (("others", "vllm_v0_0.5.4.log", 1), ("corpus", "vllm__0324wy__MapCoder__vllm.log")),
    "chunked_prefill_misfit": (("others", "chunked_prefill_misfit_fires.log", 1), ("story", "sglang_baseline.log")),
    "sgl_single_stream_continuous_decode": (("story", "sglang_baseline.log", 2), ("story", "sglang_tuned_v1.log")),
    "sampling_defaults_overridden": (("corpus", "vllm__vllm-project__production-stack__vllm_server.log", 1),
                                     ("story", "vllm_kimi_k25.log")),
    # H. benchmark blocks
    "bench_failed_requests": (("others", "bench_vllm_0.14_spec.txt", 1), ("story", "bench_sglang_tuned_v1_c128.txt")),
    "bench_concurrency_not_reached": (("others", "bench_concurrency_not_reached_fires.log", 1),
                                      ("story", "bench_vllm_kimi_k25_c128.txt")),
    # cross-run
    "vllm_chat_template_differs": (("truth", "vllm_eagle3_k2_low.log", 1), ("truth", "vllm_eagle3_k3_healthy.log")),
    "single_stream_below_reference": (("story", "sglang_tuned_v1.log", 1), ("story", "vllm_kimi_k25.log")),
}

#: rules that have no sample where they fire yet (printed by test_every_rule_has_a_row)
NO_SAMPLE_YET: set[str] = set()

#: rules over telemetry: their fires/silent pairs run on generated run folders (a real log plus
#: same-minute scrapes, GPU loops, bench JSON and NCCL output) in tests/telemetry/test_rules.py
TESTED_ELSEWHERE: dict[str, str] = {r: "tests/telemetry/test_rules.py" for r in (
    "telemetry_gpu_idle_while_queued", "telemetry_gpu_throttled", "telemetry_pcie_link_degraded",
    "telemetry_gpu_memory_headroom", "telemetry_ttft_queueing", "telemetry_spec_acceptance_mismatch",
    "telemetry_preemption_burst", "nccl_transport_below_topology", "nccl_env_not_honoured")}


def shipped_rules() -> list[str]:
    """Rule ids of queries/rules/*.sql (the id is the file name)."""
    return sorted(p.stem for p in (ROOT / "queries" / "rules").glob("*.sql"))


def test_every_rule_has_a_row():
    rules = set(shipped_rules())
    missing = rules - TABLE.keys() - NO_SAMPLE_YET - TESTED_ELSEWHERE.keys()
    print(f"\nrules without a sample yet ({len(NO_SAMPLE_YET)}): {', '.join(sorted(NO_SAMPLE_YET)) or 'none'}")
    assert not missing, (f"rules with neither a row in TABLE nor an entry in NO_SAMPLE_YET: {sorted(missing)}; "
                         "add a sample where each fires and one where it stays silent")
    assert not (TABLE.keys() - rules), f"rows for rules that no longer exist: {sorted(TABLE.keys() - rules)}"
    assert not (TABLE.keys() & NO_SAMPLE_YET), "a rule with a row is not 'without a sample'"


@pytest.mark.parametrize("rule", sorted(TABLE))
def test_fires(rule, request):
    (db_name, name, ordinal), _ = TABLE[rule]
    db = request.getfixturevalue(db_name)
    found = db.of(rule, name, ordinal)
    assert found, f"{rule} does not fire on {name} (launch {ordinal}) in the {db_name} database"
    for f in found:
        assert f.severity in ("critical", "warning", "info") and f.title and f.line_no


@pytest.mark.parametrize("rule", sorted(TABLE))
def test_stays_silent(rule, request):
    _, (db_name, name) = TABLE[rule]
    db = request.getfixturevalue(db_name)
    assert any(n == name for n, _ in db.runs), f"{name} is not in the {db_name} database"
    assert db.of(rule, name) == [], [f.title for f in db.of(rule, name)]
