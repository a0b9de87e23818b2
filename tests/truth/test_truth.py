"""Issue 12, truth on logs never seen: each class asserts the fixed value and that the healthy
counterpart stays silent. Samples: tests/samples/truth/ (authored from the documented formats,
see tests/samples/MANIFEST.md "Truth family") and the story samples."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import logsleuth
from logsleuth.api import expand_paths, ingest_files, open_db
from logsleuth.derive.identity import model_key
from logsleuth.derive.spec import canonical_method, method_kind

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
TRUTH = SAMPLES / "truth"


def _db(tmp_path, files):
    con = open_db(str(tmp_path / "t.duckdb"))
    ingest_files(con, [str(f) for f in files])
    return con


def _findings(con, rule=None):
    return [f for f in logsleuth.diagnose(con) if rule is None or f.rule_id == rule]


def _run(con, cols):
    return con.execute(f"SELECT {cols} FROM runs r JOIN run_summary s USING (run_id) ORDER BY run_id").fetchall()


# ---------------------------------------------------------------- speculative decoding
def test_method_names_and_kinds_are_canonical():
    assert canonical_method("EAGLE3") == "eagle3" and canonical_method("NEXTN") == "mtp"
    assert canonical_method("deepseek_mtp") == "mtp" and canonical_method("qwen3_next_mtp") == "mtp"
    assert canonical_method("STANDALONE") == "draft_model" and canonical_method("None") is None
    assert method_kind("suffix") == "ceiling" and method_kind("ngram") == "ceiling"
    assert method_kind("eagle3") == "chain" and method_kind("dflash") == "chain"


def test_short_eagle3_chain_at_20_percent_is_flagged(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_eagle3_k2_low.log"])
    (k, kind, L, rate, pos), = _run(con, "r.num_spec_tokens, r.spec_kind, s.mean_accept_len, s.draft_accept_rate, s.per_position")
    assert (k, kind) == (2, "chain") and L == pytest.approx(1.40, abs=0.01)
    assert rate == pytest.approx(0.20, abs=0.005) and pos == [0.32, 0.07]
    f, = _findings(con, "spec_low_acceptance")
    assert f.values["draft_rate_pct"] == pytest.approx(19.9, abs=0.2) and "2 drafted per step" in f.title


def test_healthy_chain_and_suffix_ceiling_stay_silent(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_eagle3_k3_healthy.log", TRUTH / "vllm_suffix_healthy.log"])
    rows = _run(con, "r.spec_method, r.spec_kind, r.num_spec_tokens, s.mean_accept_len, s.draft_accept_rate")
    assert rows[1][:3] == ("suffix", "ceiling", 24)
    # a ceiling method's rate is accepted / proposed, not (accept_len - 1) / 24
    assert rows[1][4] == pytest.approx(0.42, abs=0.01) and rows[1][3] == pytest.approx(2.34, abs=0.02)
    assert _findings(con, "spec_low_acceptance") == []


def test_vllm_v0_tokens_per_step_come_from_emitted_tokens(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_v0_spec_emitted.log"])
    (L, rate), = _run(con, "s.mean_accept_len, s.draft_accept_rate")
    assert L == pytest.approx(323 / (760 / 4), abs=0.001) == pytest.approx(0.34 * 5, abs=0.01)  # 1.70, not 2.68
    assert rate == pytest.approx(0.175, abs=0.001)
    definition = con.execute("SELECT any_value(definition) FROM spec_stats").fetchone()[0]
    assert "emitted / (drafted / k)" in definition
    f, = _findings(con, "spec_low_acceptance")
    assert f.values["accept_len"] == pytest.approx(1.7)


def test_sglang_and_vllm_count_the_same_steps_the_same(tmp_path):
    # SGLang speculative_num_draft_tokens 4 (steps 3) is vLLM num_speculative_tokens 3
    con = _db(tmp_path, [SAMPLES / "sglang_eagle3.log", SAMPLES / "vllm_eagle3.log"])
    rows = _run(con, "r.engine, r.spec_method, r.num_spec_tokens")
    assert rows == [("sglang", "eagle3", 3), ("vllm", "eagle3", 3)]
    sgl = _findings(con, "spec_low_acceptance")[0]
    assert "printed accept rate" not in sgl.title and "per-token draft acceptance 22.4 %" in sgl.title


def test_dp_attention_keeps_every_dp_scheduler(tmp_path):
    con = _db(tmp_path, [TRUTH / "sglang_dp_attention_excerpt.log"])
    (tp, dp, how, n_obs, L), = _run(con, "r.tp_size, r.dp_size, r.parallel_source, s.n_spec_obs, s.mean_accept_len")
    assert (tp, dp) == (4, 4) and "rank tags" in how
    assert n_obs == 20 and L == pytest.approx((2.4 + 1.9 + 2.2 + 2.0) / 4)


# ---------------------------------------------------------------- identities
def test_model_key_is_quantisation_aware():
    assert model_key("/shared/kimi-k2.5-int4") == model_key("kimi-k2.5") == model_key("moonshotai/Kimi-K2.5")
    assert model_key("/data/hf-cache/hub/models--Qwen--Qwen3-8B/snapshots/0c35") == "qwen3-8b"
    assert model_key("Qwen/Qwen2.5-14B-Instruct-AWQ") == "qwen2.5-14b-instruct"
    assert model_key("Qwen/Qwen3-8B") != model_key("Qwen/Qwen3-32B")


def test_ci_preamble_run_starts_at_the_server_launch_with_printed_version(tmp_path):
    con = _db(tmp_path, [TRUTH / "sglang_ci_preamble.log"])
    (first, version, model, served, key), = _run(con, "r.first_line, r.engine_version, r.model, r.served_model_name, r.model_key")
    assert first == 31  # "+ python3 -m sglang.launch_server ..." after 30 lines of CI job preamble
    assert version == "0.5.6.post2" and (model, served, key) == ("Qwen/Qwen3-8B", "qwen3", "qwen3-8b")
    assert con.execute("SELECT list(run_id) FROM runs").fetchone()[0] == [1]  # the preamble uses up no id


@pytest.mark.parametrize("name, first_words, version", [
    ("sglang_ci_preamble_long.log", "+ python3 -m sglang.launch_server", "0.5.6.post2"),
    ("vllm_ci_preamble_long.log", "INFO 03-10 14:02:18 [__init__.py:216] Automatically detected platform", "0.11.0"),
])
@pytest.mark.parametrize("chunk_bytes", [None, 4096])
def test_a_long_ci_preamble_with_another_tools_log_lines_is_not_the_run(tmp_path, name, first_words, version,
                                                                         chunk_bytes):
    # 240 lines of job (runner, git, pip, and a helper script's own log lines: Python logging
    # "2026-03-10 14:02:11,532 - ci.fetch - INFO - ...", "[14:00:32] cache: ...", logfmt) end right
    # before the server's first line; the helper's timestamps are not the engine's layout
    from logsleuth.ingest.pipeline import IngestOptions

    text = (TRUTH / name).read_text(encoding="utf-8").splitlines()
    server_first = next(i for i, s in enumerate(text, 1) if s.startswith(first_words))
    assert server_first == 241
    con = open_db(str(tmp_path / "t.duckdb"))
    opts = IngestOptions(chunk_bytes=chunk_bytes) if chunk_bytes else IngestOptions()
    ingest_files(con, [str(TRUTH / name)], opts)
    assert con.execute("SELECT run_id, ordinal, first_line, last_line, engine_version, end_state FROM runs").fetchall() \
        == [(1, 1, server_first, len(text), version, "served")]
    # nothing lost: the preamble is kept, as the context of the run it precedes (README: a run starts
    # where its server process starts; the lines before the first launch stay attached to it)
    got = con.execute("SELECT count(*), count(DISTINCT line_no), min(line_no), max(line_no), list(DISTINCT run_id) "
                      "FROM lines").fetchone()
    assert got == (len(text), len(text), 1, len(text), [1])
    helper = con.execute("SELECT list(kind) FROM lines WHERE raw LIKE '%- ci.%INFO -%' OR raw LIKE '[14:00:32]%'").fetchone()[0]
    assert helper == ["unparsed"] * 5


def test_preamble_runs_of_both_engines_number_without_gaps(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_ci_preamble_long.log", TRUTH / "sglang_ci_preamble_long.log"])
    assert con.execute("SELECT run_id, engine, first_line FROM runs ORDER BY run_id").fetchall() == [
        (1, "vllm", 241), (2, "sglang", 241)]


def test_run_ids_start_at_one_without_gaps(tmp_path):
    con = _db(tmp_path, [SAMPLES / "sglang_baseline.log", TRUTH / "sglang_ci_preamble.log",
                         SAMPLES / "eras" / "vllm_v0_0.5.4.log"])
    rows = con.execute("SELECT run_id, ordinal, first_line FROM runs ORDER BY run_id").fetchall()
    assert rows == [(1, 1, 1), (2, 2, 104), (3, 1, 31), (4, 1, 1)]  # SGLang killed at 1, relaunched at 104


def test_story_served_name_against_path_still_meets(tmp_path):
    sgl = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8")
    sgl = sgl.replace("model_path='moonshotai/Kimi-K2.5'", "model_path='/models/Kimi-K2.5'")
    sgl = sgl.replace("served_model_name='moonshotai/Kimi-K2.5'", "served_model_name='kimi-k2.5'")
    vl = (SAMPLES / "vllm_kimi_k25.log").read_text(encoding="utf-8").replace("moonshotai/Kimi-K2.5", "/shared/kimi-k2.5-int4")
    (tmp_path / "sglang.log").write_text(sgl, encoding="utf-8")
    (tmp_path / "vllm.log").write_text(vl, encoding="utf-8")
    con = _db(tmp_path, [tmp_path / "sglang.log", tmp_path / "vllm.log"])
    keys = [r[0] for r in _run(con, "r.model_key")]
    assert set(keys) == {"kimi-k2.5"} and len(keys) == 3  # SGLang killed + relaunched, vLLM
    fs = _findings(con, "single_stream_below_reference")
    assert fs and all(f.values["best_engine"] == "vllm" and f.values["engine"] == "sglang" for f in fs)


# ---------------------------------------------------------------- crash causes
def test_warmup_assertion_is_the_root_cause(tmp_path):
    con = _db(tmp_path, [TRUTH / "sglang_warmup_assertion.log"])
    (state, line, reason), = _run(con, "r.end_state, r.end_line, r.end_reason")
    assert state == "startup_failed" and line == 6 and "AssertionError: nhead=64 not supported" in reason
    f, = _findings(con, "startup_exception")
    assert "nhead=64 not supported" in f.title and "CUDA-graph capture" in f.title
    assert _findings(con, "died_without_error") == []


def test_nvshmem_peer_access_is_the_root_cause_of_a_two_node_startup(tmp_path):
    # NVSHMEM's own stderr line (no prefix, no time) on rank 0 during CUDA-graph capture comes first;
    # a DistBackendError "remote process exited" (stamped, rank 6), an EOFError (rank 3) 40 lines later
    # and "Received sigquit" are consequences. The unstamped line takes the time of the stamped line
    # before it, so it is not ordered after the later stamped failure.
    con = _db(tmp_path, [TRUTH / "sglang_two_node_nvshmem_peer.log", TRUTH / "sglang_two_node_healthy.log"])
    (state, line, reason, tp), (ok_state, _, _, ok_tp) = _run(con, "r.end_state, r.end_line, r.end_reason, r.tp_size")
    assert (state, line, tp) == ("startup_failed", 40, 16)
    assert "Peer GPU 8 is not accessible" in reason and "nvshmem" in reason
    kinds = con.execute("SELECT line_no, kind, exc_type, fatal FROM errors WHERE run_id = 1 ORDER BY line_no").fetchall()
    assert kinds[:2] == [(40, "nvshmem_failed", None, True), (41, "nvshmem_failed", None, True)]
    assert ("DistBackendError", "EOFError") == (kinds[2][2], kinds[3][2])  # the consequences keep their own records
    f, = _findings(con, "startup_exception")
    assert f.run_id == 1 and f.line_no == 40
    assert "during CUDA-graph capture" in f.title and "nvshmem" in f.title and "Peer GPU 8 is not accessible" in f.title
    assert "NVSHMEM" in f.fix
    # the healthy start-up of the same layout (with NVSHMEM's "Skipping transport." note) stays silent
    assert (ok_state, ok_tp) == ("served", 16)
    assert con.execute("SELECT count(*) FROM errors WHERE run_id = 2").fetchone()[0] == 0  # "WARN: init failed ..." too
    assert con.execute("SELECT kind FROM lines WHERE run_id = 2 AND raw LIKE '%Skipping transport.%'").fetchone()[0] == "lines"
    assert not [f for f in _findings(con) if f.run_id == 2]


def test_engine_core_death_without_traceback_says_what_is_unknown(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_engine_core_died.log", TRUTH / "vllm_eagle3_k3_healthy.log"])
    rows = _run(con, "r.end_state")
    assert [r[0] for r in rows] == ["crashed", "served"]
    f, = _findings(con, "engine_crashed")
    assert "3.0 h" in f.title and "no traceback names the root cause" in f.title


# ---------------------------------------------------------------- missing rules
def test_cudagraph_downgrade_chat_template_and_custom_allreduce_argument(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_eagle3_k2_low.log", TRUTH / "vllm_eagle3_k3_healthy.log",
                         TRUTH / "vllm_v0_spec_emitted.log"])
    low, healthy, v0 = [r[0] for r in _run(con, "r.run_id")]
    down, = _findings(con, "vllm_cudagraph_mode_downgraded")
    assert down.run_id == low and "PIECEWISE" in down.title
    assert [f.run_id for f in _findings(con, "vllm_chat_template_differs")] == [low]
    ar, = _findings(con, "custom_allreduce_disabled")
    assert ar.run_id == v0 and "disable_custom_all_reduce=True" in ar.title
    assert not [f for f in _findings(con) if f.run_id == healthy]


# ---------------------------------------------------------------- inputs around the logs
def test_folder_ingests_exactly_the_logs_and_attaches_env_subfolder(tmp_path, capsys):
    folder = tmp_path / "demo"
    (folder / "env").mkdir(parents=True)
    shutil.copy(SAMPLES / "vllm_kimi_k25.log", folder / "server.log")
    shutil.copy(SAMPLES / "env" / "rtxpro6000_collect_env.txt", folder / "env" / "collect_env.txt")
    (folder / "README.md").write_text(
        "# Demo\n\nRun `logsleuth ingest demo`. The server prints:\n\n"
        "    (APIServer pid=1) ERROR 02-03 10:00:00 [core.py:1] EngineCore failed to start.\n\n"
        "CRITICAL: this is prose, not a log.\n", encoding="utf-8")
    (folder / "MANIFEST").write_text("server.log  vllm 0.13.0  sha256 0f0f\nenv/collect_env.txt  collect_env\n",
                                     encoding="utf-8")
    notes: list[str] = []
    files = expand_paths([str(folder)], notes.append)  # the library tells, the CLI prints
    assert sorted(Path(f).name for f in files) == ["collect_env.txt", "server.log"]
    told = "\n".join(notes)
    assert "skipped" in told and "README.md" in told and "MANIFEST" in told
    assert capsys.readouterr().err == ""  # the library never prints
    con = _db(tmp_path, [folder])
    (gpu, source), = con.execute("SELECT gpu_name, gpu_source FROM runs").fetchall()
    assert gpu == "NVIDIA RTX PRO 6000 Blackwell Server Edition" and "env/collect_env.txt" in source


# ---------------------------------------------------------------- hardware named honestly, more missing rules
def test_ascend_npu_is_named_as_the_log_says(tmp_path):
    con = _db(tmp_path, [TRUTH / "sglang_ascend_npu.log"])
    (vendor, name, how, capture, graph_lines), = con.execute(
        """SELECT gpu_vendor, gpu_name, gpu_source, cuda_graph_capture_s,
                  (SELECT count(*) FROM decode_stats WHERE cuda_graph) FROM runs""").fetchall()
    assert (vendor, name) == ("ascend", "Huawei Ascend NPU") and "npu graph" in how
    assert capture == pytest.approx(40.12) and graph_lines == 8  # "npu graph: True" lines and NPU graph capture parsed
    f, = _findings(con, "quant_kernel_not_optimized")
    assert "Huawei Ascend NPU" in f.title and "AMD" not in f.title and f.severity == "info"


def test_rocm_aiter_build_hybrid_pool_and_shard_bar(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_rocm_aiter_jit.log", TRUTH / "sglang_hybrid_kv_pool.log",
                         TRUTH / "vllm_shard_bar_only.log", TRUTH / "vllm_eagle3_k3_healthy.log"])
    aiter, hybrid, shards, healthy = [r[0] for r in _run(con, "r.run_id")]
    f, = _findings(con, "rocm_aiter_jit_build")
    assert f.run_id == aiter and f.values["build_s"] == pytest.approx(55.3)
    f, = _findings(con, "hybrid_kv_pool_below_context")
    assert f.run_id == hybrid and (f.values["kv_tokens"], f.values["context_len"]) == (32997, 65536)
    f, = _findings(con, "long_weight_loading")
    assert f.run_id == shards and "7 min 48 s for 17 shards" in f.title
    assert not [f for f in _findings(con) if f.run_id == healthy]


def test_download_time_is_not_blamed_on_storage(tmp_path):
    con = _db(tmp_path, [TRUTH / "vllm_hybrid_download.log"])
    (load_s,), = _run(con, "r.weight_load_s")
    assert load_s == pytest.approx(880.12)  # the engine's figure, kept as printed
    assert con.execute("SELECT value FROM events WHERE kind = 'weights_download'").fetchone()[0] == pytest.approx(700.5)
    assert _findings(con, "long_weight_loading") == []  # 880 s - 700 s of download = 180 s of loading


def test_env_option_attaches_a_report_from_anywhere_and_says_so(tmp_path):
    from support.cli import run_in_process

    elsewhere = tmp_path / "reports"
    elsewhere.mkdir()
    shutil.copy(SAMPLES / "env" / "rtxpro6000_collect_env.txt", elsewhere / "collect_env.txt")
    db = str(tmp_path / "env.duckdb")
    code, out, err = run_in_process("ingest", "--env", str(elsewhere / "collect_env.txt"),
                                    str(SAMPLES / "vllm_eagle3.log"), db=db)
    assert code == 0, err
    assert "RTX PRO 6000" in out and "(--env)" in out  # the ingest summary names the GPU and where it came from
    con = open_db(db)
    (source,), = con.execute("SELECT gpu_source FROM runs").fetchall()
    assert "collect_env.txt (--env)" in source
