"""Redaction by property: a generated secret of any known shape, inside any container form a log
prints, never reaches the database (its file bytes or any text column) or any output format.
Multi-line request records (a prompt continued on real newlines) are masked as one record, also
across chunk boundaries.

Example counts: each of the 16 container forms runs 6 examples of 25 generated lines (2,400
secrets); the config-key properties 100 examples each, the multi-line one 6 examples of 25
records; the end-to-end property (ingest + every output) 2 examples of 16 lines, a
multi-line prompt and a token in the file name.
"""
from __future__ import annotations

import json
import string

import duckdb
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import logsleuth  # noqa: E402
from logsleuth.ingest.pipeline import IngestOptions  # noqa: E402
from logsleuth.ingest.redact import redact_config_value, redact_frame, redact_text, RedactState  # noqa: E402
from support.cli import run_in_process  # noqa: E402
from support.paths import SAMPLES  # noqa: E402

LINE_EXAMPLES = 6
BATCH = 25  # lines per example
KEY_EXAMPLES = 100
E2E_EXAMPLES = 2
from hypothesis import Phase  # noqa: E402  (no shrinking: an end-to-end example costs seconds)

ALNUM = string.ascii_letters + string.digits


def _chars(alphabet: str, lo: int, hi: int | None = None):
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi if hi is not None else lo)


# --- secrets of every known shape -------------------------------------------------------------

SHAPED = st.one_of(
    st.builds(lambda s: "hf_" + s, _chars(ALNUM, 30, 40)),
    st.builds(lambda p, s: "sk-" + p + s, st.sampled_from(["", "proj-", "ant-"]), _chars(ALNUM + "_-", 20, 48)),
    st.builds(lambda p, s: p + s, st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _chars(ALNUM, 36)),
    st.builds(lambda s: "github_pat_" + s, _chars(ALNUM + "_", 40, 82)),
    st.builds(lambda s: "glpat-" + s, _chars(ALNUM + "_-", 20, 26)),
    st.builds(lambda s: "AIza" + s, _chars(ALNUM + "_-", 35)),
    st.builds(lambda s: "AKIA" + s, _chars(string.ascii_uppercase + string.digits, 16)),
    st.builds(lambda s: "xoxb-" + s, _chars(ALNUM + "-", 24, 40)),
)
# a bare AWS secret access key: 40 random base64 characters, so upper case, lower case and
# digits mixed, and at most three '/' (parsers/redaction.toml: a candidate with four or more is
# a path; 0.4% of random keys)
def _aws_secret(rest: str, upper: str, lower: str, digit: str, slashes: list) -> str:
    chars = list(rest[:12] + upper + rest[12:24] + lower + rest[24:] + digit)
    for i in slashes:  # never the first character
        chars[i] = "/"
    return "".join(chars)


AWS_SECRET = st.builds(_aws_secret, _chars(ALNUM + "+", 37), _chars(string.ascii_uppercase, 1),
                       _chars(string.ascii_lowercase, 1), _chars(string.digits, 1),
                       st.lists(st.sampled_from([i for i in range(1, 39) if i not in (12, 25)]), max_size=3))
# a value a key names as secret: no whitespace, quotes, separators or brackets
PLAIN_VALUE = st.builds(lambda a, b: a + b, _chars(ALNUM, 4, 8), _chars(ALNUM + "_-./+@#%^*!~:", 6, 32))
# a password as JSON or a Python repr can carry it: quotes, backslashes, spaces, '@', '/'
PASSWORD = st.builds(lambda a, b, c: a + b + c, _chars(ALNUM, 4, 8),
                     st.text(alphabet=ALNUM + " \"'\\@/#$%&*()[]{}!?", min_size=2, max_size=20), _chars(ALNUM, 4, 8))
