"""Secrets by class (round 3): PEM private-key blocks, shell variables named like a
credential, connection strings, webhook URLs, `curl -u`, signed URL signatures,
`os.environ[...]` assignments, escaped and URL-encoded separators, space-separated
passwords and tokens, provider token prefixes, `wandb login`, bench JSON plural outputs.
Each secret is checked in one line (``redact_text``) and in a frame of lines (the ingest's
path), and by property over every container and separator form."""
from __future__ import annotations

import string

import polars as pl
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from logsleuth.ingest.redact import RedactState, redact_frame, redact_text  # noqa: E402

S = "Zq8xW3vR7tY2uP5sK9mN4bJ6"  # a secret value: mixed case and digits, 24 characters

CASES = {
    "shell export, unlisted name": (f"export DATABRICKS_TOKEN=dapi{S}", S),
    "vault token": (f"VAULT_TOKEN=hvs.{S}", S),
    "npm token": (f"NPM_TOKEN=npm_{S}", S),
    "CI job token": (f"CI_JOB_TOKEN={S}", S),
    "a *_PASS variable": (f"MY_PASS={S} ./run.sh", S),
    "a *_CREDENTIALS variable, quoted": (f'DB_CREDENTIALS="{S}"', S),
    "a *_AUTH variable": (f"export PROXY_AUTH='{S}'", S),
    "Azure connection string": (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={S}+/a==;"
                                "EndpointSuffix=core.windows.net", S),
    "Service Bus connection string": (f"Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;"
                                      f"SharedAccessKey={S}=", S),
    "SAS in a connection string": (f"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020&sig={S}",
                                   S),
    "Password= in a connection string": (f"Server=db;Database=x;User Id=sa;Password={S};", S),
    "Slack webhook": (f"posting to https://hooks.slack.com/services/T0ABCDE/B0FGHIJ/{S}", S),
    "Discord webhook": (f"https://discord.com/api/webhooks/123456789/{S}", S),
    "curl -u": (f"curl -u admin:{S} https://x/metrics", S),
    "curl --user=": (f"curl --user=admin:{S} https://x", S),
    "S3 presigned URL": (f"GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Signature={S}abcdef", S),
    "GCS signed URL": (f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4&X-Goog-Signature={S}", S),
    "Azure SAS sig=": (f"https://a.blob.core.windows.net/c/b?sv=2021&sig={S}%3D", S),
    "os.environ assignment": (f'os.environ["OPENAI_API_KEY"]="{S}"', S),
    "os.environ assignment of an unlisted name": (f"os.environ['VAULT_TOKEN'] = '{S}'", S),
    "JSON-escaped argv list": (f'"args": "[\\"--api-key\\", \\"{S}\\"]"', S),
    "password, space": (f"mysql login with password {S}", S),
    "passwd, space": (f"passwd {S}", S),
    "token, space": (f"using token {S}", S),
    "HF_TOKEN \\u003d": (f'"env": "HF_TOKEN\\u003d{S}"', S),
    "api_key %3D": (f"GET /v1/x?cfg=api_key%3D{S}", S),
    "api_key \\u003a": (f'{{"api_key\\u003a {S}"}}', S),
    "Stripe live key": (f"stripe key sk_live_{S}", S),
    "Stripe restricted key": (f"rk_live_{S}", S),
    "Slack app token": (f"xapp-1-A0{S}", S),
    "NVIDIA API key": (f"nvapi-{S}", S),
    "Groq key": (f"gsk_{S}", S),
    "PyPI token": (f"pypi-AgEIcHlwaS5vcmc{S}", S),
    "SendGrid key": (f"SG.{S}.{S}", S),
    "wandb login, 40 hex": ("wandb login 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef"),
    "wandb login --relogin": ("wandb login --relogin 89abcdef0123456789abcdef0123456789abcdef", "89abcdef01234567"),
    "bench JSON generated_texts": ('{"completed": 2, "generated_texts": ["the secret reply", "another reply"]}',
                                   "secret reply"),
    "bench JSON output_texts": ('{"output_texts": ["the secret reply"]}', "secret reply"),
    "one-line escaped PEM": (f'"key": "-----BEGIN PRIVATE KEY-----\\nMIIEv{S}\\n{S}\\n-----END PRIVATE KEY-----"', S),
}


def _frame(lines: list[str]) -> list[str]:
    return redact_frame(pl.DataFrame({"raw": lines}), "raw", False, RedactState())["raw"].to_list()


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_class_is_masked(case):
    line, secret = CASES[case]
    assert secret not in redact_text(line), redact_text(line)
    assert secret not in _frame([line])[0], _frame([line])[0]


def test_a_pem_block_is_masked_to_its_end():
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + S[:12],
            "Xk2m" + S + "q8ZyP0aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
            "u3Yw" + S[:10] + "==",
            "Tk8vQ2x1ZGVyAw=="]
    lines = ["[2026-02-03 10:00:00] INFO loading key", "-----BEGIN RSA PRIVATE KEY-----", *body,
             "-----END RSA PRIVATE KEY-----", "[2026-02-03 10:00:01] INFO next"]
    out = _frame(lines)
    for b in body:
        assert b not in "\n".join(out), out
    assert out[0] == lines[0] and out[-1] == lines[-1] and out[1] == lines[1] and out[-2] == lines[-2]


