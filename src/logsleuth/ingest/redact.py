"""One redaction policy for everything logsleuth stores or shows.

Contract:
* ``redact(expr)`` / ``redact_frame(frame, column)`` / ``redact_text(text)`` mask secrets
  (API keys, tokens, bearer headers, URL passwords) and, unless asked to keep them, request
  prompts in raw text. The same policy serves line text, file names, report strings.
* ``redact_config_value(key, value)`` masks a parsed configuration value whose key names a
  credential.
Each replacement is idempotent (masking masked text changes nothing).
"""
from __future__ import annotations

import re

import polars as pl

# --- redaction -------------------------------------------------------------------------
# Rust-regex (polars) patterns, applied to every physical line before anything is parsed or
# stored, so lines, config, events, errors and templates all see the masked text. Each
# replacement is idempotent (masking masked text changes nothing).

#: names whose value is a credential: api_key, hf_token, HUGGING_FACE_HUB_TOKEN, x-api-key,
#: client_secret, password... "token" alone is not one (#token: 82, num_tokens=5)
_SECRET_NAME = (
    r"(?:api[_-]?key|apikey|(?:hf|hub|hugging_?face(?:_hub)?|access|auth|api|bearer|refresh|session|id"
    r"|github|gh|gitlab|wandb|openai|slack|private|secret)[_-]?token|token[_-]?secret"
    r"|secret[_-]?(?:access[_-]?)?key|client[_-]?secret|secret|passw(?:or)?d|private[_-]?key"
    r"|access[_-]?key(?:[_-]?id)?|credentials?|(?:set-)?cookie)"
)
_KV = r"(?i)(" + _SECRET_NAME + r"['\"]?\s*[:=]\s*)"
_UNSET = "\ue000"  # marks "api_key=None" so that the bare-value rule leaves it alone
_SECRET_FLAGS = r"(?:api-key|admin-api-key|hf-token|token|password|secret|auth-token|access-token)"
_SECRETS = [
    (_KV + r"(None|null|nil|True|False|\[\]|''|\"\")([,)}\]\s;]|$)", "${1}" + _UNSET + "${2}${3}"),
    (_KV + r"\[[^\]\n]*\]", "${1}['***']"),
    (_KV + r"'[^'\n]*'", "${1}'***'"),
    (_KV + r"\"[^\"\n]*\"", "${1}\"***\""),
    (_KV + r"[^\x{e000}'\"\[\s,;)}\]&][^'\"\s,;)}\]&]*", "${1}***"),
    (r"(?i)(--" + _SECRET_FLAGS + r"(?:=|\s+))(['\"]?)[^\s'\"]+", "${1}${2}***"),
    (r"(?i)(['\"]--" + _SECRET_FLAGS + r"['\"],\s*['\"])[^'\"]*", "${1}***"),
    (r"(?i)(\(b?['\"](?:authorization|proxy-authorization|x-api-key|api-key|cookie|set-cookie)['\"],\s*b?['\"])"
     r"[^'\"]*", "${1}***"),
    (r"(?i)(authorization['\"]?\s*[:=]\s*b?['\"]?(?:bearer|basic|token|digest)\s+)[^\s'\",]+", "${1}***"),
    (r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*", "${1}***"),
    (r"\bhf_[A-Za-z0-9]{16,}", "hf_***"),
    (r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}", "sk-***"),
    (r"\b(gh[pousr])_[A-Za-z0-9]{20,}", "${1}_***"),
    (r"\bgithub_pat_[A-Za-z0-9_]{20,}", "github_pat_***"),
    (r"\bAKIA[0-9A-Z]{16}\b", "AKIA***"),
    (r"\b(xox[abprs])-[A-Za-z0-9-]{10,}", "${1}-***"),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "<jwt redacted>"),
    (r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/\s@'\"]*:)[^@\s/'\"]+@", "${1}***@"),
    (r"(?i)([?&](?:token|access_token|api_key|apikey|key|sig|signature|password|secret|auth)=)[^&\s'\"#]+",
     "${1}***"),
    (_UNSET, ""),
]