URL_PASSWORD = st.builds(lambda a, sep, b: a + sep + b, _chars(ALNUM + "@/_-.!~*$", 5, 15),
                         st.sampled_from(["@", "/", "@/", "/@"]), _chars(ALNUM + "@/_-.!~*$", 5, 15))
SECRET_KEYS = st.sampled_from([
    "api_key", "admin_api_key", "hf_token", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "password", "ssl_keyfile_password",
    "client_secret", "aws_secret_access_key", "OPENAI_API_KEY", "access_token", "secret", "credentials",
    "private_key", "WANDB_API_KEY", "auth_token"])
FLAGS = st.sampled_from(["--api-key", "--admin-api-key", "--hf-token", "--token", "--password", "--auth-token",
                         "--ssl-keyfile-password", "--client-secret"])
ANY_SECRET = st.one_of(SHAPED, AWS_SECRET, PLAIN_VALUE)


def _pyrepr(v) -> str:
    return repr(v)


#: container forms: (name, strategy of (line, secret))
def _containers():
    kv = st.tuples(SECRET_KEYS, ANY_SECRET)
    return {
        "key=value": kv.map(lambda t: (f"export {t[0]}={t[1]}", t[1])),
        "key: value": kv.map(lambda t: (f"loaded {t[0]}: {t[1]} from env", t[1])),
        "--flag value": st.tuples(FLAGS, ANY_SECRET).map(
            lambda t: (f"+ python3 -m sglang.launch_server --model-path m {t[0]} {t[1]} --port 30000", t[1])),
        "--flag=value": st.tuples(FLAGS, ANY_SECRET).map(lambda t: (f"+ vllm serve m {t[0]}={t[1]} --port 8000", t[1])),
        "argv list": st.tuples(FLAGS, ANY_SECRET).map(
            lambda t: (f"argv: ['vllm', 'serve', 'm', {t[0]!r}, {t[1]!r}, '--port', '8000']", t[1])),
        "dict repr": st.tuples(SECRET_KEYS, st.one_of(ANY_SECRET, PASSWORD)).map(
            lambda t: (f"non-default args: {{'host': '0.0.0.0', {t[0]!r}: {t[1]!r}, 'port': 8000}}", t[1])),
        "JSON": st.tuples(SECRET_KEYS, st.one_of(ANY_SECRET, PASSWORD)).map(
            lambda t: ("config " + json.dumps({"model": "m", t[0]: t[1], "tp": 2}), t[1])),
        "compact JSON": st.tuples(SECRET_KEYS, PASSWORD).map(
            lambda t: ("body=" + json.dumps({t[0]: t[1]}, separators=(",", ":")), t[1])),
        "Namespace repr": st.tuples(SECRET_KEYS.map(str.lower), st.one_of(ANY_SECRET, PASSWORD)).map(
            lambda t: (f"args: Namespace(host=None, {t[0]}={t[1]!r}, port=8000, allow_credentials=False)", t[1])),
        "ServerArgs repr": st.one_of(ANY_SECRET, PASSWORD).map(
            lambda v: (f"server_args=ServerArgs(model_path='m', api_key={v!r}, admin_api_key=None, port=30000)", v)),
        "api_keys list": st.tuples(PLAIN_VALUE, PLAIN_VALUE).map(
            lambda t: (f'non-default args: {{"api_keys": {json.dumps(list(t))}}}', t[0] + "|" + t[1])),
        "name/value dict": st.tuples(st.sampled_from(["api_key", "HF_TOKEN", "password", "token"]), ANY_SECRET).map(
            lambda t: (f"env: [{{'name': {t[0]!r}, 'value': {t[1]!r}}}, {{'name': 'TP', 'value': '2'}}]", t[1])),
        "bearer header": st.one_of(SHAPED, PLAIN_VALUE).map(lambda v: (f"headers: Authorization: Bearer {v}", v)),
        "authorization without scheme": st.one_of(SHAPED, PLAIN_VALUE).map(
            lambda v: (f"request headers {{'Authorization': '{v}', 'host': 'x'}}", v)),
        "URL password": URL_PASSWORD.map(lambda v: (f"connecting to redis://admin:{v}@10.0.0.5:6379/0", v)),
        "bare shaped": st.one_of(SHAPED, AWS_SECRET).map(lambda v: (f"using credential {v} for upload", v)),
    }


