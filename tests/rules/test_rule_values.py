"""The key numbers of each rule's finding: run, evidence line, values, severity, title wording.

Each rule has a sample where it fires and the near misses where it must not (the presence/absence
summary of every rule is tests/rules/test_rule_table.py). Databases: tests/rules/conftest.py.
Samples: the story (tests/samples/*.log, expected findings in tests/samples/MANIFEST.md), the era
samples (tests/samples/eras/), authored samples (tests/samples/rules/, provenance in its README) and
the real corpus.
"""
from __future__ import annotations

import pytest

DGX = "vllm__sostrowsk__dgx-spark-local-llm__"
R9700 = "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log"
A1_TAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log"
BOOTFAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log"



# ---------------------------------------------------------------- A. CUDA graphs / execution mode

def test_decode_above_graph_ceiling_critical_when_most_lines_run_eager(samples):
    f = samples.one("sgl_decode_above_cuda_graph_bs", "sglang_v0.4.8_dp.log")
    assert f.severity == "critical" and f.line_no == 203
    # every DP rank's scheduler prints its own decode lines (4 ranks: 4 x 24 of 4 x 46)
    assert f.values["ceiling"] == 32 and f.values["n_above"] == 96 and f.values["n_busy"] == 184
    assert f.values["share_pct"] == pytest.approx(52.2)
    assert "cuda graph: False" in f.evidence and "#running-req: 36" in f.evidence


def test_decode_above_graph_ceiling_warning_without_the_graph_field(samples):
    # v0.4.3 prints no `cuda graph:` field: lines above the captured ceiling (160) are eager anyway
    f = samples.one("sgl_decode_above_cuda_graph_bs", "sglang_v0.4.3_tp2.log")
    assert f.severity == "warning" and f.line_no == 241
    assert f.values["ceiling"] == 160 and f.values["n_above"] == 11 and f.values["peak_running"] == "173"


def test_decode_above_graph_ceiling_config_only_form_is_info_for_small_ceilings(samples):
    f = samples.one("sgl_decode_above_cuda_graph_bs", "sglang_2026_ms_hybrid.log")
    assert f.severity == "info" and f.values["ceiling"] == 64 and f.values["max_running"] == "256"
    assert f.values["n_above"] == 0 and "max_running_requests=256" in f.evidence


def test_decode_above_graph_ceiling_silent_with_a_large_ceiling_or_equal_cap(samples):
    # 4096 > 512 on TUN/BAS2 is not flagged (MANIFEST); 48 == 48 in the EAGLE-3 run
    for name in ("sglang_tuned_v1.log", "sglang_baseline.log", "sglang_eagle3.log"):
        assert samples.of("sgl_decode_above_cuda_graph_bs", name) == []


def test_sgl_cuda_graph_disabled(samples):
    f = samples.one("sgl_cuda_graph_disabled", "sglang_disable_cuda_graph.log")
    assert f.severity == "critical" and f.line_no == 2
    assert f.values["how"] == "disable_cuda_graph=True" and f.values["n_eager"] == f.values["n_busy"] == 79
    assert samples.of("sgl_cuda_graph_disabled", "sglang_tuned_v1.log") == []


def test_vllm_enforce_eager(samples):
    f = samples.one("vllm_enforce_eager", "vllm_enforce_eager_awq.log")
    assert f.severity == "critical" and f.line_no == 3 and "cli args" in f.values["how"]
    assert "'enforce_eager': True" in f.evidence
    assert samples.of("vllm_enforce_eager", "vllm_kimi_k25.log") == []  # enforce_eager=False


def test_vllm_decode_not_graph_covered_spec_tokens(samples):
    f = samples.one("vllm_decode_not_graph_covered", "vllm_decode_not_graph_covered_fires.log")
    assert f.severity == "critical" and f.line_no == 31
    assert (f.values["max_num_seqs"], f.values["tokens_per_seq"], f.values["needed"], f.values["ceiling"]) == (6, 7, 42, 40)
    assert f.values["n_above"] == 10 and f.values["n_busy"] == 13
    # vLLM eagle3: 128 x 4 = 512 = capture 512; Kimi: 128 <= 256 (MANIFEST)
    assert samples.of("vllm_decode_not_graph_covered", "vllm_eagle3.log") == []
    assert samples.of("vllm_decode_not_graph_covered", "vllm_kimi_k25.log") == []


