"""Issue 23 items 3-6 on logs that arrive as they really do: interleaved processes, offline runs,
platforms other than CUDA, a server stopped while it starts. One sample per class
(tests/samples/lifecycle/, provenance in tests/samples/MANIFEST.md "Lifecycle family"), each
with the facts it must give; the healthy or CUDA counterpart of each silenced rule still fires.
"""
from __future__ import annotations

import pytest

import logsleuth
from logsleuth.api import ingest_files, open_db
from logsleuth.derive.platform import decide
from logsleuth.ingest.normalize import starts_run
from support.paths import CORPUS, SAMPLES

LIFE = SAMPLES / "lifecycle"

# file -> runs in file order: (first_line, last_line, end_state, mode, end_phase, platform)
FACTS = {
    # vLLM 0.11 stuck downloading its tokenizer, then SIGTERM: the API server's own handler
    # raises KeyboardInterrupt("terminated") (line 26) -- stopped, not a start-up failure
    "vllm_sigterm_tokenizer_download.log": [(1, 27, "killed", None, "downloading", "cuda")],
    # Ctrl-C while shard 4/17 loads: a bare KeyboardInterrupt traceback ends the log
    "sglang_ctrl_c_loading.log": [(1, 21, "killed", None, "loading_weights", "cuda")],
    # three benchmark_latency runs (vLLM 0.6.3, V0: no banner, one engine config each)
    "vllm_offline_benchmark_latency_x3.log": [(1, 20, "completed", "offline", None, "cuda"),
                                              (21, 40, "completed", "offline", None, "cuda"),
                                              (41, 60, "completed", "offline", None, "cuda")],
    # LLM(...).generate on vLLM 0.11 (V1): "Processed prompts: 100%" says it finished
    "vllm_offline_llm_generate.log": [(1, 27, "completed", "offline", None, "cuda")],
    # two SGLang Engine runs of bench_offline_throughput: no HTTP server, a result block each
    "sglang_engine_offline_throughput_x2.log": [(1, 38, "completed", "offline", None, "cuda"),
                                                (39, 76, "completed", "offline", None, "cuda")],
    # SGLang on Apple silicon (MLX backend): a server, serving, CUDA graphs meaningless
    "sglang_mlx_metal.log": [(1, 50, "served", "server", None, "mlx")],
    # two vLLM API servers (own process tags) written into one file: two runs, one deployment
    "vllm_two_servers_interleaved.log": [(1, 30, "served", "server", None, None),
                                         (3, 32, "served", "server", None, None)],
}


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    c = open_db(str(tmp_path_factory.mktemp("life") / "life.duckdb"))
    ingest_files(c, [str(LIFE / name) for name in sorted(FACTS)])
    yield c
    c.close()


def _runs(con, name, cols):
    return con.execute(f"SELECT {cols} FROM runs JOIN sources s USING (source_id) WHERE s.name = ? "
                       "ORDER BY ordinal", [name]).fetchall()


def test_every_lifecycle_sample_has_facts():
    assert {p.name for p in LIFE.iterdir()} == set(FACTS)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_runs_end_states_modes_phases_platforms(con, name):
    got = _runs(con, name, "first_line, last_line, end_state, mode, end_phase, platform")
    assert got == FACTS[name]


def test_stopped_while_starting_names_the_phase_and_no_cause(con):
    (line, reason), = _runs(con, "vllm_sigterm_tokenizer_download.log", "end_line, end_reason")
    assert line == 26 and "SIGTERM" in reason and "downloading files" in reason
    # the interrupt's traceback is not a fatal error of the server
    assert con.execute("SELECT count(*) FROM errors JOIN sources s USING (source_id) "
                       "WHERE s.name = 'vllm_sigterm_tokenizer_download.log' AND fatal").fetchone()[0] == 0
    (reason,), = _runs(con, "sglang_ctrl_c_loading.log", "end_reason")
    assert reason.endswith("while loading weights")


def test_offline_results_are_typed(con):
    rows = con.execute("""SELECT s.name, count(*) FROM events_other e JOIN sources s USING (source_id)
                          WHERE e.kind = 'offline_result' GROUP BY 1 ORDER BY 1""").fetchall()
    assert rows == [("sglang_engine_offline_throughput_x2.log", 2), ("vllm_offline_benchmark_latency_x3.log", 3)]
    lat = con.execute("""SELECT list(e.value ORDER BY e.line_no) FROM events_other e JOIN sources s USING (source_id)
                         WHERE s.name = 'vllm_offline_benchmark_latency_x3.log' AND e.kind = 'offline_result'""").fetchone()[0]
    assert lat == [pytest.approx(0.2101), pytest.approx(0.2388), pytest.approx(0.3315)]