CONTAINERS = _containers()


def _pieces(secret: str) -> list[str]:
    return [p for p in secret.split("|") if p]


def _redact_lines(lines: list[str], keep_prompts: bool = False) -> list[str]:
    import polars as pl

    frame = pl.DataFrame({"line_no": list(range(1, len(lines) + 1)), "raw": lines})
    return redact_frame(frame, "raw", keep_prompts, RedactState())["raw"].to_list()


@pytest.mark.parametrize("form", sorted(CONTAINERS))
def test_no_secret_survives_its_container(form):
    # a batch of generated lines per example, masked as the ingest masks a chunk
    @settings(max_examples=LINE_EXAMPLES)
    @given(st.lists(CONTAINERS[form], min_size=BATCH, max_size=BATCH))
    def check(cases):
        lines = [line for line, _ in cases]
        out = _redact_lines(lines)
        kept = _redact_lines(lines, keep_prompts=True)  # --keep-prompts keeps prompts, not secrets
        for (line, secret), masked, masked_kp in zip(cases, out, kept):
            for piece in _pieces(secret):
                assert piece not in masked, (form, line, masked)
                assert piece not in masked_kp, (form, line, masked_kp)
        assert _redact_lines(out) == out  # idempotent

    check()


@settings(max_examples=KEY_EXAMPLES)
@given(SECRET_KEYS, st.one_of(ANY_SECRET, PASSWORD))
def test_config_values_are_masked_by_key(key, value):
    assert redact_config_value(key, value) == "***"
    assert redact_config_value(f"speculative_config.{key}", value) == "***"


@settings(max_examples=KEY_EXAMPLES)
@given(st.sampled_from(["num_tokens", "max_prompt_adapter_token", "tokenizer", "tokenizer_path",
                        "max_num_batched_tokens", "ssl_keyfile", "model"]), PLAIN_VALUE)
def test_config_values_of_other_keys_stay(key, value):
    assert redact_config_value(key, value) == value


# --- multi-line request records ---------------------------------------------------------------

PROMPT_LINE = st.text(alphabet=ALNUM + " .,:;!?-()", min_size=12, max_size=60).filter(
    lambda s: s.strip() and sum(c in ALNUM for c in s) >= 8)


def _vllm_record(lines: list[str]) -> list[str]:
    body = "\n".join(lines)
    head = ("INFO 05-01 10:00:00 [logger.py:39] Received request cmpl-0123: prompt: '" + body
            + "', params: SamplingParams(n=1, temperature=0.7), prompt_token_ids: [1, 2, 3], lora_request: None.")
    return head.split("\n")


def _sglang_record(lines: list[str]) -> list[str]:
    body = "\n".join(lines)
    head = ("[2026-01-01 10:00:00] Receive: obj=GenerateReqInput(rid='abc', text='" + body
            + "', input_ids=None, sampling_params={'max_new_tokens': 5})")
    return head.split("\n")


@settings(max_examples=LINE_EXAMPLES)
@given(st.lists(st.tuples(st.lists(PROMPT_LINE, min_size=2, max_size=6), st.sampled_from([_vllm_record, _sglang_record])),
                min_size=BATCH, max_size=BATCH), st.integers(min_value=1, max_value=400))
