"""Every known-issue citation diagnose makes on the samples and the real corpus, each checked by hand
(docs/known-issues.md lists why each is right), and none elsewhere: a new citation or a lost one fails
here. A citation is (entry, file, launch ordinal, the finding it is on: a rule's, or known:<entry> for a
known-issue finding of its own)."""
from __future__ import annotations

import json

import pytest

from support.paths import CORPUS

PARALLELWORKS = "vllm__parallelworks__activate-rag-vllm__run.debug-00074.out"
DGX = "vllm__sostrowsk__dgx-spark-local-llm__"

EXPECTED = {
    "samples": {
        ("sgl-spec-default-max-running-48", "sglang_eagle3.log", 1, "sgl_spec_max_running_48"),
        ("sgl-spec-default-max-running-48", "sglang_v0.5.4_fwd_counter.log", 1, "sgl_spec_max_running_48"),
        ("vllm-custom-ar-pcie-gt2", "vllm_eagle3.log", 1, "custom_allreduce_disabled"),
        ("vllm-custom-ar-pcie-gt2", "vllm_kimi_k25.log", 1, "custom_allreduce_disabled"),
        ("vllm-shm-broadcast-60s", "vllm_eagle3.log", 1, "known:vllm-shm-broadcast-60s"),
        ("vllm-shm-broadcast-60s", "vllm_kimi_k25.log", 1, "known:vllm-shm-broadcast-60s"),
        ("sgl-scheduler-watchdog-timeout", "sglang_2026_ms_hybrid.log", 1, "sgl_watchdog_timeout"),
        ("sgl-cuda-graph-capture-failed", "sglang_capture_oom.log", 1, "cuda_graph_capture_oom"),
        ("sgl-not-enough-memory-mem-fraction", "sglang_not_enough_memory.log", 1,
         "known:sgl-not-enough-memory-mem-fraction"),
        ("sgl-retract-decode-oom", "sglang_ray_actor.log", 1, "sgl_kv_pool_full_retract"),
        ("sgl-retract-decode-oom", "sglang_v0.4.3_tp2.log", 1, "sgl_kv_pool_full_retract"),
        ("sgl-retract-decode-oom", "sglang_v0.4.8_dp.log", 1, "sgl_kv_pool_full_retract"),
        ("vllm-enginedead-wrapper", "vllm_illegal_memory_access.log", 1, "illegal_memory_access"),
        ("vllm-max-seq-len-exceeds-kv", "vllm_kv_too_small.log", 1, "vllm_kv_too_small_for_max_model_len"),
    },
    "others": {
        ("nccl-iommu-acs-hang", "nccl_watchdog_timeout_fires.log", 1, "nccl_watchdog_timeout"),
        ("nccl-watchdog-timeout-generic", "nccl_watchdog_timeout_fires.log", 1, "nccl_watchdog_timeout"),
        ("vllm-custom-ar-pcie-gt2", "nccl_watchdog_timeout_fires.log", 1, "custom_allreduce_disabled"),
        ("sgl-scheduler-watchdog-timeout", "sglang_2026_ms_hybrid.log", 1, "sgl_watchdog_timeout"),
    },
    "truth": {
        ("sgl-deepep-nvshmem-init", "sglang_two_node_nvshmem_peer.log", 1, "known:sgl-deepep-nvshmem-init"),
        ("vllm-enginedead-wrapper", "vllm_engine_core_died.log", 1, "engine_crashed"),
        ("vllm-slow-weight-loading", "vllm_shard_bar_only.log", 1, "long_weight_loading"),
    },
    "corpus": {
        ("vllm-slow-weight-loading", "vllm__leadawon__structrag__vllm.log", 1, "long_weight_loading"),
        ("vllm-free-mem-less-than-util", "vllm__mrpid12org__imageworks__nohup.out", 1,
         "startup_free_memory_below_utilization"),
        ("vllm-custom-ar-pcie-gt2", PARALLELWORKS, 1, "custom_allreduce_disabled"),
        ("vllm-shm-broadcast-60s", PARALLELWORKS, 1, "known:vllm-shm-broadcast-60s"),
        ("vllm-mtp-draft-max-model-len-log", DGX + "qwen36.log", 1, "known:vllm-mtp-draft-max-model-len-log"),
        ("vllm-slow-weight-loading", DGX + "vllm-run1-oom.log", 1, "long_weight_loading"),
        ("vllm-slow-weight-loading", DGX + "vllm.log", 1, "long_weight_loading"),
    },
}


def citations(db) -> set:
    return {(c["id"], *db.by_run[f.run_id], f.rule_id) for f in db.findings for c in f.citations}


@pytest.mark.parametrize("name", ["samples", "others", "truth", "corpus"])
def test_citations_are_exactly_the_checked_ones(name, request):
    if name == "corpus" and not CORPUS.is_dir():
        pytest.skip("real corpus not available")
    db = request.getfixturevalue(name)
    assert citations(db) == EXPECTED[name]


def test_a_citation_says_what_upstream_did_and_compares_the_version(samples):
    f = samples.one("vllm_kv_too_small_for_max_model_len", "vllm_kv_too_small.log")
    (c,) = f.citations
    assert c["upstream"] == ["vllm#2418", "vllm#10517"] and c["status"] == "upstream keeps this behaviour (won't fix)"
    assert "0.11.0" in c["version"] and c["confidence"] == "high" and "engine=vllm" in c["checked"]
    assert json.loads(json.dumps(f.as_dict()))["citations"][0]["id"] == "vllm-max-seq-len-exceeds-kv"


def test_verbose_says_what_was_considered_and_why_not(samples):
    import logsleuth

    d = logsleuth.diagnosis(samples.con)
    why = dict(d.known)
    assert why["known issues"].startswith("72 entries checked")
    assert not [rid for rid, _ in d.silent if rid.startswith("known")]  # the rules' list stays the rules'
    # the SGLang baseline prints vLLM's custom all-reduce text: seen, refused on the engine
    refused = [w for rid, w in d.known if rid == "known:vllm-custom-ar-pcie-gt2"]
    assert any("engine is sglang, the entry needs vllm" in w for w in refused)
    assert "listed only" in why["known:vllm-xgrammar-cache-dos"]


def test_the_text_in_a_users_prompt_cites_nothing(tmp_path):
    """A vLLM server logging requests (--log-requests, prompts kept): the prompt quotes a known error."""
    import logsleuth

    log = tmp_path / "prompt.log"
    log.write_text(
        "INFO 06-01 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
        "INFO 06-01 10:00:01 [api_server.py:2] non-default args: {'model': 'Qwen/Qwen3-8B'}\n"
        "INFO 06-01 10:00:30 [api_server.py:3] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
        "INFO 06-01 10:01:00 [logger.py:4] Received request chatcmpl-1: prompt: 'My server printed "
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine. and then RuntimeError: CUDA error: an illegal memory access was encountered', "
        "params: SamplingParams(n=1), prompt_token_ids: None, lora_request: None.\n",
        encoding="utf-8")
    con = logsleuth.open_db(str(tmp_path / "p.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(log)], logsleuth.IngestOptions(keep_prompts=True))
        assert con.execute("SELECT count(*) FROM lines WHERE raw LIKE '%No available memory for the cache%'").fetchone()[0]
        notes: list = []
        found = logsleuth.diagnose(con, known_notes=notes)
        assert not [c for f in found for c in f.citations]
        assert not [rid for rid, why in notes if "shows its signature" in why]
    finally:
        con.close()