def test_interleaved_servers_keep_their_own_lines(con):
    rows = _runs(con, "vllm_two_servers_interleaved.log", "model, context_len, ready_line, deployment, run_id")
    (m1, c1, r1, d1, id1), (m2, c2, r2, d2, _) = rows
    assert (m1, c1, r1) == ("Qwen/Qwen3-8B", 40960, 12)
    assert (m2, c2, r2) == ("meta-llama/Llama-3.1-8B-Instruct", 8192, 16)
    assert d1 == d2 == id1
    per_run = con.execute("""SELECT r.ordinal, count(*), min(d.gen_tok_s) FROM decode_stats d JOIN runs r USING (run_id)
                             JOIN sources s ON s.source_id = r.source_id
                             WHERE s.name = 'vllm_two_servers_interleaved.log' GROUP BY 1 ORDER BY 1""").fetchall()
    assert per_run == [(1, 4, 410.0), (2, 4, 300.0)]


def test_sequential_runs_are_deployments_of_their_own(con):
    rows = _runs(con, "vllm_offline_benchmark_latency_x3.log", "run_id, deployment")
    assert all(rid == dep for rid, dep in rows)


def _findings(con, rule):
    silent: list = []
    found = [f for f in logsleuth.diagnose(con, rule_ids=[rule], silent=silent)]
    return found, dict(silent)


def test_cuda_only_rule_is_silent_on_mlx_and_says_why(con):
    found, silent = _findings(con, "sgl_cuda_graph_disabled")
    assert [f.source for f in found] == []
    assert "silent for run" in silent["sgl_cuda_graph_disabled"] and "on mlx" in silent["sgl_cuda_graph_disabled"]


def test_cuda_graph_rule_still_fires_on_cuda(tmp_path):
    c = open_db(str(tmp_path / "cuda.duckdb"))
    ingest_files(c, [str(SAMPLES / "eras" / "sglang_disable_cuda_graph.log")])
    assert c.execute("SELECT platform FROM runs").fetchall() == [("cuda",)]
    found, _ = _findings(c, "sgl_cuda_graph_disabled")
    assert len(found) == 1
    c.close()


def test_finished_batch_jobs_never_died_without_error(con):
    found, _ = _findings(con, "died_without_error")
    assert found == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="real corpus not available")
def test_platforms_of_real_rocm_and_cuda_logs(tmp_path):
    c = open_db(str(tmp_path / "real.duckdb"))
    names = ["sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log",
             "vllm__amdgoose__arno_vllm_chat__vllm_server.log", "vllm__sostrowsk__dgx-spark-local-llm__vllm.log"]
    ingest_files(c, [str(CORPUS / n) for n in names])
    got = dict(c.execute("SELECT s.name, r.platform FROM runs r JOIN sources s USING (source_id)").fetchall())
    assert got == {names[0]: "rocm", names[1]: "rocm", names[2]: "cuda"}
    c.close()


def test_platform_trust_order():
    spell = {"nvidia": "cuda", "amd": "rocm", "mps": "mlx"}
    # the engine's own statement beats everything
    assert decide([("rocm", "event", 3, "rocm"), ("cuda", "line", 1, "device_config=cuda")], "nvidia", spell)[0] == "rocm"
    # another platform's line beats CUDA's names and the vendor guess
    assert decide([("cuda", "line", 1, "x"), ("mlx", "line", 9, "y")], None, spell)[0] == "mlx"
    assert decide([("cuda", "line", 1, "x")], "amd", spell)[0] == "rocm"
    assert decide([("cuda", "line", 1, "x")], None, spell)[0] == "cuda"
    assert decide([], None, spell) == (None, None)


@pytest.mark.parametrize("rank, prev, proc, prev_proc, new", [
    (0, None, None, None, True),      # the first marker
    (1, 0, None, None, False),        # banner -> args: one launch
    (2, 1, "EngineCore_DP0", None, False),
    (0, 2, None, None, True),         # a second banner
    (2, 2, None, None, True),         # engine config again from the same (untagged) process: offline rerun
    (2, 2, "EngineCore_DP1", "EngineCore_DP0", False),  # data-parallel engines of one launch
    (1, 1, "APIServer", "APIServer", True),
])
def test_when_a_launch_marker_starts_a_run(rank, prev, proc, prev_proc, new):
    assert starts_run(rank, prev, proc, prev_proc) is new


def test_platform_header_is_validated(tmp_path):
    from logsleuth.analysis.rules import parse_rule
    from logsleuth.errors import GrammarError

    body = ("-- id: {id}\n-- severity: info\n-- title: Run {{run_id}}\n-- fix: x\n-- platform: {p}\n"
            "SELECT 1 AS run_id, 1 AS line_no\n")
    ok = tmp_path / "ok_rule.sql"
    ok.write_text(body.format(id="ok_rule", p="CUDA, rocm"))
    assert parse_rule(ok).platforms == ["cuda", "rocm"]
    bad = tmp_path / "bad_rule.sql"
    bad.write_text(body.format(id="bad_rule", p="cuda; drop"))
    with pytest.raises(GrammarError, match="platform"):
        parse_rule(bad)