def test_multi_line_prompts_are_one_record_across_chunks(records, cut):
    import polars as pl

    after = "[2026-01-01 10:00:01] Decode batch. #running-req: 1, #token: 82, token usage: 0.00"
    lines = ["[2026-01-01 09:59:59] starting"]
    for prompt, record in records:
        lines += record(prompt) + [after]
    frame = pl.DataFrame({"line_no": list(range(1, len(lines) + 1)), "raw": lines})
    state = RedactState()
    cut = min(cut, frame.height - 1)  # the chunk boundary falls anywhere, inside a record too
    out = pl.concat([redact_frame(frame[:cut], "raw", False, state), redact_frame(frame[cut:], "raw", False, state)])
    text = "\n".join(out["raw"])
    for prompt, _ in records:
        for p in prompt:
            assert p.strip() not in text, (p, text)
    raw = out["raw"].to_list()
    assert raw[0] == lines[0] and raw.count(after) == len(records)  # the records around stay
    assert text.count("params: SamplingParams") + text.count("input_ids=None") == len(records)  # fields after
    kept = pl.concat([redact_frame(frame[:cut], "raw", True, RedactState()),
                      redact_frame(frame[cut:], "raw", True, RedactState())])
    assert kept["raw"].to_list() == lines  # --keep-prompts


# --- end to end: the database and every output --------------------------------------------------

HEAD = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8").splitlines()[:120]

OUTPUTS = [
    ("runs", "--format", "json"), ("runs", "--format", "csv"), ("runs",), ("show", "1"), ("show", "2"),
    ("sql", "--format", "json", "SELECT raw FROM lines"), ("sql", "--format", "csv", "SELECT * FROM config"),
    ("sql", "--format", "markdown", "SELECT * FROM sources"), ("sql", "SELECT * FROM events"),
    ("unparsed", "--limit", "500", "--format", "json"), ("unparsed", "--limit", "500"),
    ("diagnose", "--format", "json"), ("diagnose", "--format", "markdown"), ("compare", "--format", "json"),
    ("report", "-o", "-"),
]


def _text_columns(con) -> list[tuple[str, str]]:
    return con.execute("""SELECT table_name, column_name FROM information_schema.columns
                          WHERE table_schema = 'main' AND data_type = 'VARCHAR'""").fetchall()


@settings(max_examples=E2E_EXAMPLES, phases=[Phase.explicit, Phase.generate])
@given(st.tuples(*[CONTAINERS[k] for k in sorted(CONTAINERS)]), st.lists(PROMPT_LINE, min_size=2, max_size=4),
       SHAPED)
def test_generated_secrets_reach_no_table_file_or_output(tmp_path_factory, cases, prompt, name_token):
    folder = tmp_path_factory.mktemp("e2e")
    stamped = [f"[2026-02-03 10:41:{20 + i % 30:02d}] {line}" for i, (line, _) in enumerate(cases)]
    lines = HEAD[:60] + stamped + _vllm_record(prompt) + HEAD[60:]
    log = folder / f"server-{name_token}.log"  # a token in the file name
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = str(folder / "e2e.duckdb")
    con = logsleuth.open_db(db)
    try:  # small chunks: records and the multi-line prompt cross chunk boundaries
        logsleuth.ingest_files(con, [str(log)], IngestOptions(chunk_bytes=4096))
        con.execute("CHECKPOINT")
    finally:
        con.close()
    secrets = [p for _, s in cases for p in _pieces(s)] + [p.strip() for p in prompt] + [name_token]
    data = open(db, "rb").read()
    con = duckdb.connect(db, read_only=True)
    try:
        for table, column in _text_columns(con):
            for secret in secrets:
                hit = con.execute(f'SELECT count(*) FROM "{table}" WHERE contains("{column}", ?)',
                                  [secret]).fetchone()[0]
                assert hit == 0, (table, column, secret)
    finally:
        con.close()
    for secret in secrets:
        assert secret.encode() not in data, secret
    for args in OUTPUTS:
        code, out, err = run_in_process(*args, db=db)
        assert code in (0, 1, 2), (args, err)
        for secret in secrets:
            assert secret not in out and secret not in err, (args, secret)