def test_cuda_graph_capture_oom_sglang_and_vllm(samples):
    f = samples.one("cuda_graph_capture_oom", "sglang_capture_oom.log")
    assert f.severity == "critical" and f.line_no == 128 and "Capture cuda graph failed" in f.evidence
    assert "Tried to allocate 1.96 GiB" in f.values["detail"]
    g = samples.one("cuda_graph_capture_oom", "cuda_graph_capture_oom_vllm_fires.log")
    assert g.line_no == 18 and "Tried to allocate 512.00 MiB" in g.values["detail"]
    # an OOM in the profiling run (before capture) is startup_oom, not this rule
    assert samples.of("cuda_graph_capture_oom", "startup_oom_fires.log") == []


# ---------------------------------------------------------------- B. memory, KV cache, admission

def test_kv_pool_full_retract_sustained_is_critical(samples):
    f = samples.one("sgl_kv_pool_full_retract", "sglang_v0.4.3_tp2.log")
    assert f.severity == "critical" and f.line_no == 260
    # one round per retraction on TP0 (TP1 echoes each one): 24 rounds, 51 requests over 44 s
    assert (f.values["n_rounds"], f.values["n_reqs"], f.values["span_s"]) == (24, 51, 44)
    w = samples.one("sgl_kv_pool_full_retract", "sglang_v0.4.8_dp.log")
    assert w.severity == "warning" and w.values["n_rounds"] == 7  # one per DP rank group
    assert samples.of("sgl_kv_pool_full_retract", "sglang_tuned_v1.log") == []


def test_scheduler_too_conservative(samples):
    f = samples.one("sgl_scheduler_too_conservative", "sgl_scheduler_too_conservative_fires.log")
    assert f.severity == "info" and f.line_no == 24
    assert f.values["max_queue"] == 24 and f.values["median_usage"] == pytest.approx(0.34)
    # the EAGLE-3 queue comes from the 48 cap, not from admission (MANIFEST); retracting runs are the opposite
    assert samples.of("sgl_scheduler_too_conservative", "sglang_eagle3.log") == []
    assert samples.of("sgl_scheduler_too_conservative", "sglang_v0.4.8_dp.log") == []


def test_mem_fraction_too_low(samples):
    f = samples.one("sgl_mem_fraction_too_low", "sglang_not_enough_memory.log")
    assert f.severity == "critical" and f.line_no == 36 and "mem_fraction_static=0.6" in f.title
    w = samples.one("sgl_mem_fraction_too_low", "sglang_v0.4.8_dp.log")
    assert w.severity == "warning" and w.line_no == 48 and "24.52 GB" in w.title and "7 retraction" in w.title
    # 11.08 GB idle on BAS2 but no KV pressure (MANIFEST)
    assert samples.of("sgl_mem_fraction_too_low", "sglang_baseline.log") == []


def test_mem_fraction_too_high(samples):
    f = samples.one("sgl_mem_fraction_too_high", "sgl_mem_fraction_too_high_fires.log")
    assert f.severity == "critical" and f.line_no == 41 and "Tried to allocate 2.32 GiB" in f.title
    assert "1.62 GB" in f.title and [e["line_no"] for e in f.evidence_lines] == [11]
    assert samples.of("sgl_mem_fraction_too_high", "sglang_tuned_v1.log") == []


def test_vllm_preemption_v0_and_v1(samples):
    f = samples.one("vllm_preemption", "vllm_v0_0.5.4.log")
    assert f.severity == "critical" and f.line_no == 117 and f.values["n_preempt"] == 51
    g = samples.one("vllm_preemption", "vllm_v1_0.12_color.log")
    assert g.severity == "critical" and g.values["n_preempt"] == 33 and "Preemptions:" in g.evidence
    assert samples.of("vllm_preemption", "vllm_kimi_k25.log") == []


def test_vllm_kv_too_small_for_max_model_len(samples):
    f = samples.one("vllm_kv_too_small_for_max_model_len", "vllm_kv_too_small.log")
    assert f.severity == "critical" and f.line_no == 47 and "ValueError: To serve at least one request" in f.evidence
    assert (f.values["max_len"], f.values["need"], f.values["avail"], f.values["est_len"]) == \
        ("131072", "16.00 GiB", "6.42 GiB", "52560")
    assert samples.of("vllm_kv_too_small_for_max_model_len", "vllm_kimi_k25.log") == []


def test_vllm_max_concurrency_below_target(samples):
    f = samples.one("vllm_max_concurrency_below_target", "vllm_v1_0.10.1_workers.log")
    assert f.severity == "warning" and f.values["max_conc"] == pytest.approx(13.64)
    assert f.values["demand"] == 244 and f.values["cap_est"] == 98
    # 2.41x < 128 is only the worst case: ~153 requests of this traffic fit, KV peaks at 80 % (MANIFEST)
    assert samples.of("vllm_max_concurrency_below_target", "vllm_kimi_k25.log") == []