@pytest.mark.parametrize("line", [
    "[2026-02-03 10:00:00] INFO Prefill batch. #new-seq: 1, #new-token: 82, #cached-token: 0",
    "max_prompt_adapter_token=0 num_tokens=128 tokenizer=meta/llama",
    "0123456789abcdef0123456789abcdef01234567",  # a commit id alone: not a wandb key
    "token 82 of 100 generated",
    "NCCL INFO Using network Socket",
    "export CUDA_VISIBLE_DEVICES=0,1,2,3",
    "SGLANG_ENABLE_TORCH_COMPILE=1 KEY_VALUE_CACHE_DTYPE=fp8",
])
def test_ordinary_lines_stay(line):
    assert redact_text(line) == line
    assert _frame([line]) == [line]


# --- by property ------------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
VALUE = st.text(alphabet=ALNUM, min_size=18, max_size=40).filter(
    lambda v: any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v))
NAME = st.builds(lambda a, b: f"{a}_{b}", st.sampled_from(["CI_JOB", "VAULT", "MY", "DATABRICKS", "NPM", "SVC"]),
                 st.sampled_from(["TOKEN", "KEY", "SECRET", "PASS", "PASSWORD", "CREDENTIALS", "AUTH"]))
SEP = st.sampled_from(["=", "\\u003d", "%3D", "%3d"])
FORM = st.sampled_from([
    "{name}{sep}{v}", "export {name}{sep}{v}", "{name}{sep}'{v}'", '{name}{sep}"{v}"', "env {name}{sep}{v} run",
    'os.environ["{name}"]{sep}"{v}"', "os.environ['{name}'] = '{v}'", '"{name}{sep}{v}"',
    '{{"env": "{name}{sep}{v}"}}', "x;{name}{sep}{v};y",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAME, sep=SEP, form=FORM, v=VALUE)
def test_a_credential_variable_is_masked_in_every_form(name, sep, form, v):
    line = form.format(name=name, sep=sep, v=v)
    assert v not in redact_text(line), (line, redact_text(line))
    assert v not in _frame([line])[0], (line, _frame([line])[0])


PREFIX = st.sampled_from(["sk_live_", "sk_test_", "rk_live_", "xapp-1-", "nvapi-", "gsk_", "npm_", "hvs.", "dapi",
                          "pypi-AgEI", "r8_", "xai-", "pplx-"])
AROUND = st.sampled_from(["{t}", "key={t}", "'{t}'", '"{t}"', "Bearer {t}", "[{t}]", "x_{t}.", "{t},", "token {t}"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=PREFIX, around=AROUND, v=VALUE)
def test_provider_tokens_are_masked_in_any_container(prefix, around, v):
    line = around.format(t=prefix + v)
    assert v not in redact_text(line), (line, redact_text(line))
    assert v not in _frame([line])[0]


def test_the_pre_test_still_runs_on_line_shapes():
    """Every class's hint treats digits alike, so the ingest tests a hint once per line shape
    (ingest/shapes.py) instead of once per line."""
    from logsleuth.ingest.redact import policy
    from logsleuth.ingest.shapes import digit_invariant

    pol = policy()
    assert digit_invariant(f"{pol.secret_hint}|{pol.prompt_hint}", ends=True)


@pytest.mark.parametrize("cut", [2, 3, 4])
def test_a_pem_block_split_across_chunks_is_masked(cut):
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "short tail, any text", "Tk8vQ2x1ZGVyAw=="]
    lines = ["x", "-----BEGIN OPENSSH PRIVATE KEY-----", *body, "-----END OPENSSH PRIVATE KEY-----", "after"]
    frame = pl.DataFrame({"raw": lines})
    state = RedactState()
    out = (redact_frame(frame[:cut], "raw", True, state)["raw"].to_list()
           + redact_frame(frame[cut:], "raw", True, state)["raw"].to_list())
    assert out[2:5] == ["<key material redacted>"] * 3 and out[-1] == "after" and out[:2] == lines[:2], out