# a Python-repr string or list, possibly cut at the end of a truncated line
_Q = r"'(?:[^'\\]|\\.)*(?:'|$)|\"(?:[^\"\\]|\\.)*(?:\"|$)"
_L1 = r"\[(?:" + _Q + r"|[^\[\]'\"])*(?:\]|$)"
_VAL = r"(?:" + _Q + r"|\[(?:" + _Q + r"|" + _L1 + r"|[^\[\]'\"])*(?:\]|$))"
_IN = r"(?:text|prompt|input_ids|messages|prompt_token_ids|input_text|content|prompts)"
_OUT = r"(?:output|output_ids|output_token_ids|output_text|outputs)"
_PROMPTS = [
    # SGLang --log-requests: Receive: obj=GenerateReqInput(rid=..., text='...', input_ids=[...])
    (r"((?:^|[\s(,{])" + _IN + r"=)" + _VAL, "${1}<prompt redacted>"),
    (r"((?:^|[\s(,{])" + _OUT + r"=)" + _VAL, "${1}<output redacted>"),
    # vLLM request logging: Received request cmpl-1: prompt: '...', params: ..., prompt_token_ids: [...]
    (r"((?:^|[\s(,{:])(?:prompt|prompt_token_ids|token_ids): )" + _VAL, "${1}<prompt redacted>"),
    (r"((?:^|[\s(,{:])(?:output|output_token_ids|outputs): )" + _VAL, "${1}<output redacted>"),
    # dict form: Finish: ..., out={'text': '...', 'output_ids': [...]}, {'messages': [...]}
    (r"((?:^|[\s(,{])['\"]" + _IN + r"['\"]: )" + _VAL, "${1}<redacted>"),
    (r"((?:^|[\s(,{])['\"]" + _OUT + r"['\"]: )" + _VAL, "${1}<output redacted>"),
]
#: cheap pre-tests: a line matching neither cannot hold anything the rules above mask, so
#: hot lines (decode stats) skip the ~25 replacement passes
_SECRET_HINT = (r"(?i:key|(?:hf|hub|face|access|auth|api|bearer|refresh|session|id|github|gh|gitlab|wandb|openai"
                r"|slack|private|secret)[_-]?token|secret|passw|credential|cookie|bearer|authoriz|hf_|sk-"
                r"|gh[pousr]_|github_pat_|akia|xox|eyj|://|[?&](?:sig|signature|auth|token)=)")
_PROMPT_HINT = r"(?:=|: )['\"\[]"


def redact(expr: pl.Expr, keep_prompts: bool = False) -> pl.Expr:
    """Mask secrets, and request prompts/outputs unless ``keep_prompts``, in a text column."""
    for pattern, repl in _SECRETS:
        expr = expr.str.replace_all(pattern, repl)
    if not keep_prompts:
        for pattern, repl in _PROMPTS:
            expr = expr.str.replace_all(pattern, repl)
    return expr


def redact_frame(frame: pl.DataFrame, column: str = "raw", keep_prompts: bool = False) -> pl.DataFrame:
    """``redact`` applied to ``frame[column]``, only on the rows a cheap pre-test selects."""
    if frame.height == 0 or column not in frame.columns:
        return frame
    hint = _SECRET_HINT if keep_prompts else f"{_SECRET_HINT}|{_PROMPT_HINT}"
    mask = frame.get_column(column).str.contains(hint).fill_null(False)
    if not mask.any():
        return frame
    idx = mask.arg_true()
    col = frame.get_column(column)
    masked = pl.select(redact(pl.lit(col.gather(idx)), keep_prompts)).to_series()
    return frame.with_columns(col.clone().scatter(idx, masked).alias(column))


def redact_text(text: str, keep_prompts: bool = False) -> str:
    """``redact`` for one Python string (renderers, messages built outside a frame)."""
    return pl.select(redact(pl.lit(text, dtype=pl.Utf8), keep_prompts)).item()


# --- configuration values ----------------------------------------------------------------
# a whole key (or its last _-separated words) that names a credential: api_key, admin_api_key,
# hf_token, HUGGING_FACE_HUB_TOKEN, client_secret, ssl_keyfile_password, aws_secret_access_key.
# "token" only as a credential name, not counts or paths such as max_prompt_adapter_token,
# num_speculative_tokens, tokenizer_path
_SECRET_KEY = re.compile(
    r"(?:^|[_.-])(?:api[_-]?key|apikey|(?:hf|hub|hugging_?face(?:_hub)?|access|auth|api|bearer|refresh|session"
    r"|id|github|gh|gitlab|wandb|openai|slack|private|secret)[_-]?token|token[_-]?secret"
    r"|secret[_-]?(?:access[_-]?)?key|client[_-]?secret|secret|passw(?:or)?d|private[_-]?key"
    r"|access[_-]?key(?:[_-]?id)?|credentials?|auth|cookie)$|^token$", re.I)
REDACTED = "***"


def redact_config_value(key: str, value: str | None) -> str | None:
    """``value`` masked when ``key`` names a credential (unset values are kept: they say "none")."""
    if value and _SECRET_KEY.search(key) and value not in ("None", "[]", "{}", "False", "True", "null", "''"):
        return REDACTED
    return value
