"""The real corpus (../shared/corpus/real): every file ingested once, checked against facts read
from the files themselves (grep/wc), not from the tool.

Each expectation below was worked out by reading the file: physical line counts are
``wc -l`` (+1 when the last line has no newline), stats counts are ``grep -c`` of the line
shape, run boundaries and end states come from reading the launch, ready, error and
shutdown lines. Typed values are re-derived from the raw lines with independent regexes.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.paths import CORPUS, corpus_files
from support.db import source_id, typed_row_counts

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="real corpus not available")

ALLOWED_KINDS = {"lines", "unparsed", "events", "config", "errors", "decode_stats", "prefill_stats",
                 "spec_stats", "bench_results"}

# runs: (first_line, last_line, end_state, ready_line, end_line)
# counts: decode_stats, prefill_stats, spec_stats, bench_results, errors, fatal errors
# run: columns of the runs row (first run unless "run2")
# floor: minimum share of lines claimed by a pattern (parse coverage)
FACTS: dict[str, dict] = {
    "sglang__BBuf__sglang__openai_api.ipynb-outputs.log": dict(
        kind="server_log", engine="sglang", n_lines=93,
        runs=[(1, 93, "served", 31, 93)],  # "fired up" at 31, chat/completions traffic after it
        counts=(26, 12, 0, 0, 0, 0),  # 12 "Prefill batch" lines, one glued after client output (line 42)
        run=dict(attention_backend="flashinfer", tp_size=1, model="meta-llama/Meta-Llama-3.1-8B-Instruct",
                 kv_cache_tokens=217512, weight_load_s=3.0, model_arch="LlamaForCausalLM", cuda_graph=True),
        floor=0.95),
    "sglang__Jiminator__sglang-rtx-pro-6000__benchmark-results.md": dict(
        kind="bench", engine="bench", n_lines=112,  # 111 newlines, last line "```" has none
        runs=[(1, 112, None, None, 112)], counts=(0, 0, 0, 2, 0, 0), floor=1.0),
    "sglang__Jiminator__sglang-rtx-pro-6000__srv_decode_excerpt_r15.txt": dict(
        kind="server_log", engine="sglang", n_lines=16,
        # an excerpt of a serving run: no launch, no ready line, 214 running requests
        runs=[(1, 16, "served", None, 16)], counts=(16, 0, 0, 0, 0, 0), floor=1.0),
    "sglang__TianyangChen357__LLM__sglang.log": dict(
        kind="server_log", engine="sglang", n_lines=59,  # no trailing newline
        # ends inside "Capture cuda graph begin ... Capturing batches (bs=1 ...)": never ready
        runs=[(1, 59, "truncated", None, 59)], counts=(0, 0, 0, 0, 0, 0),
        run=dict(tp_size=2, model="Qwen/Qwen3-14B", kv_cache_tokens=139814, model_arch="Qwen3ForCausalLM",
                 attention_backend="flashinfer", attention_backend_how="default (logged)", ready=False),
        floor=0.94),  # 56 of 59: a "Key:  value" line outside any benchmark block is not claimed
    "sglang__bowenwan6__sglang-vllm-profiler__sglang_server.log": dict(
        kind="server_log", engine="sglang", n_lines=171,
        # fired up at 48, SIGTERM at 170 ("Draining requests and shutting down")
        runs=[(1, 171, "served", 48, 170)], counts=(2, 59, 0, 0, 0, 0),
        run=dict(kv_cache_tokens=729090, cuda_graph_capture_s=19.28, model_arch="Qwen3VLForConditionalGeneration"),
        floor=0.95),
    "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log": dict(
        kind="server_log", engine="sglang", n_lines=60,
        # a traceback tail (no "Traceback" head) + "Received sigquit": the boot failed
        # root cause: the traceback tail at 1, not the sigquit at 60
        runs=[(1, 60, "startup_failed", None, 1)], counts=(0, 0, 0, 0, 2, 1), floor=1.0),
    "sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log": dict(
        kind="server_log", engine="sglang", n_lines=25,
        # root cause: the CompilationError traceback, not the sigquit
        runs=[(1, 25, "startup_failed", None, 1)], counts=(0, 0, 0, 0, 2, 1), floor=1.0),
    "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log": dict(
        kind="server_log", engine="sglang", n_lines=2158,
        runs=[(1, 2158, "served", 2057, 2158)], counts=(78, 8, 0, 0, 0, 0),
        run=dict(attention_backend="triton", tp_size=2, kv_cache_dtype="fp8_e4m3", kv_cache_tokens=422310,
                 cuda_graph=False, quantization="awq", gpu_vendor="amd", weight_load_s=12.03),
        floor=0.99),
    "sglang__udbhav-ag__SGLang_setup__sglang.log": dict(
        kind="server_log", engine="sglang", n_lines=181,
        runs=[(1, 181, "served", 125, 181)], counts=(6, 3, 0, 0, 0, 0),
        # FlashInfer's JIT cache folder ".../flashinfer/0.5.3/89/cached_ops" names the arch (SM89)
        run=dict(model="meta-llama/Llama-3.2-3B", tp_size=1, gpu_sm="SM89", gpu_vendor="nvidia"),
        floor=0.6),  # most of the rest are the user's own debug prints ("Radix Cache", "Node: <...>")
    "vllm-bench__dishantghai__ai-perf-hw3-spec-decode-quant__c2_n2_bench.log": dict(
        kind="bench", engine="bench", n_lines=47,
        runs=[(1, 47, None, None, 47)], counts=(0, 0, 0, 1, 0, 0), floor=0.9),
    "vllm__0324wy__MapCoder__vllm.log": dict(
        kind="server_log", engine="vllm", n_lines=281,
        # V0 0.6.4.post1, every stats line 0.0 tok/s: idle
        runs=[(1, 281, "ready_idle", 69, 281)], counts=(210, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.6.4.post1", tp_size=2, attention_backend="FLASH_ATTN",
                 model="meta-llama/Llama-3.1-8B-Instruct", kv_cache_tokens=500544, cuda_graph_capture_s=9.0),
        floor=0.99),
    "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out": dict(
        kind="server_log", engine="vllm", n_lines=533,
        # the batch script banner (1-18) precedes the process
        runs=[(20, 533, "served", 176, 533)], counts=(76, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.12.0", tp_size=2, kv_cache_tokens=833344, attention_backend="FLASH_ATTN",
                 gpu_name="NVIDIA H100 80GB HBM3", gpu_sm="SM90", gpu_source="log_hint:moe_config"),
        floor=0.95),
    "vllm__amdgoose__arno_vllm_chat__vllm_server.log": dict(
        kind="server_log", engine="vllm", n_lines=496,
        # only /health probes after startup, then a planned shutdown at 492
        runs=[(1, 496, "ready_idle", 80, 492)], counts=(0, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.17.0", attention_backend="TRITON_ATTN", gpu_vendor="amd",
                 kv_cache_tokens=782800, model="Qwen/Qwen2.5-7B-Instruct"),
        floor=0.99),
    "vllm__faradawn__bench3__vllm_server.log": dict(
        kind="server_log", engine="vllm", n_lines=167,
        runs=[(1, 167, "served", 87, 167)], counts=(12, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.11.2", attention_backend="FLASH_ATTN", kv_cache_tokens=868080),
        floor=0.99),
    "vllm__leadawon__structrag__vllm.log": dict(
        kind="server_log", engine="vllm", n_lines=150,
        # V0: 51 stats lines, all 0.0 throughput; planned shutdown at 140
        runs=[(1, 150, "ready_idle", 85, 140)], counts=(51, 0, 0, 0, 0, 0),
        # capture: the driver (rank 0, unprefixed) says 27 s, the three workers 28 s
        run=dict(engine_version="0.6.3.post1", tp_size=4, kv_cache_tokens=2987 * 16, cuda_graph_capture_s=27.0),
        floor=0.99),
    "vllm__mrpid12org__imageworks__nohup.out": dict(
        kind="server_log", engine="vllm", n_lines=419,
        # launch 1 fails ("Free memory on device (13.58/15.99 GiB) on startup is less than desired ...");
        # "vLLM server exited with status 1" (151); the wrapper relaunches at 152 and that one serves
        runs=[(1, 151, "startup_failed", None, 25), (152, 419, "served", 252, 415)],
        counts=(37, 0, 0, 0, 4, 3),
        run=dict(engine_version="0.10.2", ready=False, gpu_memory_gib=15.99),
        run2=dict(engine_version="0.10.2", attention_backend="FLASH_ATTN", kv_cache_tokens=18400, ready=True),
        floor=0.99),
    "vllm__parallelworks__activate-rag-vllm__run.debug-00074.out": dict(
        kind="server_log", engine="vllm", n_lines=796,
        # vLLM's own "Application startup complete" is 544 (the rag proxy's uvicorn at 338 is not it);
        # the SLURM job is cancelled at 785; the 3 tracebacks are the RAG proxy's (non-fatal)
        # the job preamble ends at the `singularity exec` launch
        runs=[(221, 796, "killed", 544, 785)], counts=(0, 0, 0, 0, 3, 0),
        run=dict(engine_version="0.13.0", tp_size=4, attention_backend="FLASH_ATTN", kv_cache_tokens=914832,
                 cuda_graph_capture_s=91.0),
        floor=0.95),
    "vllm__sostrowsk__dgx-spark-local-llm__qwen36.log": dict(
        kind="server_log", engine="vllm", n_lines=426,
        # line 1 is the script's "START ..." echo
        runs=[(2, 426, "served", 212, 407)], counts=(48, 0, 37, 0, 0, 0),
        run=dict(engine_version="0.25.1", spec_method="mtp", num_spec_tokens=3, gpu_name="NVIDIA GB10",
                 gpu_sm="SM121", kv_cache_tokens=3366051),
        floor=0.99),
    "vllm__sostrowsk__dgx-spark-local-llm__vllm-run1-oom.log": dict(
        kind="server_log", engine="vllm", n_lines=124,
        # killed during torch.compile with no error line: the log just stops
        runs=[(2, 124, "truncated", None, 124)], counts=(0, 0, 0, 0, 0, 0),
        run=dict(spec_method="dflash", num_spec_tokens=15, ready=False),
        floor=0.97),
    "vllm__sostrowsk__dgx-spark-local-llm__vllm.log": dict(
        kind="server_log", engine="vllm", n_lines=518,
        # EngineDeadError after the planned shutdown (491): served, and the error is not fatal
        runs=[(2, 518, "served", 261, 491)], counts=(65, 0, 64, 0, 1, 0),
        run=dict(engine_version="0.25.1", spec_method="dflash", num_spec_tokens=15, kv_cache_tokens=94135,
                 attention_backend="FLASH_ATTN", gpu_name="NVIDIA GB10", gpu_sm="SM121",
                 cuda_graph_capture_s=11.0),
        floor=0.99),
    "vllm__vllm-project__production-stack__vllm_server.log": dict(
        kind="server_log", engine="vllm", n_lines=79,
        runs=[(1, 79, "served", 65, 75)], counts=(0, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.9.0.1", cuda_graph=False, kv_cache_tokens=1028832),  # enforce_eager
        floor=0.99),
    "vllm__zjpzhao__vllm-qwen3vl-cu118-t4__vllm_server.log": dict(
        kind="server_log", engine="vllm", n_lines=46,
        # ready on the last line (uvicorn, no timestamp): time to ready from the last stamped line before
        runs=[(1, 46, "ready_idle", 46, 46)], counts=(0, 0, 0, 0, 0, 0),
        run=dict(engine_version="0.11.0", attention_backend="XFORMERS", cuda_graph=False, kv_cache_tokens=56288,
                 time_to_ready_s=42.0),  # 15:21:34 (platform line) -> 15:22:16 (API server start)
        floor=1.0),
}


def _physical_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def test_facts_cover_every_corpus_file():
    assert sorted(FACTS) == sorted(p.name for p in corpus_files())


@pytest.fixture(scope="module")
def corpus_db():
    from support.ingested import connect

    con = connect("corpus")
    yield con
    con.close()


def _sid(con, name: str) -> int:
    return source_id(con, name)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_source_kind_and_line_accounting(corpus_db, name):
    facts = FACTS[name]
    path = CORPUS / name
    assert _physical_lines(path) == facts["n_lines"]
    sid = _sid(corpus_db, name)
    kind, engine, n_lines = corpus_db.execute(
        "SELECT kind, engine, n_lines FROM sources WHERE source_id = ?", [sid]).fetchone()
    assert (kind, engine) == (facts["kind"], facts["engine"])
    assert n_lines == facts["n_lines"]
    n, lo, hi, distinct = corpus_db.execute(
        "SELECT count(*), min(line_no), max(line_no), count(DISTINCT line_no) FROM lines WHERE source_id = ?",
        [sid]).fetchone()
    assert (n, lo, hi, distinct) == (facts["n_lines"], 1, facts["n_lines"], facts["n_lines"])
    kinds = {k for (k,) in corpus_db.execute("SELECT DISTINCT kind FROM lines WHERE source_id = ?", [sid]).fetchall()}
    assert kinds <= ALLOWED_KINDS
    # every line belongs to a run of this source
    orphans = corpus_db.execute("""SELECT count(*) FROM lines l LEFT JOIN runs r USING (run_id)
                                   WHERE l.source_id = ? AND r.source_id IS DISTINCT FROM l.source_id""",
                                [sid]).fetchone()[0]
    assert orphans == 0


@pytest.mark.parametrize("name", sorted(FACTS))
def test_raw_text_is_kept(corpus_db, name):
    """lines.raw is the physical line (colour codes kept, secrets masked): spot-check every 7th line
    (tests/ingest/test_roundtrip.py checks every line byte for byte)."""
    sid = _sid(corpus_db, name)
    raw = (CORPUS / name).read_bytes().split(b"\n")
    stored = dict(corpus_db.execute("SELECT line_no, raw FROM lines WHERE source_id = ? AND line_no % 7 = 1",
                                    [sid]).fetchall())
    for line_no, text in stored.items():
        want = raw[line_no - 1].decode("utf-8", "replace").rstrip("\r")
        if "***" in text:  # redacted
            continue
        assert text == want[: len(text)] and len(text) >= min(len(want), 65536) - 1, line_no


@pytest.mark.parametrize("name", sorted(FACTS))
def test_runs_and_end_states(corpus_db, name):
    facts = FACTS[name]
    sid = _sid(corpus_db, name)
    got = corpus_db.execute("""SELECT first_line, last_line, end_state, ready_line, end_line FROM runs
                               WHERE source_id = ? ORDER BY ordinal""", [sid]).fetchall()
    assert got == facts["runs"]
    for key in ("run", "run2"):
        if key not in facts:
            continue
        ordinal = 1 if key == "run" else 2
        cols = list(facts[key])
        row = corpus_db.execute(f"SELECT {', '.join(cols)} FROM runs WHERE source_id = ? AND ordinal = ?",
                                [sid, ordinal]).fetchone()
        for col, want, have in zip(cols, facts[key].values(), row):
            if isinstance(want, float):
                assert have == pytest.approx(want, abs=0.01), col
            else:
                assert have == want, col


@pytest.mark.parametrize("name", sorted(FACTS))
def test_row_counts(corpus_db, name):
    sid = _sid(corpus_db, name)
    assert typed_row_counts(corpus_db, sid) == FACTS[name]["counts"]


@pytest.mark.parametrize("name", sorted(FACTS))
def test_parse_coverage_floor(corpus_db, name):
    sid = _sid(corpus_db, name)
    share = corpus_db.execute("""SELECT 1 - count(*) FILTER (WHERE kind = 'unparsed') / count(*)
                                 FROM lines WHERE source_id = ?""", [sid]).fetchone()[0]
    assert share >= FACTS[name]["floor"]


# ---------------------------------------------------------------- typed values vs. the raw lines

def _raw_line(name: str, line_no: int) -> str:
    line = (CORPUS / name).read_bytes().split(b"\n")[line_no - 1].decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def _num(pattern: str, text: str) -> float | None:
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None


def test_every_sglang_decode_row_matches_its_line(corpus_db):
    rows = corpus_db.execute("""SELECT s.name, d.line_no, d.running_reqs, d.gen_tok_s, d.kv_usage, d.queued_reqs,
                                       d.cuda_graph, d.tokens
                                FROM decode_stats d JOIN sources s USING (source_id) WHERE s.engine = 'sglang'""").fetchall()
    assert len(rows) == 26 + 16 + 2 + 78 + 6
    for name, line_no, running, gen, kv, queued, graph, tokens in rows:
        raw = _raw_line(name, line_no)
        assert "Decode batch" in raw
        assert running == _num(r"#running-req: (\d+)", raw)
        assert gen == _num(r"gen throughput \(token/s\): ([\d.]+)", raw)
        assert kv == _num(r"(?:full )?token usage: ([\d.]+)", raw)
        assert queued == _num(r"#queue-req: (\d+)", raw)
        assert tokens == _num(r"#(?:full )?token: (\d+)", raw)
        want_graph = re.search(r"cuda graph: (True|False)", raw)
        assert graph == ((want_graph.group(1) == "True") if want_graph else None)


def test_every_vllm_stats_row_matches_its_line(corpus_db):
    rows = corpus_db.execute("""SELECT s.name, d.line_no, d.gen_tok_s, d.prompt_tok_s, d.running_reqs, d.queued_reqs,
                                       d.swapped_reqs, d.kv_usage, d.prefix_hit_rate
                                FROM decode_stats d JOIN sources s USING (source_id) WHERE s.engine = 'vllm'""").fetchall()
    assert len(rows) == 210 + 76 + 12 + 51 + 37 + 48 + 65
    for name, line_no, gen, prompt, running, queued, swapped, kv, hit in rows:
        raw = _raw_line(name, line_no)
        assert gen == _num(r"Avg generation throughput: ([\d.]+)", raw)
        assert prompt == _num(r"Avg prompt throughput: ([\d.]+)", raw)
        assert running == _num(r"Running: (\d+) reqs", raw)
        assert queued == _num(r"(?:Waiting|Pending): (\d+) reqs", raw)
        assert swapped == _num(r"Swapped: (\d+) reqs", raw)
        assert kv == pytest.approx(_num(r"GPU KV cache usage: ([\d.]+)%", raw) / 100)
        want_hit = _num(r"Prefix cache hit rate: ([\d.]+)%", raw)
        assert hit == (pytest.approx(want_hit / 100) if want_hit is not None else None)


def test_decode_spot_checks(corpus_db):
    def row(name, line_no, cols):
        return corpus_db.execute(f"SELECT {cols} FROM decode_stats d JOIN sources s USING (source_id) "
                                 "WHERE s.name = ? AND d.line_no = ?", [name, line_no]).fetchone()

    bbuf = "sglang__BBuf__sglang__openai_api.ipynb-outputs.log"
    assert row(bbuf, 36, "gen_tok_s, running_reqs, tokens, kv_usage, tp_rank") == (39.15, 1, 104, 0.0, 0)
    excerpt = "sglang__Jiminator__sglang-rtx-pro-6000__srv_decode_excerpt_r15.txt"
    # "[2026-06-22 20:44:25 DP5 TP5] ... #full token: 272896, full token usage: 0.10, ... swa token usage: 0.44"
    assert row(excerpt, 4, "gen_tok_s, running_reqs, tokens, kv_usage, swa_usage, dp_rank, tp_rank, cuda_graph") == (
        62.2, 214, 272896, 0.10, 0.44, 5, 5, True)
    r9700 = "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log"
    assert corpus_db.execute("""SELECT min(gen_tok_s), max(gen_tok_s), bool_or(cuda_graph)
                                FROM decode_stats JOIN sources s USING (source_id) WHERE s.name = ?""",
                             [r9700]).fetchone() == (0.97, 6.86, False)
    zz = "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out"
    assert row(zz, 425, "gen_tok_s, prompt_tok_s, running_reqs, queued_reqs, kv_usage, prefix_hit_rate, engine_idx") == (
        520.3, 4676.6, 8, 0, pytest.approx(0.283), pytest.approx(0.006), 0)
    fara = "vllm__faradawn__bench3__vllm_server.log"
    assert row(fara, 165, "gen_tok_s, running_reqs, kv_usage") == (1220.5, 8, pytest.approx(0.002))
    lead = "vllm__leadawon__structrag__vllm.log"
    assert corpus_db.execute("""SELECT count(*), max(gen_tok_s), max(kv_usage), count(swapped_reqs)
                                FROM decode_stats JOIN sources s USING (source_id) WHERE s.name = ?""",
                             [lead]).fetchone() == (51, 0.0, 0.0, 51)


def test_prefill_spot_checks(corpus_db):
    bbuf = "sglang__BBuf__sglang__openai_api.ipynb-outputs.log"
    got = corpus_db.execute("""SELECT line_no, new_seqs, new_tokens, cached_tokens, cache_hit_rate, kv_usage
                               FROM prefill_stats JOIN sources s USING (source_id) WHERE s.name = ?
                               AND line_no IN (35, 42) ORDER BY line_no""", [bbuf]).fetchall()
    assert got == [(35, 1, 48, 28, pytest.approx(0.2197), 0.0), (42, 1, 8, 1, pytest.approx(0.3039), 0.0)]


def test_spec_decoding_rows(corpus_db):
    name = "vllm__sostrowsk__dgx-spark-local-llm__vllm.log"
    acc, rate, accepted, drafted, per_pos, k = corpus_db.execute(
        """SELECT accept_len, draft_accept_rate, accepted_tokens, drafted_tokens, per_position, num_spec_tokens
           FROM spec_stats JOIN sources s USING (source_id) WHERE s.name = ? AND line_no = 268""", [name]).fetchone()
    assert acc == pytest.approx(3.62)  # printed mean acceptance length (>= 0.10.2: bonus token included)
    # per-token draft acceptance of a chain method: (accept_len - 1) / k, = accepted / drafted (76/435)
    assert rate == pytest.approx((3.62 - 1) / 15) == pytest.approx(76 / 435, abs=1e-3)
    assert (accepted, drafted, k) == (76, 435, 15)
    assert per_pos == pytest.approx([0.793, 0.552, 0.448, 0.310, 0.241, 0.207, 0.069] + [0.0] * 8)
    # every SpecDecoding row agrees with its line
    rows = corpus_db.execute("""SELECT s.name, line_no, accept_len, accepted_tokens, drafted_tokens, per_position
                                FROM spec_stats JOIN sources s USING (source_id)""").fetchall()
    assert len(rows) == 64 + 37
    for name, line_no, acc, accepted, drafted, per_pos in rows:
        raw = _raw_line(name, line_no)
        assert acc == _num(r"Mean acceptance length: ([\d.]+)", raw)
        assert (accepted, drafted) == (_num(r"Accepted: (\d+) tokens", raw), _num(r"Drafted: (\d+) tokens", raw))
        positions = re.search(r"Per-position acceptance rate: ([\d., ]+?), Avg", raw).group(1)
        assert per_pos == pytest.approx([float(x) for x in positions.split(",")])
    qwen = corpus_db.execute("""SELECT run_id FROM runs JOIN sources s USING (source_id)
                                WHERE s.name = 'vllm__sostrowsk__dgx-spark-local-llm__qwen36.log'""").fetchone()[0]
    mean = corpus_db.execute("SELECT mean_accept_len FROM run_summary WHERE run_id = ?", [qwen]).fetchone()[0]
    assert 2.8 <= mean <= 4.0  # "healthy speculative decoding: mean acceptance length about 2.8 to 4.0"


def test_bench_blocks(corpus_db):
    rows = corpus_db.execute("""SELECT s.name, b.line_no, b.last_line, b.tool, b.backend, b.successful_requests,
                                       b.max_concurrency, b.output_tok_s, b.total_tok_s, b.peak_output_tok_s,
                                       b.p90_e2e_ms, b.max_itl_ms
                                FROM bench_results b JOIN sources s USING (source_id) ORDER BY s.name, b.line_no""").fetchall()
    md = "sglang__Jiminator__sglang-rtx-pro-6000__benchmark-results.md"
    vb = "vllm-bench__dishantghai__ai-perf-hw3-spec-decode-quant__c2_n2_bench.log"
    assert rows == [
        (md, 10, 46, "sglang.bench_serving", "sglang", 2560, 512.0, 3261.28, 3662.79, 4725.0, 1012867.20, 29632.17),
        (md, 75, 111, "sglang.bench_serving", "sglang", 1536, 512.0, 3088.95, 3465.76, 4654.0, 983879.46, 29747.33),
        (vb, 14, 47, "vllm bench serve", None, 80, 8.0, 1069.82, 1387.32, 902.0, None, None),
    ]
    spec = corpus_db.execute("""SELECT failed_requests, accept_len, accept_rate, spec_drafts, spec_draft_tokens,
                                       spec_accepted_tokens, mean_ttft_ms, p99_itl_ms
                                FROM bench_results JOIN sources s USING (source_id) WHERE s.name = ?""", [vb]).fetchone()
    assert spec == (0, 1.40, pytest.approx(0.2025), 14542, 29084, 5889, 173.27, 9.93)


def test_errors_of_the_failed_launch(corpus_db):
    name = "vllm__mrpid12org__imageworks__nohup.out"
    rows = corpus_db.execute("""SELECT e.line_no, e.last_line, e.kind, e.fatal, e.exc_type, r.ordinal
                                FROM errors e JOIN runs r USING (run_id) JOIN sources s ON s.source_id = e.source_id
                                WHERE s.name = ? ORDER BY e.line_no""", [name]).fetchall()
    assert rows == [
        (25, 51, "engine_core_failed_to_start", True, "ValueError", 1),
        (52, 82, "insufficient_free_memory", True, "ValueError", 1),
        (83, 94, "exception_ignored", False, "AttributeError", 1),
        (95, 150, "engine_init_failed", True, "RuntimeError", 1),
    ]
    reason = corpus_db.execute("""SELECT end_reason FROM runs JOIN sources s USING (source_id)
                                  WHERE s.name = ? AND ordinal = 1""", [name]).fetchone()[0]
    assert "Free memory on device (13.58/15.99 GiB) on startup is less than desired GPU memory utilization" in reason


def test_traceback_tails_without_head(corpus_db):
    rows = corpus_db.execute("""SELECT s.name, e.line_no, e.last_line, e.kind, e.fatal FROM errors e
                                JOIN sources s USING (source_id) WHERE s.name LIKE 'sglang__mattbucci__2x-3090%'
                                ORDER BY s.name, e.line_no""").fetchall()
    assert rows == [
        ("sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log", 1, 59, "RuntimeError", False),
        ("sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__server-a1-tail.log", 60, None, "child_failed", True),
        ("sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log", 1, 24, "CompilationError", False),
        ("sglang__mattbucci__2x-3090-GA102-300-A1-sglang-inference__triton.bootfail.log", 25, None, "child_failed", True),
    ]
    tb = corpus_db.execute("""SELECT traceback FROM errors JOIN sources s USING (source_id)
                              WHERE s.name LIKE '%triton.bootfail%' AND line_no = 1""").fetchone()[0]
    assert "type fp8e4nv not supported in this architecture" in tb


def test_chained_tracebacks_are_one_record(corpus_db):
    name = "vllm__parallelworks__activate-rag-vllm__run.debug-00074.out"
    rows = corpus_db.execute("""SELECT line_no, last_line, errors.kind, fatal, exc_type FROM errors JOIN sources s
                                USING (source_id) WHERE s.name = ? ORDER BY line_no""", [name]).fetchall()
    # "ERROR: Exception in ASGI application", HFValidationError, "The above exception was the direct
    # cause ...", OSError: one record each time
    assert rows == [(574, 637, "asgi_exception", False, "OSError"),
                    (640, 704, "asgi_exception", False, "OSError"),
                    (718, 782, "asgi_exception", False, "OSError")]


def test_shutdown_errors_are_not_fatal(corpus_db):
    name = "vllm__sostrowsk__dgx-spark-local-llm__vllm.log"
    assert corpus_db.execute("""SELECT line_no, errors.kind, fatal, exc_type FROM errors JOIN sources s USING (source_id)
                                WHERE s.name = ?""", [name]).fetchall() == [
        (503, "output_handler_failed", False, "EngineDeadError")]


def test_single_stream_and_peak_throughput(corpus_db):
    got = {n: (ss, peak) for n, ss, peak in corpus_db.execute(
        "SELECT source_name, single_stream_tok_s, peak_gen_tok_s FROM run_summary WHERE engine IN ('sglang', 'vllm')"
    ).fetchall()}
    # median of gen throughput over decode lines with exactly one running request
    assert got["sglang__BBuf__sglang__openai_api.ipynb-outputs.log"] == (41.81, 5777.09)
    assert got["vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out"][1] == 520.3
    assert got["vllm__faradawn__bench3__vllm_server.log"][1] == 1220.5
    assert got["vllm__sostrowsk__dgx-spark-local-llm__vllm.log"][1] == 47.2
    assert got["vllm__leadawon__structrag__vllm.log"] == (None, 0.0)


def test_gpu_hints(corpus_db):
    got = {n: g for n, *g in corpus_db.execute(
        "SELECT s.name, gpu_name, gpu_sm, gpu_vendor, gpu_source FROM runs JOIN sources s USING (source_id)"
    ).fetchall()}
    # MoE tuning config "device_name=NVIDIA_H100_80GB_HBM3"
    assert got["vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out"][:3] == ["NVIDIA H100 80GB HBM3", "SM90", "nvidia"]
    # FlashInfer autotune cache folder ".../flashinfer_autotune_cache/0.6.13/121a/": SM121 = GB10
    for name in ("vllm__sostrowsk__dgx-spark-local-llm__vllm.log", "vllm__sostrowsk__dgx-spark-local-llm__qwen36.log"):
        assert got[name][:3] == ["NVIDIA GB10", "SM121", "nvidia"]
        assert "flashinfer" in got[name][3]
    # "Failed to import amdsmi" on a ROCm box; ROCm platform lines in vLLM
    assert got["sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log"][2] == "amd"
    assert got["vllm__amdgoose__arno_vllm_chat__vllm_server.log"][2] == "amd"
    # no hint at all: nothing invented
    assert got["vllm__faradawn__bench3__vllm_server.log"] == [None, None, None, None]


def test_time_to_ready_uses_last_timestamp_before_an_unstamped_ready_line(corpus_db):
    rows = dict(corpus_db.execute("""SELECT s.name, r.time_to_ready_s FROM runs r JOIN sources s USING (source_id)
                                     WHERE r.ready""").fetchall())
    missing = [n for n, t in rows.items() if t is None]
    assert missing == []
    # leadawon: first stamp 06:27:09, last stamp before the uvicorn ready line 06:36:20
    assert rows["vllm__leadawon__structrag__vllm.log"] == 551.0
    # SGLang's ready line carries its own timestamp: 19:44:57 (first event) -> 19:45:11
    assert rows["sglang__BBuf__sglang__openai_api.ipynb-outputs.log"] == 14.0


def test_secret_in_cli_args_is_redacted(corpus_db):
    name = "vllm__amdgoose__arno_vllm_chat__vllm_server.log"
    assert b"token-abc123" in (CORPUS / name).read_bytes()
    assert corpus_db.execute("SELECT count(*) FROM lines WHERE raw LIKE '%abc123%'").fetchone()[0] == 0
    assert corpus_db.execute("SELECT count(*) FROM config WHERE value LIKE '%abc123%'").fetchone()[0] == 0
    assert corpus_db.execute("""SELECT value FROM config JOIN sources s USING (source_id)
                                WHERE s.name = ? AND key = 'api_key'""", [name]).fetchone()[0] == "***"
