"""Secrets and privacy: secret-like values are masked in every table and every output by
default; request prompts (vLLM request logging, SGLang --log-requests) are replaced unless
--keep-prompts. The masking happens when a line is read, before anything is parsed or stored.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

import logsleuth
from logsleuth.ingest.pipeline import IngestOptions
from logsleuth.ingest.configparse import parse_config_line
from logsleuth.ingest.redact import redact_text

from support.cli import run_in_process
from support.paths import ROOT, SAMPLES


# --- the masking rules, line by line ----------------------------------------------------------

SECRET_CASES = [
    # (line, secret that must vanish, text that must remain)
    ("non-default args: {'host': '127.0.0.1', 'api_key': ['token-abc123'], 'model': 'Qwen/Qwen2.5-7B'}",
     "token-abc123", "'api_key': ['***'], 'model': 'Qwen/Qwen2.5-7B'"),
    ("server_args=ServerArgs(model_path='m', api_key='s3cr3t-value', admin_api_key=None, port=30000)",
     "s3cr3t-value", "api_key='***', admin_api_key=None, port=30000"),
    ("args: Namespace(hf_token=hf_AbCdEfGhIjKlMnOpQrStUv, api_key=None, allow_credentials=False)",
     "hf_AbCdEfGhIjKlMnOpQrStUv", "hf_token=***, api_key=None, allow_credentials=False"),
    ("+ python3 -m sglang.launch_server --model-path m --api-key sk-live-1234567890abcdef --port 30000",
     "sk-live-1234567890abcdef", "--api-key *** --port 30000"),
    ("+ vllm serve m --api-key=plainsecret --port 8000", "plainsecret", "--api-key=*** --port 8000"),
    ("argv: ['vllm', 'serve', '--api-key', 'quoted-secret']", "quoted-secret", "'--api-key', '***'"),
    ("export HF_TOKEN=hf_ZyXwVuTsRqPoNmLkJiHg HUGGING_FACE_HUB_TOKEN=abcdef123",
     "hf_ZyXwVuTsRqPoNmLkJiHg", "HF_TOKEN=*** HUGGING_FACE_HUB_TOKEN=***"),
    ("request headers: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTI",
     "eyJhbGciOiJIUzI1NiJ9", "Authorization: Bearer ***"),
    ("[(b'host', b'localhost:8000'), (b'authorization', b'Bearer sk-abcdefghijklmnopqrst')]",
     "sk-abcdefghijklmnopqrst", "(b'host', b'localhost:8000')"),
    ("curl -H 'x-api-key: my-header-key' http://localhost:8000", "my-header-key", "x-api-key: ***"),
    ("Mooncake master at redis://admin:hunter2@10.0.0.5:6379/0", "hunter2", "redis://admin:***@10.0.0.5:6379/0"),
    ("GET /v1/models?api_key=qs-secret&limit=5 HTTP/1.1", "qs-secret", "?api_key=***&limit=5"),
    ("OPENAI_API_KEY=sk-proj-0123456789abcdefghij", "0123456789abcdefghij", "OPENAI_API_KEY=***"),
    ("db password: 'correct horse battery'", "correct horse", "password: '***'"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ used", "ghp_0123456789abcdefghij", "ghp_***"),
]

UNTOUCHED = [
    "[2026-02-04 14:14:17 TP0] Decode batch, #running-req: 1, #token: 997, token usage: 0.00, "
    "cuda graph: True, gen throughput (token/s): 63.49, #queue-req: 0",
    "args: Namespace(max_prompt_adapter_token=0, tokenizer='meta-llama/Llama-3.1-8B', max_num_batched_tokens=8192)",
    "server_args=ServerArgs(tokenizer_path='Qwen/Qwen3-32B', skip_tokenizer_init=False, ssl_keyfile=None)",
    "INFO:     127.0.0.1:40556 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "Using default HuggingFace chat template with detected content format: openai",
    "KV Cache is allocated. #tokens: 139814, K size: 10.67 GB, V size: 10.67 GB",
]


@pytest.mark.parametrize("line,secret,kept", SECRET_CASES, ids=[c[1][:16] for c in SECRET_CASES])
def test_secret_is_masked(line, secret, kept):
    out = redact_text(line)
    assert secret not in out
    assert kept in out, out
    assert redact_text(out) == out  # idempotent
    assert secret not in redact_text(line, keep_prompts=True)  # --keep-prompts keeps prompts, not secrets


@pytest.mark.parametrize("line", UNTOUCHED)
def test_ordinary_lines_are_untouched(line):
    assert redact_text(line) == line


PROMPT_CASES = [
    ("INFO 03-08 08:30:01 logger.py:39] Received request cmpl-9f1: prompt: 'What is my bank PIN?', "
     "params: SamplingParams(n=1, temperature=0.7), prompt_token_ids: [1, 3923, 374], lora_request: None.",
     ["bank PIN", "3923"], ["Received request cmpl-9f1: prompt: <prompt redacted>", "SamplingParams(n=1"]),
    ("[2026-02-09 14:38:45] Receive: obj=GenerateReqInput(rid='8fe0', text='The capital city of France is', "
     "input_ids=None, sampling_params={'temperature': 0, 'max_new_tokens': 8}, return_logprob=False)",
     ["capital city"], ["text=<prompt redacted>, input_ids=None, sampling_params={'temperature': 0"]),
    ("[2026-02-09 14:38:46] Finish: obj=GenerateReqInput(rid='8fe0', text='The capital', input_ids=[128000, 58]), "
     "out={'text': ' Paris. It is', 'output_ids': [12366, 13], 'meta_info': {'id': '8fe0'}}",
     ["capital", "Paris", "12366", "128000"], ["'meta_info': {'id': '8fe0'}"]),
    # a line cut at the stored length ends inside the prompt: still masked
    ("[2026-02-09 14:45:26] Receive: obj=GenerateReqInput(rid='2547', text='<|begin_of_text|>[INST] The Project Gutenb",
     ["Gutenb", "INST"], ["rid='2547', text=<prompt redacted>"]),
    ("Receive: obj=GenerateReqInput(text=['first prompt', 'second, with comma'], input_ids=[[1, 2], [3, 4]], rid=['a', 'b'])",
     ["first prompt", "second, with"], ["rid=['a', 'b']"]),
    ("Received request chatcmpl-1: prompt: \"It's quoted \\\"twice\\\"\", params: SamplingParams(n=1)",
     ["quoted"], ["params: SamplingParams(n=1)"]),
    ("Generated response chatcmpl-1: output: 'Sure, here is the plan', output_token_ids: [1, 2], finish_reason: stop",
     ["here is the plan"], ["finish_reason: stop"]),
]


@pytest.mark.parametrize("line,gone,kept", PROMPT_CASES, ids=[f"prompt{i}" for i in range(len(PROMPT_CASES))])
def test_prompts_are_masked_unless_kept(line, gone, kept):
    out = redact_text(line)
    for g in gone:
        assert g not in out, out
    for k in kept:
        assert k in out, out
    assert redact_text(out) == out
    assert redact_text(line, keep_prompts=True) == line


def test_config_keys_that_name_credentials():
    msg = ("args: Namespace(api_key='abc', admin_api_key=None, hf_token='hf_x', ssl_keyfile_password='pw', "
           "max_prompt_adapter_token=0, tokenizer='t/t', num_speculative_tokens=3, allow_credentials=False)")
    got = dict(parse_config_line("pyrepr", msg))
    assert got["api_key"] == got["hf_token"] == got["ssl_keyfile_password"] == "***"
    assert got["admin_api_key"] is None and got["allow_credentials"] == "False"
    assert got["max_prompt_adapter_token"] == "0" and got["tokenizer"] == "t/t"
    assert got["num_speculative_tokens"] == "3"


# --- end to end: nothing secret in any table or any output ------------------------------------

def _text_hits(db: str, needles: list[str]) -> list[tuple]:
    """(table, column, needle) for every text cell of every table holding a needle."""
    con = duckdb.connect(db, read_only=True)
    try:
        cols = con.execute("""SELECT c.table_name, c.column_name FROM information_schema.columns c
                              JOIN information_schema.tables t USING (table_schema, table_name)
                              WHERE t.table_type = 'BASE TABLE' AND c.table_schema = 'main'""").fetchall()
        hits = []
        for table, col in cols:
            for n in needles:
                q = f'SELECT count(*) FROM "{table}" WHERE strpos(CAST("{col}" AS VARCHAR), ?) > 0'
                if con.execute(q, [n]).fetchone()[0]:
                    hits.append((table, col, n))
        return hits
    finally:
        con.close()


@pytest.fixture(scope="module")
def secret_log(tmp_path_factory) -> Path:
    """A real crash log with secrets and hostile markup put into it: in the launch command,
    in a traceback's source line and in the exception message."""
    lines = (SAMPLES / "eras" / "sglang_capture_oom.log").read_text(encoding="utf-8").split("\n")
    out = ["+ python3 -m sglang.launch_server --model-path m --api-key sk-cmdline-0123456789abcdef",
           "HF_TOKEN=hf_EnvEnvEnvEnvEnvEnvEnvEnv"]
    for ln in lines:
        if ln.startswith("    raise Exception("):
            ln = '    raise Exception(api_key="sk-traceback-0123456789abcd")'
        if ln.startswith(("Exception: Capture cuda graph failed", "torch.OutOfMemoryError: CUDA out of memory.")):
            ln = ln.replace("CUDA out of memory.", "CUDA out of memory. <script>alert(1)</script> password=hunter2", 1)
        out.append(ln)
    p = tmp_path_factory.mktemp("secret") / "secret_server.log"
    p.write_text("\n".join(out), encoding="utf-8")
    return p


