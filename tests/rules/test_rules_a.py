"""Rules of diagnostics.md sections A-D (R01-R27, R43) and the start-up failure causes.

Each rule has a sample where it fires (run, evidence line, key numbers) and one where it stays
silent. Samples: the story (tests/samples/*.log, expected findings in tests/samples/MANIFEST.md),
the era samples (tests/samples/eras/) and authored samples (tests/samples/rules/, provenance in
its README). Every real corpus file is diagnosed once and the findings of these rules are pinned:
what must fire there and, as importantly, what must not (planned shutdowns, idle servers,
healthy speculative decoding, pooling models, ROCm defaults).
"""
from __future__ import annotations

import pytest

import logsleuth
from support.paths import SAMPLES, corpus_files

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

STORY = ["sglang_baseline.log", "sglang_tuned_v1.log", "sglang_eagle3.log", "vllm_kimi_k25.log", "vllm_eagle3.log"]
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

DGX = "vllm__sostrowsk__dgx-spark-local-llm__"
R9700 = "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log"
A1_TAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log"
BOOTFAIL = "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log"


class Db:
    """An ingested database with its findings for RULES_A, addressed by file name and launch ordinal."""

    def __init__(self, con):
        self.con = con
        self.findings = logsleuth.diagnose(con, rule_ids=RULES_A)
        self.runs = {(name, ordinal): run_id for run_id, name, ordinal in con.execute(
            "SELECT r.run_id, s.name, r.ordinal FROM runs r JOIN sources s USING (source_id)").fetchall()}
        self.by_run = {rid: key for key, rid in self.runs.items()}

    def of(self, rule: str, name: str | None = None, ordinal: int | None = None) -> list:
        out = [f for f in self.findings if f.rule_id == rule]
        if name is not None:
            ids = {rid for (n, o), rid in self.runs.items() if n == name and (ordinal is None or o == ordinal)}
            out = [f for f in out if f.run_id in ids]
        return out

    def one(self, rule: str, name: str, ordinal: int = 1):
        found = self.of(rule, name, ordinal)
        assert len(found) == 1, (rule, name, ordinal, [f.title for f in self.findings if f.rule_id == rule])
        return found[0]

    def keys(self, names=None) -> set:
        return {(f.rule_id, *self.by_run[f.run_id], f.severity) for f in self.findings
                if names is None or self.by_run[f.run_id][0] in names}


def _open(tmp_path_factory, label: str, paths: list[str]) -> Db:
    con = logsleuth.open_db(str(tmp_path_factory.mktemp(label) / "db.duckdb"))
    for p in paths:  # one call per file keeps run ids in this order
        logsleuth.ingest_files(con, [p])
    return Db(con)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    paths = ([str(SAMPLES / f) for f in STORY] + [str(SAMPLES / "eras" / f) for f in ERAS]
             + [str(SAMPLES / "rules" / f) for f in AUTHORED])
    db = _open(tmp_path_factory, "samples_a", paths)
    yield db
    db.con.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    files = corpus_files()
    if not files:
        pytest.skip("real corpus not available (../shared/corpus/real)")
    db = _open(tmp_path_factory, "corpus_a", [str(p) for p in files])
    yield db
    db.con.close()


# ---------------------------------------------------------------- the story (tests/samples/MANIFEST.md)

STORY_EXPECTED = {
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
    assert samples.keys(set(STORY)) == STORY_EXPECTED


# ---------------------------------------------------------------- A. CUDA graphs / execution mode

def test_decode_above_graph_ceiling_critical_when_most_lines_run_eager(samples):
    f = samples.one("sgl_decode_above_cuda_graph_bs", "sglang_v0.4.8_dp.log")
    assert f.severity == "critical" and f.line_no == 203
    assert f.values["ceiling"] == 32 and f.values["n_above"] == 24 and f.values["n_busy"] == 46
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


def test_spec_low_acceptance_reports_each_engines_own_rate(samples):
    s = samples.one("spec_low_acceptance", "sglang_eagle3.log")
    assert s.severity == "warning" and s.values["accept_len"] == pytest.approx(1.67, abs=0.02)
    assert s.values["sgl_accept_rate"] == pytest.approx(0.42) and "printed accept rate 0.42" in s.title
    v = samples.one("spec_low_acceptance", "vllm_eagle3.log")
    assert v.severity == "warning" and v.values["accept_len"] == pytest.approx(1.755, abs=0.01)
    assert v.values["draft_rate_pct"] == pytest.approx(25.2) and "draft acceptance rate 25.2 %" in v.title
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


def test_planned_shutdown_is_not_a_failure(samples):
    # EngineDeadError after `Shutting down`: no failure-cause finding at all
    assert samples.keys({"vllm_planned_shutdown.log"}) == set()


# ---------------------------------------------------------------- the real corpus

#: (rule, file, launch ordinal, severity) — the findings of these rules on the real corpus
CORPUS_EXPECTED = {
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
    assert corpus.keys() == CORPUS_EXPECTED


def test_corpus_false_alarms_stay_away(corpus):
    # healthy MTP (mean acceptance ~2.8-4.0) is silent; the DFlash shutdown EngineDeadError is no crash
    assert corpus.of("spec_low_acceptance", DGX + "qwen36.log") == []
    for rule in ("illegal_memory_access", "startup_exception", "died_without_error"):
        assert corpus.of(rule, DGX + "vllm.log") == []
    # idle V0 servers, the embedding server run eagerly on purpose, ROCm's Triton attention
    assert corpus.keys({"vllm__leadawon__structrag__vllm.log", "vllm__0324wy__MapCoder__vllm.log"}) == set()
    assert corpus.of("vllm_enforce_eager", "vllm__zjpzhao__vllm-qwen3vl-cu118-t4__vllm_server.log") == []
    assert corpus.of("vllm_attention_backend_fallback", "vllm__amdgoose__arno_vllm_chat__vllm_server.log") == []


def test_corpus_dflash_low_acceptance_scales_with_the_chain(corpus):
    f = corpus.one("spec_low_acceptance", DGX + "vllm.log")
    # ~1.96 tokens per step is above 1.8 but poor for 15 drafts per step (6.4 % accepted)
    assert f.values["accept_len"] == pytest.approx(1.96, abs=0.02) and f.values["draft_rate_pct"] == pytest.approx(6.4)
    assert "15 per step" in f.title


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
