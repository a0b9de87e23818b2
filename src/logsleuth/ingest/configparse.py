"""Turn configuration dumps into (key, value) rows.

Contract: ``parse_config_line(parser, msg)`` returns a list of ``(key, value)`` strings for
one dump line: SGLang ``server_args=ServerArgs(...)`` and vLLM ``args: Namespace(...)``
("pyrepr"), vLLM ``non-default args: {...}`` ("pydict"), the vLLM engine config line
("kvlist"), and environment assignments ("env"). Nested structures are kept as text and
also flattened one level (``speculative_config.method``). Secret-looking keys are
redacted here, before anything is stored. Config dumps are one line per launch, so this
per-line Python is off the hot path.
"""
from __future__ import annotations

import ast
import json
import re

from .redact import REDACTED, redact_config_value as _redact  # noqa: F401  (one policy, see redact.py)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside quotes and brackets (Python repr syntax)."""
    parts, depth, buf, quote, esc = [], 0, [], None, False
    for ch in text:
        if quote:
            buf.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = None
            continue
        if ch in ("'", '"'):
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and depth > 0:
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(buf).strip())
            buf = []
            continue
        buf.append(ch)
    if "".join(buf).strip():
        parts.append("".join(buf).strip())
    return parts


def _value_text(raw: str) -> str | None:
    raw = raw.strip()
    if raw in ("None", ""):
        return None
    try:
        val = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw
    if isinstance(val, str):
        return val
    if isinstance(val, (dict, list, tuple)):
        try:
            return json.dumps(val)
        except (TypeError, ValueError):
            return raw
    return str(val)


def _flatten(key: str, value: str | None, out: list) -> None:
    out.append((key, _redact(key, value)))
    if not value:
        return
    inner = None
    if value.startswith("{"):
        try:
            obj = json.loads(value)
            if isinstance(obj, dict):
                inner = {k: (json.dumps(v) if isinstance(v, (dict, list)) else
                             (None if v is None else str(v))) for k, v in obj.items()}
        except (ValueError, RecursionError):  # a value nested too deep stays the text it was
            inner = None
    else:  # SpeculativeConfig(method='eagle3', model='x', num_spec_tokens=3)
        m = re.match(r"^\w+\((.*)\)$", value, re.S)
        if m:
            inner = {}
            for item in split_top_level(m.group(1)):
                if "=" in item:
                    k, v = item.split("=", 1)
                    inner[k.strip()] = _value_text(v)
    for k, v in (inner or {}).items():
        out.append((f"{key}.{k}", _redact(k, v)))


def _body_between(msg: str, opener: str) -> str:
    start = msg.find(opener)
    if start < 0:
        return ""
    body = msg[start + len(opener):]
    return body[:-1] if body.rstrip().endswith(")") else body


def _assignments(body: str, out: list) -> None:
    """``key=value`` items of a top-level comma list (Namespace(...), vLLM's config line)."""
    for item in split_top_level(body):
        if "=" in item:
            k, v = item.split("=", 1)
            _flatten(k.strip(), _value_text(v), out)


def parse_config_line(parser: str, msg: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    if parser == "pyrepr":
        opener = "ServerArgs(" if "ServerArgs(" in msg else "Namespace("
        body = _body_between(msg, opener).rstrip()
        if body.endswith(")"):
            body = body[:-1]
        _assignments(body, out)
    elif parser == "pydict":
        body = msg[msg.find("{"):]
        try:
            obj = ast.literal_eval(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            for k, v in obj.items():
                text = None if v is None else (json.dumps(v) if isinstance(v, (dict, list, tuple)) else str(v))
                _flatten(str(k), text, out)
        else:
            for item in split_top_level(body.strip()[1:-1]):
                if ":" in item:
                    k, v = item.split(":", 1)
                    _flatten(str(_value_text(k)), _value_text(v), out)
    elif parser == "kvlist":
        m = re.search(r"LLM engine \(v([^)]+)\)", msg)
        if m:
            out.append(("engine_version", m.group(1)))
        body = msg.split(" with config: ", 1)[-1]
        _assignments(body, out)
    elif parser == "env":
        m = re.search(r"((?:NCCL|CUDA|VLLM|SGLANG|TORCH|PYTORCH|NVIDIA|OMP|HF|TRITON|FLASHINFER|UCX|GLOO)_\w*)"
                      r"(?:=| set by environment to )(\S*?)\.?\s*$", msg)
        if m:
            out.append((m.group(1), _redact(m.group(1), m.group(2))))
    return out