SECRETS = ["sk-cmdline-0123456789abcdef", "hf_EnvEnvEnvEnvEnvEnvEnvEnv", "sk-traceback-0123456789abcd", "hunter2",
           "token-abc123"]


@pytest.fixture(scope="module")
def secret_db(tmp_path_factory, secret_log, corpus_dir_or_none) -> str:
    path = str(tmp_path_factory.mktemp("secretdb") / "s.duckdb")
    con = logsleuth.open_db(path)
    try:
        paths = [str(secret_log)]
        if corpus_dir_or_none:
            paths.append(str(corpus_dir_or_none / "vllm__amdgoose__arno_vllm_chat__vllm_server.log"))
        logsleuth.ingest_files(con, paths)
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def corpus_dir_or_none():
    from support.paths import CORPUS

    return CORPUS if (CORPUS / "vllm__amdgoose__arno_vllm_chat__vllm_server.log").is_file() else None


def test_no_secret_in_any_table(secret_db):
    assert _text_hits(secret_db, SECRETS) == []
    con = duckdb.connect(secret_db, read_only=True)
    try:
        # the traceback and the launch command are still there, masked
        tb = " ".join(f"{r[0]} {r[1]}" for r in con.execute("SELECT traceback, message FROM errors").fetchall())
        assert 'raise Exception(api_key="***")' in tb
        raw = " ".join(r[0] for r in con.execute("SELECT raw FROM lines").fetchall())
        assert "--api-key ***" in raw and "HF_TOKEN=***" in raw and "<script>alert(1)</script> password=***" in raw
        msgs = [r[0] for r in con.execute("SELECT message FROM errors WHERE message LIKE '%alert(1)%'").fetchall()]
        assert msgs and all("password=***" in m for m in msgs)
    finally:
        con.close()


