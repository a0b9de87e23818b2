"""The sample sets the rule tests diagnose, by database name (built by tests/rules/conftest.py).

* ``story``: the story (SGLang baseline and tuned, vLLM Kimi, their benchmark files) and the env reports;
* ``samples``: the story's server logs, the EAGLE-3 runs, the era samples and the authored rule samples;
* ``others``: authored and era samples for rules the story cannot show;
* ``truth``: the samples of tests/samples/truth/ (crash causes, hardware, rules added with them);
* ``corpus``: every real corpus file (empty when the corpus is not available).
"""
from __future__ import annotations

from support.paths import SAMPLES, corpus_files

STORY_FILES = ["sglang_baseline.log", "sglang_tuned_v1.log", "vllm_kimi_k25.log",
               "bench_sglang_tuned_v1_c1.txt", "bench_sglang_tuned_v1_c128.txt",
               "bench_vllm_kimi_k25_c1.txt", "bench_vllm_kimi_k25_c128.txt"]
STORY_SERVERS = ["sglang_baseline.log", "sglang_tuned_v1.log", "sglang_eagle3.log", "vllm_kimi_k25.log",
                 "vllm_eagle3.log"]
ERAS = [
    "sglang_2026_ms_hybrid.log", "sglang_capture_oom.log", "sglang_disable_cuda_graph.log",
    "sglang_not_enough_memory.log", "sglang_ray_actor.log", "sglang_v0.4.3_tp2.log", "sglang_v0.4.8_dp.log",
    "sglang_v0.5.4_fwd_counter.log", "vllm_enforce_eager_awq.log", "vllm_illegal_memory_access.log",
    "vllm_kv_too_small.log", "vllm_moe_untuned.log", "vllm_planned_shutdown.log", "vllm_v0_0.5.4.log",
    "vllm_v0_0.6.6_prefix_cache.log", "vllm_v1_0.10.1_workers.log", "vllm_v1_0.12_color.log",
    "vllm_v1_0.8.5_spec.log",
]
AUTHORED = [
    "vllm_decode_not_graph_covered_fires.log", "sgl_scheduler_too_conservative_fires.log",
    "sgl_mem_fraction_too_high_fires.log", "fp8_kv_backend_fallback_fires.log",
    "engine_stalled_with_waiting_fires.log", "fp8_weight_only_marlin_fires.log", "startup_oom_fires.log",
    "cuda_graph_capture_oom_vllm_fires.log",
]
OTHER_FILES = [
    "rules/nccl_watchdog_timeout_fires.log", "rules/chunked_prefill_misfit_fires.log",
    "rules/bench_concurrency_not_reached_fires.log",
    "eras/sglang_2026_ms_hybrid.log", "eras/vllm_v0_0.5.4.log", "eras/bench_vllm_0.14_spec.txt",
    "eras/vllm_v0_0.6.6_prefix_cache.log", "eras/sglang_disable_cuda_graph.log",
]

#: database name -> the files it holds, in ingest order
SETS = {
    "story": [SAMPLES / f for f in STORY_FILES] + sorted((SAMPLES / "env").iterdir()),
    "samples": ([SAMPLES / f for f in STORY_SERVERS] + [SAMPLES / "eras" / f for f in ERAS]
                + [SAMPLES / "rules" / f for f in AUTHORED]),
    "others": [SAMPLES / f for f in OTHER_FILES],
    "truth": sorted((SAMPLES / "truth").glob("*.log")),
    "corpus": corpus_files(),
}