def test_sgl_kv_capacity_vs_context(samples):
    f = samples.one("sgl_kv_capacity_vs_context", "sglang_baseline.log", 2)
    assert f.line_no == 281 and f.values["kv_tokens"] == 212311 and f.values["context_len"] == 262144
    assert samples.of("sgl_kv_capacity_vs_context", "sglang_tuned_v1.log") == []  # --context-length 131072


def test_request_exceeds_context(samples):
    f = samples.one("request_exceeds_context", "vllm_v0_0.6.6_prefix_cache.log")
    assert f.line_no == 148 and (f.values["requested"], f.values["limit"]) == ("34817", "32768")
    assert "HTTP 400" in f.title
    assert samples.of("request_exceeds_context", "vllm_kimi_k25.log") == []


def test_queue_saturation(samples):
    f = samples.one("queue_saturation", "vllm_v1_0.10.1_workers.log")
    assert f.line_no == 148 and (f.values["q_first"], f.values["q_max"], f.values["span_s"]) == (9, 148, 170)
    g = samples.one("queue_saturation", "sglang_v0.4.3_tp2.log")
    assert g.values["q_max"] == 269 and g.values["kv_pct"] >= 90
    # a transient admission ramp (Waiting 53 once) and the cap-bound SE3 queue are not saturation
    assert samples.of("queue_saturation", "vllm_kimi_k25.log") == []
    assert samples.of("queue_saturation", "sglang_eagle3.log") == []


def test_running_pinned_at_cap(samples):
    f = samples.one("running_pinned_at_cap", "sglang_eagle3.log")
    assert f.line_no == 552 and f.values["cap"] == 48 and f.values["n_pinned"] == 56
    assert f.values["max_queue"] == 80 and f.values["kv_pct"] < 30
    # vLLM Kimi runs at its cap 128 with nobody waiting
    assert samples.of("running_pinned_at_cap", "vllm_kimi_k25.log") == []


def test_engine_stalled_with_waiting(samples):
    f = samples.one("engine_stalled_with_waiting", "engine_stalled_with_waiting_fires.log")
    assert f.severity == "critical" and f.line_no == 30
    assert "5 stats interval(s)" in f.title and "262144" in f.title and "76640" in f.title
    assert samples.of("engine_stalled_with_waiting", "vllm_kimi_k25.log") == []


# ---------------------------------------------------------------- C. speculative decoding

def test_spec_max_running_48(samples):
    f = samples.one("sgl_spec_max_running_48", "sglang_eagle3.log")
    assert f.severity == "critical" and f.line_no == 7 and f.values["cap"] == 48
    assert "56 decode lines" in f.title and "80 requests" in f.title
    assert samples.of("sgl_spec_max_running_48", "sglang_tuned_v1.log") == []


def test_spec_low_acceptance_reports_one_rate_for_both_engines(samples):
    # one vocabulary: k drafted per step, per-token draft acceptance (accept_len - 1) / k
    s = samples.one("spec_low_acceptance", "sglang_eagle3.log")
    assert s.severity == "warning" and s.values["accept_len"] == pytest.approx(1.67, abs=0.02)
    assert s.values["k"] == 3 and s.values["draft_rate_pct"] == pytest.approx(22.4, abs=0.1)
    assert "3 drafted per step" in s.title and "per-token draft acceptance 22.4 %" in s.title
    v = samples.one("spec_low_acceptance", "vllm_eagle3.log")
    assert v.severity == "warning" and v.values["accept_len"] == pytest.approx(1.755, abs=0.01)
    assert v.values["draft_rate_pct"] == pytest.approx(25.2, abs=0.1) and "per-token draft acceptance" in v.title
    # healthy: EAGLE-3 at ~3.1 (v0.5.4), ngram 2.4 with k=3, V0 draft model ~3.0
    for name in ("sglang_v0.5.4_fwd_counter.log", "vllm_v1_0.8.5_spec.log", "vllm_v0_0.5.4.log"):
        assert samples.of("spec_low_acceptance", name) == []


def test_spec_at_high_concurrency(samples):
    f = samples.one("spec_at_high_concurrency", "sglang_eagle3.log")
    assert f.line_no == 552 and f.values["median_high"] == 48 and f.values["n_high"] == 60
    assert samples.of("spec_at_high_concurrency", "vllm_eagle3.log") == []  # single stream only


def test_spec_overlap_disabled(samples):
    f = samples.one("sgl_spec_overlap_disabled", "sglang_eagle3.log")
    assert f.severity == "info" and f.line_no == 8 and "eagle3" in f.values["why"]
    assert samples.of("sgl_spec_overlap_disabled", "sglang_tuned_v1.log") == []