def test_real_corpus_api_key_is_masked(secret_db, corpus_dir_or_none):
    if not corpus_dir_or_none:
        pytest.skip("real corpus not available")
    con = duckdb.connect(secret_db, read_only=True)
    try:
        rows = con.execute("SELECT value FROM config c JOIN sources s ON c.source_id = s.source_id "
                           "WHERE s.name LIKE 'vllm__amdgoose%' AND key = 'api_key'").fetchall()
        raw = con.execute("SELECT raw FROM lines JOIN sources USING (source_id) WHERE name LIKE 'vllm__amdgoose%' "
                          "AND raw LIKE '%non-default args%'").fetchall()
    finally:
        con.close()
    assert rows and {r[0] for r in rows} == {"***"}
    assert raw and "'api_key': ['***']" in raw[0][0]


def test_no_secret_in_any_output(secret_db):
    outputs = []
    con = duckdb.connect(secret_db, read_only=True)
    run_ids = [str(r[0]) for r in con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    con.close()
    for args in (["runs", "--format", "json"], *(["show", r] for r in run_ids), ["diagnose", "--format", "json"],
                 ["diagnose"], ["unparsed", "--limit", "200"],
                 ["sql", "SELECT * FROM lines", "--format", "csv"],
                 ["sql", "SELECT * FROM errors", "--format", "json"],
                 ["sql", "SELECT * FROM config", "--format", "csv"]):
        code, out, err = run_in_process(*args, db=secret_db)
        assert code in (0, 1), (args, err)
        outputs.append(out + err)
    text = "\n".join(outputs)
    for s in SECRETS:
        assert s not in text
    assert "***" in text


def test_html_report_masks_and_escapes(secret_db, tmp_path):
    report = pytest.importorskip("logsleuth.report")
    con = logsleuth.open_db(secret_db, read_only=True)
    try:
        page = report.build_report(con)
    finally:
        con.close()
    for s in SECRETS:
        assert s not in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; password=***" in page  # the error message, escaped and masked


# --- request logging: prompts stored replaced unless --keep-prompts ---------------------------

REQUEST_LOG = """\
INFO 03-08 08:22:22 api_server.py:586] vLLM API server version 0.6.4.post1
INFO 03-08 08:22:22 api_server.py:587] args: Namespace(model='m', api_key='k-123-secret', port=8000)
INFO 03-08 08:30:01 logger.py:37] Received request cmpl-9f1: prompt: 'My social security number is 078-05-1120', params: SamplingParams(n=1, temperature=0.7, max_tokens=16), prompt_token_ids: [1, 3923, 374, 856], lora_request: None, prompt_adapter_request: None.
INFO 03-08 08:30:01 engine.py:267] Added request cmpl-9f1.
INFO 03-08 08:30:02 metrics.py:349] Avg prompt throughput: 1.2 tokens/s, Avg generation throughput: 20.1 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%.
"""


@pytest.mark.parametrize("keep", [False, True], ids=["default", "keep-prompts"])
def test_vllm_request_logging(tmp_path, keep):
    log = tmp_path / "requests.log"
    log.write_text(REQUEST_LOG, encoding="utf-8")
    db = str(tmp_path / "r.duckdb")
    code, _, err = run_in_process("ingest", *(["--keep-prompts"] if keep else []), str(log), db=db)
    assert code == 0, err
    prompt_hits = _text_hits(db, ["078-05-1120", "3923, 374"])
    assert bool(prompt_hits) is keep
    assert _text_hits(db, ["k-123-secret"]) == []  # secrets are masked either way
    con = duckdb.connect(db, read_only=True)
    try:
        raw = con.execute("SELECT raw FROM lines WHERE line_no = 3").fetchone()[0]
    finally:
        con.close()
    assert ("prompt: <prompt redacted>, params: SamplingParams(n=1" in raw) is not keep


@pytest.fixture(scope="module")
def sglang_request_db(tmp_path_factory, corpus_dir):
    out = {}
    for keep in (False, True):
        path = str(tmp_path_factory.mktemp("sglreq") / "db.duckdb")
        con = logsleuth.open_db(path)
        try:
            logsleuth.ingest_files(con, [str(corpus_dir / "sglang__udbhav-ag__SGLang_setup__sglang.log")],
                             IngestOptions(keep_prompts=keep))
        finally:
            con.close()
        out[keep] = path
    return out


@pytest.fixture(scope="module")
def corpus_dir():
    from support.paths import CORPUS

    if not (CORPUS / "sglang__udbhav-ag__SGLang_setup__sglang.log").is_file():
        pytest.skip("real corpus not available (../shared/corpus/real)")
    return CORPUS


PROMPT_TEXT = ["The capital city of France is", "Paris. It is the most visited", "Project Gutenberg eBook"]


def test_sglang_log_requests_prompts_masked(sglang_request_db):
    db = sglang_request_db[False]
    assert _text_hits(db, PROMPT_TEXT) == []
    con = duckdb.connect(db, read_only=True)
    try:
        requests = [r[0] for r in con.execute(
            "SELECT raw FROM lines WHERE raw LIKE '%: obj=GenerateReqInput(%'").fetchall()]
    finally:
        con.close()
    assert requests
    for raw in requests:  # the prompt is given as text or as token ids: either way masked
        assert re.search(r"[(, ]text=(None|<prompt redacted>)(, |$)", raw), raw[:300]
        if "input_ids=" in raw:  # a line cut at the stored length may end inside text=
            assert re.search(r"[(, ]input_ids=(None|<prompt redacted>)(, |$)", raw), raw[:300]
        if "out={" in raw:
            assert "'text': <redacted>" in raw and "'output_ids': <output redacted>" in raw


def test_sglang_log_requests_kept_on_request(sglang_request_db):
    hits = {n for _, _, n in _text_hits(sglang_request_db[True], PROMPT_TEXT)}
    assert hits == set(PROMPT_TEXT)
