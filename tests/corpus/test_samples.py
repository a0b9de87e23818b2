"""The authored samples (tests/samples/, eras/, env/), checked against tests/samples/MANIFEST.md.

The facts below are the manifest's, each re-checked against the files (``wc -l``, ``grep -c``
of the line shapes, reading the launch/ready/error/shutdown lines) before being written here.
Where the tool's definition differs from the manifest's wording, the comment says how.
"""
from __future__ import annotations

import re

import pytest

from support.ingested import SAMPLES, connect, sample_files
from support.db import source_id, typed_row_counts

# runs: (first_line, last_line, end_state)
# counts: decode_stats, prefill_stats, spec_stats, bench_results, errors, fatal errors
SAMPLE_FACTS: dict[str, dict] = {
    # ---- story family (Kimi-K2.5 on 8x RTX PRO 6000)
    "sglang_tuned_v1.log": dict(
        engine="sglang", n_lines=1585, runs=[(1, 1585, "served")], counts=(318, 374, 0, 0, 0, 0),
        run=dict(attention_backend="flashinfer", tp_size=8, kv_cache_tokens=233238, context_len=131072,
                 max_running_requests=4096, cuda_graph_max_bs=512, weight_load_s=447.0,
                 cuda_graph_capture_s=96.71, ready_line=360,
                 gpu_name="NVIDIA RTX PRO 6000 Blackwell Server Edition")),
    "sglang_baseline.log": dict(
        engine="sglang", n_lines=1255,
        # run 1 killed 41/64 shards into loading (bash "Terminated" job message, line 102)
        runs=[(1, 103, "killed"), (104, 1255, "served")], counts=(300, 261, 0, 0, 0, 0),
        run=dict(attention_backend="triton", end_line=102, ready=False),
        run2=dict(attention_backend="triton", kv_cache_tokens=212311, context_len=262144, weight_load_s=453.0,
                  cuda_graph_capture_s=89.43, ready_line=289)),
    "sglang_eagle3.log": dict(
        engine="sglang", n_lines=952, runs=[(1, 952, "served")],
        counts=(202, 220, 202, 0, 0, 0),  # acceptance is only in the decode lines: one observation each
        # canonical method name; k = speculative_num_steps 3 (num_draft_tokens 4 counts the verified root)
        run=dict(spec_method="eagle3", num_spec_tokens=3, max_running_requests=48, cuda_graph_max_bs=48,
                 kv_cache_tokens=232168, weight_load_s=418.0, cuda_graph_capture_s=41.94, ready_line=253)),
    "vllm_kimi_k25.log": dict(
        engine="vllm", n_lines=982, runs=[(1, 982, "served")], counts=(62, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.13.0", attention_backend="TRITON_MLA", tp_size=8, kv_cache_tokens=316432,
                 weight_load_s=413.209315, cuda_graph_capture_s=41.0, ready_line=374, end_line=968,
                 max_running_requests=128)),
    "vllm_eagle3.log": dict(
        engine="vllm", n_lines=280, runs=[(1, 280, "served")], counts=(24, 0, 23, 0, 0, 0),
        run=dict(spec_method="eagle3", num_spec_tokens=3, kv_cache_tokens=288320, weight_load_s=430.445949,
                 cuda_graph_capture_s=63.0, ready_line=200)),
    # ---- benchmark client output (one block per file)
    "bench_sglang_tuned_v1_c1.txt": dict(engine="bench", kind="bench", n_lines=44, counts=(0, 0, 0, 1, 0, 0)),
    "bench_sglang_tuned_v1_c128.txt": dict(engine="bench", kind="bench", n_lines=44, counts=(0, 0, 0, 1, 0, 0)),
    "bench_vllm_kimi_k25_c1.txt": dict(engine="bench", kind="bench", n_lines=34, counts=(0, 0, 0, 1, 0, 0)),
    "bench_vllm_kimi_k25_c128.txt": dict(engine="bench", kind="bench", n_lines=34, counts=(0, 0, 0, 1, 0, 0)),
    # ---- eras
    "eras/sglang_v0.3_hms.log": dict(
        engine="sglang", n_lines=84, runs=[(1, 84, "served")], counts=(43, 10, 0, 0, 0, 0),
        run=dict(ready_line=23, kv_cache_tokens=444170, context_len=131072)),
    "eras/sglang_v0.4.3_tp2.log": dict(
        engine="sglang", n_lines=389, runs=[(1, 389, "served")], counts=(79, 194, 0, 0, 0, 0),
        run=dict(tp_size=2, kv_cache_tokens=317030, cuda_graph_max_bs=160, attention_backend="flashinfer")),
    "eras/sglang_v0.4.8_dp.log": dict(
        engine="sglang", n_lines=388, runs=[(1, 388, "served")], counts=(184, 141, 0, 0, 0, 0),
        run=dict(tp_size=4, dp_size=4, attention_backend="triton", kv_cache_tokens=269264, cuda_graph_max_bs=32,
                 max_running_requests=1024, context_len=163840)),
    "eras/sglang_v0.5.4_fwd_counter.log": dict(
        engine="sglang", n_lines=217, runs=[(1, 217, "served")], counts=(59, 57, 59, 0, 0, 0),
        run=dict(attention_backend="fa3", spec_method="eagle3", max_running_requests=48)),
    "eras/sglang_2026_ms_hybrid.log": dict(
        engine="sglang", n_lines=263,
        # watchdog timeout (224) + scheduler exception (225-261), sigquit (262): crashed after ready (46)
        runs=[(1, 263, "crashed")], counts=(115, 34, 0, 0, 2, 2),
        run=dict(ready_line=46, end_line=224, tp_size=2, dp_size=2, kv_cache_tokens=1045430,
                 weight_load_s=42.28, cuda_graph_capture_s=17.17)),  # decode 6.82 s + prefill 10.35 s (TP0)
    "eras/sglang_ray_actor.log": dict(
        engine="sglang", n_lines=267,
        # two Engine-API actors interleaved; no fired-up line, readiness from traffic. The manifest
        # gives actor 13265 lines 5-267: the four Ray driver lines before any launch are run 1's context,
        # but the run starts at its server process (line 5)
        runs=[(5, 267, "served"), (6, 262, "served")], counts=(114, 65, 0, 0, 0, 0),
        run=dict(kv_cache_tokens=301568, context_len=40960, ready=False)),
    "eras/sglang_disable_cuda_graph.log": dict(
        engine="sglang", n_lines=120, runs=[(1, 120, "served")], counts=(79, 8, 0, 0, 0, 0),
        run=dict(cuda_graph=False, attention_backend="fa3")),
    "eras/sglang_capture_oom.log": dict(
        engine="sglang", n_lines=194,
        # 2 capture-OOM records (TP2 at 79, TP0 at 136; each a chained traceback), sigquit at 193
        runs=[(1, 194, "startup_failed")], counts=(0, 0, 0, 0, 3, 3), run=dict(end_line=79, ready=False)),
    "eras/sglang_not_enough_memory.log": dict(
        engine="sglang", n_lines=63, runs=[(1, 63, "startup_failed")], counts=(0, 0, 0, 0, 2, 2),
        run=dict(end_line=36)),
    "eras/vllm_v0_0.5.4.log": dict(
        engine="vllm", n_lines=250, runs=[(1, 250, "served")], counts=(29, 0, 29, 0, 0, 0),
        run=dict(engine_version="0.5.4", tp_size=4, spec_method="draft_model", num_spec_tokens=3)),
    "eras/vllm_v0_0.6.6_prefix_cache.log": dict(
        engine="vllm", n_lines=224, runs=[(1, 224, "served")], counts=(24, 0, 0, 0, 1, 0),
        run=dict(engine_version="0.6.6.post1")),
    "eras/vllm_v1_0.8.5_spec.log": dict(
        engine="vllm", n_lines=145, runs=[(1, 145, "served")], counts=(13, 0, 12, 0, 0, 0),
        run=dict(engine_version="0.8.5", attention_backend="FLASHMLA", spec_method="ngram", num_spec_tokens=3,
                 kv_cache_tokens=1234560)),
    "eras/vllm_v1_0.10.1_workers.log": dict(
        engine="vllm", n_lines=165, runs=[(1, 165, "served")], counts=(22, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.10.1.1", tp_size=4, kv_cache_tokens=447088, attention_backend="FLASH_ATTN")),
    "eras/vllm_v1_0.12_color.log": dict(
        engine="vllm", n_lines=133, runs=[(1, 133, "served")], counts=(18, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.12.0", tp_size=2, kv_cache_tokens=296544, attention_backend="FLASH_ATTN")),
    "eras/vllm_v0.31_procname.log": dict(
        engine="vllm", n_lines=168, runs=[(1, 168, "served")], counts=(14, 0, 0, 0, 1, 0),
        run=dict(engine_version="0.31.0", tp_size=8, kv_cache_tokens=476768)),
    "eras/vllm_kv_too_small.log": dict(
        engine="vllm", n_lines=131, runs=[(1, 131, "startup_failed")], counts=(0, 0, 0, 0, 3, 3),
        run=dict(engine_version="0.11.0", end_line=31)),
    "eras/vllm_enforce_eager_awq.log": dict(
        engine="vllm", n_lines=98, runs=[(1, 98, "served")], counts=(37, 0, 0, 0, 0, 0),
        run=dict(cuda_graph=False, kv_cache_tokens=48224)),
    "eras/vllm_illegal_memory_access.log": dict(
        engine="vllm", n_lines=236, runs=[(1, 236, "crashed")], counts=(9, 0, 0, 0, 4, 4),
        run=dict(end_line=139, tp_size=2)),
    "eras/vllm_planned_shutdown.log": dict(
        engine="vllm", n_lines=120,
        # the EngineDeadError of the shutdown (108-115) is not a crash
        runs=[(1, 120, "served")], counts=(11, 0, 0, 0, 1, 0), run=dict(engine_version="0.17.1", end_line=105)),
    "eras/vllm_moe_untuned.log": dict(
        engine="vllm", n_lines=98, runs=[(1, 98, "served")], counts=(26, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.14.0", kv_cache_tokens=451856, gpu_name="NVIDIA GB10")),
    "eras/bench_sglang_v0.4_typo.txt": dict(engine="bench", kind="bench", n_lines=76, counts=(0, 0, 0, 2, 0, 0)),
    "eras/bench_vllm_0.14_spec.txt": dict(engine="bench", kind="bench", n_lines=96, counts=(0, 0, 0, 2, 0, 0)),
    "eras/bench_in_markdown.md": dict(engine="bench", kind="bench", n_lines=93, counts=(0, 0, 0, 2, 0, 0)),
    # ---- environment reports
    "env/h100_nvlink_topo.txt": dict(engine="env", kind="env_report", n_lines=30),
    "env/rtxpro6000_check_env.txt": dict(engine="env", kind="env_report", n_lines=68),
    "env/rtxpro6000_collect_env.txt": dict(engine="env", kind="env_report", n_lines=157),
    "env/rtxpro6000_nvidia-smi.txt": dict(engine="env", kind="env_report", n_lines=48),
    "env/rtxpro6000_topo.txt": dict(engine="env", kind="env_report", n_lines=26),
}

BENCH_BLOCKS = {  # (first line, last line, tool, successful, failed, max concurrency, output tok/s)
    "bench_sglang_tuned_v1_c1.txt": [(9, 43, "sglang.bench_serving", 12, None, 1.0, 63.42)],
    "bench_sglang_tuned_v1_c128.txt": [(9, 43, "sglang.bench_serving", 512, None, 128.0, 2197.07)],
    "bench_vllm_kimi_k25_c1.txt": [(10, 34, "vllm bench serve", 16, 0, 1.0, 82.63)],
    "bench_vllm_kimi_k25_c128.txt": [(10, 34, "vllm bench serve", 512, 0, 128.0, 1430.60)],
    "bench_sglang_v0.4_typo.txt": [(9, 37, "sglang.bench_serving", 64, None, 1.0, 130.59),
                                   (47, 75, "sglang.bench_serving", 512, None, 64.0, 2368.38)],
    "bench_vllm_0.14_spec.txt": [(13, 47, "vllm bench serve", 50, 0, 1.0, 226.87),
                                 (61, 95, "vllm bench serve", 197, 3, 16.0, 1033.34)],
    "bench_in_markdown.md": [(12, 48, "sglang.bench_serving", 500, None, 64.0, 1636.62),
                             (54, 78, "vllm bench serve", 500, 0, 64.0, 1708.15)],
}


@pytest.fixture(scope="module")
def sdb():
    con = connect("samples")
    yield con
    con.close()


def _sid(con, rel: str) -> int:
    return source_id(con, rel.split("/")[-1], label=rel)


def test_facts_cover_every_manifest_sample():
    have = {str(p.relative_to(SAMPLES)) for p in sample_files()}
    assert have == set(SAMPLE_FACTS)


def test_manifest_mentions_every_sample():
    text = (SAMPLES / "MANIFEST.md").read_text(encoding="utf-8")
    for rel in SAMPLE_FACTS:
        assert rel.split("/")[-1] in text, rel


@pytest.mark.parametrize("rel", sorted(SAMPLE_FACTS))
def test_kind_engine_and_line_accounting(sdb, rel):
    facts = SAMPLE_FACTS[rel]
    data = (SAMPLES / rel).read_bytes()
    assert data.count(b"\n") + (0 if data.endswith(b"\n") else 1) == facts["n_lines"]
    sid = _sid(sdb, rel)
    kind, engine = sdb.execute("SELECT kind, engine FROM sources WHERE source_id = ?", [sid]).fetchone()
    assert (kind, engine) == (facts.get("kind", "server_log"), facts["engine"])
    n, lo, hi, distinct = sdb.execute("""SELECT count(*), min(line_no), max(line_no), count(DISTINCT line_no)
                                         FROM lines WHERE source_id = ?""", [sid]).fetchone()
    assert (n, lo, hi, distinct) == (facts["n_lines"], 1, facts["n_lines"], facts["n_lines"])


@pytest.mark.parametrize("rel", sorted(r for r, f in SAMPLE_FACTS.items() if "runs" in f))
def test_runs_and_end_states(sdb, rel):
    facts = SAMPLE_FACTS[rel]
    sid = _sid(sdb, rel)
    got = sdb.execute("SELECT first_line, last_line, end_state FROM runs WHERE source_id = ? ORDER BY ordinal",
                      [sid]).fetchall()
    assert got == facts["runs"]
    for key, ordinal in (("run", 1), ("run2", 2)):
        want = facts.get(key)
        if not want:
            continue
        cols = list(want)
        row = sdb.execute(f"SELECT {', '.join(cols)} FROM runs WHERE source_id = ? AND ordinal = ?",
                          [sid, ordinal]).fetchone()
        for col, w, h in zip(cols, want.values(), row):
            assert (h == pytest.approx(w, abs=0.01)) if isinstance(w, float) else (h == w), (col, h, w)


@pytest.mark.parametrize("rel", sorted(r for r, f in SAMPLE_FACTS.items() if "counts" in f))
def test_row_counts(sdb, rel):
    sid = _sid(sdb, rel)
    assert typed_row_counts(sdb, sid) == SAMPLE_FACTS[rel]["counts"]


# a block's closing '=====' rule followed by blank lines at the end of the file belongs to the
# block (the rule heads the carried tail, and fold keeps the block whole: ingest/fold.py)
@pytest.mark.parametrize("name", sorted(BENCH_BLOCKS))
def test_bench_blocks(sdb, name):
    got = sdb.execute("""SELECT line_no, last_line, tool, successful_requests, failed_requests, max_concurrency,
                                output_tok_s FROM bench_results JOIN sources s USING (source_id)
                         WHERE s.name = ? ORDER BY line_no""", [name]).fetchall()
    assert got == BENCH_BLOCKS[name]


def test_bench_rows_in_detail(sdb):
    def row(name, line_no, cols):
        return sdb.execute(f"SELECT {cols} FROM bench_results JOIN sources s USING (source_id) "
                           "WHERE s.name = ? AND line_no = ?", [name, line_no]).fetchone()

    assert row("bench_sglang_tuned_v1_c128.txt", 9, "peak_output_tok_s, peak_concurrency, concurrency, "
               "median_tpot_ms, mean_ttft_ms, median_itl_ms, backend") == (
        2774.0, 128.0, 115.13, 54.19, 521.47, 45.93, "sglang-oai-chat")
    # v0.4.4 layout: "Max reqeuest concurrency" typo, Accept length, P95/Max ITL, no TPOT section
    assert row("bench_sglang_v0.4_typo.txt", 47, "max_concurrency, accept_len, concurrency, total_tok_s, "
               "mean_ttft_ms, p99_itl_ms, median_tpot_ms") == (64.0, 2.52, 63.52, 4736.76, 612.35, 141.66, None)
    # vllm bench serve speculative section: rate in %, "Per-position acceptance (%):" has no value
    assert row("bench_vllm_0.14_spec.txt", 13, "accept_rate, accept_len, spec_drafts, spec_draft_tokens, "
               "spec_accepted_tokens") == (pytest.approx(0.5901), 2.77, 9241, 27723, 16359)
    assert row("bench_vllm_0.14_spec.txt", 61, "failed_requests, peak_concurrency") == (3, 17.0)
    # the Markdown comparison table after the blocks is not a block row
    n = sdb.execute("""SELECT count(*) FROM lines JOIN sources s USING (source_id)
                       WHERE s.name = 'bench_in_markdown.md' AND pattern = 'bench_row' AND line_no > 79""").fetchone()[0]
    assert n == 0


# ---------------------------------------------------------------- the story numbers

def _run(sdb, name, ordinal=1) -> int:
    return sdb.execute("SELECT run_id FROM runs JOIN sources s USING (source_id) WHERE s.name = ? AND ordinal = ?",
                       [name, ordinal]).fetchone()[0]


def _median_gen(sdb, run_id, min_running) -> float:
    return sdb.execute("""SELECT median(gen_tok_s) FROM decode_stats WHERE run_id = ? AND primary_rank
                          AND running_reqs >= ?""", [run_id, min_running]).fetchone()[0]


def test_story_single_stream_and_c128(sdb):
    ss = dict(sdb.execute("SELECT source_name || ':' || run_id, single_stream_tok_s FROM run_summary").fetchall())
    tuned, kimi = _run(sdb, "sglang_tuned_v1.log"), _run(sdb, "vllm_kimi_k25.log")
    assert ss[f"sglang_tuned_v1.log:{tuned}"] == pytest.approx(63.6, abs=0.005)
    assert ss[f"vllm_kimi_k25.log:{kimi}"] == pytest.approx(82.5, abs=0.005)
    baseline = _run(sdb, "sglang_baseline.log", 2)
    assert ss[f"sglang_baseline.log:{baseline}"] == pytest.approx(55.0, abs=0.005)
    eagle = _run(sdb, "sglang_eagle3.log")
    assert ss[f"sglang_eagle3.log:{eagle}"] == pytest.approx(60.0, abs=0.005)
    # C=128: median over stats lines with >= 100 running requests
    assert _median_gen(sdb, tuned, 100) == pytest.approx(2369.07, abs=0.01)  # manifest rounds 2369.065
    assert _median_gen(sdb, kimi, 100) == pytest.approx(1535.2, abs=0.005)
    assert _median_gen(sdb, baseline, 100) == pytest.approx(1899.65, abs=0.005)
    counts = sdb.execute("""SELECT count(*) FILTER (WHERE running_reqs = 1), count(*) FILTER (WHERE running_reqs >= 100)
                            FROM decode_stats WHERE run_id = ?""", [kimi]).fetchone()
    assert counts == (22, 35)


def test_story_attention_backends(sdb):
    got = dict(sdb.execute("""SELECT s.name || ':' || r.ordinal, r.attention_backend || '/' || r.attention_backend_how
                              FROM runs r JOIN sources s USING (source_id)
                              WHERE s.name IN ('sglang_baseline.log', 'sglang_tuned_v1.log', 'vllm_kimi_k25.log',
                                               'sglang_eagle3.log', 'vllm_eagle3.log')""").fetchall())
    # baseline: the bare "Attention backend not explicitly specified. Use triton backend by default."
    assert got["sglang_baseline.log:1"] == "triton/default (logged)"
    assert got["sglang_baseline.log:2"] == "triton/default (logged)"
    # tuned: --attention-backend flashinfer (server_args)
    assert got["sglang_tuned_v1.log:1"] == "flashinfer/server_args"
    assert got["sglang_eagle3.log:1"] == "flashinfer/server_args"
    # vLLM: "Using TRITON_MLA attention backend out of potential backends: ['TRITON_MLA']" x8
    assert got["vllm_kimi_k25.log:1"] == "TRITON_MLA/selected (logged)"
    assert got["vllm_eagle3.log:1"] == "TRITON_MLA/selected (logged)"


def test_story_speculative_acceptance(sdb):
    rows = dict((n, (a, r)) for n, a, r in sdb.execute(
        "SELECT source_name, mean_accept_len, draft_accept_rate FROM run_summary WHERE mean_accept_len IS NOT NULL"
    ).fetchall())
    # SGLang prints accept len (bonus included) per decode line: mean 1.673; draft-only rate (1.673-1)/3
    assert rows["sglang_eagle3.log"][0] == pytest.approx(1.673, abs=0.001)
    assert rows["sglang_eagle3.log"][1] == pytest.approx(0.2245, abs=0.001)
    # vLLM totals: Accepted 7490 / Drafted 29751 = 25.18 %, overall mean acceptance length 1.755
    assert rows["vllm_eagle3.log"] == (pytest.approx(1.755, abs=0.001), pytest.approx(0.2518, abs=0.0005))
    # V0 counters are cumulative: the last line totals the run. V0 counts accepted tokens after a
    # rejection too, so tokens per step = emitted / (drafted / k) = system efficiency x (k + 1):
    # 116441 / (145404 / 3) = 2.40 (= 0.601 x 4), not 1 + 3 x 0.658 = 2.97
    assert rows["vllm_v0_0.5.4.log"][0] == pytest.approx(116441 / (145404 / 3), abs=0.001)
    assert rows["vllm_v0_0.5.4.log"][1] == pytest.approx((116441 / (145404 / 3) - 1) / 3, abs=0.001)
    # 0.8.5 prints the mean without the bonus token (1.35-1.47): +1 gives 2.35-2.47
    assert 2.35 <= rows["vllm_v1_0.8.5_spec.log"][0] <= 2.47
    per_line = sdb.execute("""SELECT min(accept_len), max(accept_len), min(raw_accept_len) FROM spec_stats
                              JOIN sources s USING (source_id) WHERE s.name = 'vllm_v1_0.8.5_spec.log'""").fetchone()
    assert per_line[0] >= 2.35 and per_line[1] <= 2.47 and per_line[2] >= 1.35


def test_sglang_decode_rows_match_their_lines(sdb):
    rows = sdb.execute("""SELECT s.name, d.line_no, d.running_reqs, d.gen_tok_s, d.kv_usage, d.accept_len, d.fwd_iter
                          FROM decode_stats d JOIN sources s USING (source_id) WHERE s.engine = 'sglang'""").fetchall()
    assert len(rows) == 318 + 300 + 202 + 43 + 79 + 184 + 59 + 115 + 114 + 79
    files = {}
    for name, line_no, running, gen, kv, acc, fwd in rows:
        rel = next(r for r in SAMPLE_FACTS if r.endswith(name))
        lines = files.setdefault(rel, (SAMPLES / rel).read_bytes().split(b"\n"))
        raw = lines[line_no - 1].decode()
        assert running == int(re.search(r"#running-req: (\d+)", raw).group(1))
        assert gen == float(re.search(r"gen throughput \(token/s\): ([\d.]+)", raw).group(1))
        assert kv == float(re.search(r"(?:full )?token usage: ([\d.]+)", raw).group(1))
        m = re.search(r"accept len: ([\d.]+)", raw)
        assert acc == (float(m.group(1)) if m else None)
        m = re.search(r"Decode batch \[(\d+)\]", raw)
        assert fwd == (int(m.group(1)) if m else None)


def test_ranks_and_dp(sdb):
    # v0.4.8 DP attention: each DP rank prints its own decode lines and is its own scheduler, so each
    # DP rank's lowest TP rank is primary (all four DP schedulers count in aggregates)
    got = sdb.execute("""SELECT dp_rank, count(*), bool_and(primary_rank)
                         FROM decode_stats JOIN sources s USING (source_id) WHERE s.name = 'sglang_v0.4.8_dp.log'
                         GROUP BY 1 ORDER BY 1""").fetchall()
    assert got == [(0, 46, True), (1, 46, True), (2, 46, True), (3, 46, True)]
    # 96 of the 184 decode lines have #running-req > 32 and all of them say cuda graph: False
    assert sdb.execute("""SELECT count(*) FILTER (WHERE running_reqs > 32), count(*) FILTER (WHERE running_reqs > 32
                          AND NOT cuda_graph), count(*) FILTER (WHERE running_reqs <= 32 AND cuda_graph)
                          FROM decode_stats JOIN sources s USING (source_id) WHERE s.name = 'sglang_v0.4.8_dp.log'""").fetchone() == (96, 96, 88)


def test_vllm_preemptions_and_prefix_cache(sdb):
    pre = sdb.execute("""SELECT count(preemptions), sum(preemptions) FROM decode_stats JOIN sources s USING (source_id)
                         WHERE s.name = 'vllm_v1_0.12_color.log'""").fetchone()
    assert pre == (10, 33)
    hits = sdb.execute("""SELECT count(*), min(value), max(value) FROM events JOIN sources s USING (source_id)
                          WHERE s.name = 'vllm_v0_0.6.6_prefix_cache.log' AND events.kind = 'prefix_cache_hit'""").fetchone()
    assert hits == (24, 62.15, 87.71)


def test_crash_kinds(sdb):
    rows = sdb.execute("""SELECT e.line_no, e.kind, e.fatal FROM errors e JOIN sources s USING (source_id)
                          WHERE s.name = 'vllm_illegal_memory_access.log' ORDER BY e.line_no""").fetchall()
    assert rows == [(139, "worker_exception", True), (162, "worker_exception", True),
                    (187, "engine_core_fatal_error", True), (217, "output_handler_failed", True)]
    msgs = sdb.execute("""SELECT string_agg(message, ' | ') FROM errors JOIN sources s USING (source_id)
                          WHERE s.name = 'vllm_illegal_memory_access.log'""").fetchone()[0]
    assert "illegal memory access" in msgs and "EngineDeadError" in msgs
    oom = sdb.execute("""SELECT e.line_no, e.last_line, e.kind FROM errors e JOIN sources s USING (source_id)
                         WHERE s.name = 'sglang_capture_oom.log' ORDER BY 1""").fetchall()
    # each failure event is one record: the chained tracebacks end in "Capture cuda graph failed"
    assert oom == [(79, 135, "cuda_graph_capture_failed"), (136, 192, "cuda_graph_capture_failed"),
                   (193, None, "child_failed")]
    kv = sdb.execute("""SELECT e.kind FROM errors e JOIN sources s USING (source_id)
                        WHERE s.name = 'vllm_kv_too_small.log' ORDER BY e.line_no""").fetchall()
    assert kv == [("engine_core_failed_to_start",), ("kv_cache_too_small",), ("engine_init_failed",)]


def test_env_reports(sdb):
    rows = dict((n, (k, g, c, cc)) for n, k, g, c, cc in sdb.execute(
        """SELECT s.name, e.kind, e.gpu_name, e.gpu_count, e.gpu_cc FROM env_reports e JOIN sources s USING (source_id)"""
    ).fetchall())
    assert set(rows) == {p.split("/")[-1] for p in SAMPLE_FACTS if p.startswith("env/")}
    assert rows["rtxpro6000_check_env.txt"][1:] == ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, "12.0")
    assert rows["rtxpro6000_nvidia-smi.txt"][2] == 8
    # env reports hold no runs
    assert sdb.execute("""SELECT count(*) FROM runs JOIN sources s USING (source_id) WHERE s.kind = 'env_report'""").fetchone()[0] == 0