# ---------------------------------------------------------------- D. kernel / backend selection

def test_fp8_kv_backend_fallback(samples):
    f = samples.one("fp8_kv_backend_fallback", "fp8_kv_backend_fallback_fires.log")
    assert f.line_no == 2 and f.values["kv_dtype"] == "fp8_e5m2" and "triton" in f.title
    assert samples.of("fp8_kv_backend_fallback", "sglang_tuned_v1.log") == []


def test_quant_kernel_not_optimized(samples):
    f = samples.one("quant_kernel_not_optimized", "vllm_enforce_eager_awq.log")
    assert f.severity == "critical" and f.line_no == 6 and "awq_marlin" in f.title
    assert samples.of("quant_kernel_not_optimized", "vllm_kimi_k25.log") == []


def test_fp8_weight_only_marlin(samples):
    f = samples.one("fp8_weight_only_marlin", "fp8_weight_only_marlin_fires.log")
    assert f.severity == "info" and f.line_no == 12 and "Marlin" in f.evidence
    assert samples.of("fp8_weight_only_marlin", "vllm_kimi_k25.log") == []


def test_moe_untuned_kernel_config(samples):
    f = samples.one("moe_untuned_kernel_config", "sglang_tuned_v1.log")
    assert f.severity == "warning" and f.line_no == 335 and f.values["n_lines"] == 8
    assert "E=384,N=256,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition" in f.values["example"]
    g = samples.one("moe_untuned_kernel_config", "vllm_moe_untuned.log")
    assert "NVIDIA_GB10" in g.values["device"]
    assert samples.of("moe_untuned_kernel_config", "vllm_kimi_k25.log") == []


# ---------------------------------------------------------------- start-up failure causes

def test_startup_oom_names_the_phase(samples):
    f = samples.one("startup_oom", "startup_oom_fires.log")
    assert f.severity == "critical" and f.line_no == 26 and "after torch.compile" in f.values["stage"]
    assert "Tried to allocate 2.32 GiB" in f.values["detail"]
    # OOM during capture is cuda_graph_capture_oom; the SGLang "Not enough memory" is sgl_mem_fraction_too_low
    assert samples.of("startup_oom", "sglang_capture_oom.log") == []
    assert samples.of("startup_oom", "cuda_graph_capture_oom_vllm_fires.log") == []
    assert samples.of("startup_oom", "sglang_not_enough_memory.log") == []


def test_illegal_memory_access(samples):
    f = samples.one("illegal_memory_access", "vllm_illegal_memory_access.log")
    assert f.severity == "critical" and "illegal memory access" in f.evidence and "while serving" in f.title
    assert samples.of("illegal_memory_access", "vllm_kimi_k25.log") == []


def test_specific_causes_are_not_repeated_as_generic_exceptions(samples):
    for name in ("vllm_kv_too_small.log", "sglang_capture_oom.log", "sglang_not_enough_memory.log",
                 "startup_oom_fires.log", "cuda_graph_capture_oom_vllm_fires.log"):
        assert samples.of("startup_exception", name) == [], name



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



# ---------------------------------------------------------------- the real corpus

def test_corpus_dflash_low_acceptance_scales_with_the_chain(corpus):
    f = corpus.one("spec_low_acceptance", DGX + "vllm.log")
    # ~1.96 tokens per step is above 1.8 but poor for 15 drafts per step (6.4 % accepted)
    assert f.values["accept_len"] == pytest.approx(1.96, abs=0.02) and f.values["draft_rate_pct"] == pytest.approx(6.4)
    assert "15 drafted per step" in f.title


def test_corpus_failure_causes_name_the_cause(corpus):
    f = corpus.one("startup_free_memory_below_utilization", "vllm__mrpid12org__imageworks__nohup.out")
    assert f.line_no == 50 and (f.values["free_gib"], f.values["total_gib"], f.values["util"]) == (13.58, 15.99, 0.85)
    b = corpus.one("startup_exception", BOOTFAIL)
    assert b.line_no == 20 and b.values["exc_type"] == "CompilationError"
    assert "fp8e4nv not supported in this architecture" in b.title
    t = corpus.one("startup_exception", A1_TAIL)
    assert t.line_no == 58 and t.values["exc_type"] == "RuntimeError" and "CUDA-graph capture" in t.title
    d = corpus.one("died_without_error", DGX + "vllm-run1-oom.log")
    assert d.line_no == 124 and "after torch.compile" in d.title and "torch.compile took" in d.evidence
    s = corpus.one("died_without_error", "sglang__TianyangChen357__LLM__sglang.log")
    assert s.line_no == 58 and "inside CUDA-graph capture" in s.title
