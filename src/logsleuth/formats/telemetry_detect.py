"""Recognise a telemetry file by its content (never by its name).

Contract: ``detect_telemetry(head)`` takes the first ~256 KiB of a file as text and returns
one of ``prometheus``, ``nvidia_smi_csv``, ``nvidia_smi_dmon``, ``rocm_smi_csv``,
``amd_smi_csv``, ``bench_json``, ``nccl_debug`` or ``None`` (not telemetry: the log pipeline
takes it). It must stay cheap and must never claim a server log: every test looks at the
first meaningful lines, where a log starts with its own prefixes and banners. The line
forms are those of docs telemetry-formats.md.
"""
from __future__ import annotations

import json
import re

#: query fields of ``nvidia-smi --query-gpu`` (canonical names and aliases) that name a CSV
#: header; ``[unit]`` suffixes are stripped before matching
NVIDIA_FIELDS = re.compile(
    r"^(timestamp|index|name|gpu_name|uuid|pci\.bus_id|pstate|driver_version|count|"
    r"utilization\.(gpu|memory)|memory\.(used|total|free|reserved)|power\.(draw|limit|draw\.average|draw\.instant|max_limit)|"
    r"enforced\.power\.limit|clocks\.(current\.)?(sm|graphics|memory|video)|clocks\.(sm|gr|mem)|clocks\.max\.(sm|graphics|memory)|"
    r"temperature\.(gpu|memory)|fan\.speed|pcie\.link\.(gen|width)\.(current|gpucurrent|max|hostmax)|"
    r"clocks_(throttle|event)_reasons\.[a-z_]+)$")

_ROCM_HEADER = re.compile(r"^device,.*(GPU use|VRAM|Power|Temperature|GFX Activity|clock)", re.I)
_AMD_CSV_HEADER = re.compile(r"^(timestamp,)?gpu,.*(gfx_activity|socket_power|umc_activity)")
_DMON_HEADER = re.compile(r"^#\s*(Date\s+Time\s+)?gpu\s+\w+", re.I)
# the value must be one number ("numpy: 2.3.5" in an environment report is not a sample)
_PROM_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?Inf|NaN)(\s+-?\d+)?\s*$')
_PROM_META = re.compile(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* ")
_NCCL = re.compile(r"\bNCCL (INFO|WARN)\b|^NCCL version \d")
#: keys only a benchmark client's result object has (sglang.bench_serving, vllm bench serve)
BENCH_KEYS = ("completed", "request_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms",
              "p99_ttft_ms", "dataset_name", "num_prompts", "endpoint_type", "total_output_tokens", "max_concurrency")
#: keys of structured log records: such JSON lines are logs, not results
_LOG_RECORD_KEYS = ("message", "msg", "levelname", "level", "log")


def _meaningful(head: str, n: int = 40) -> list[str]:
    out = []
    for line in head.splitlines():
        if line.strip():
            out.append(line.rstrip("\r"))
            if len(out) >= n:
                break
    return out


def is_nvidia_smi_header(line: str) -> bool:
    # a unit is "[MiB]": no "[" inside, which keeps the search linear on a line of brackets
    names = [re.sub(r"\s*\[[^\[\]]*\]\s*$", "", f.strip()).lower() for f in line.split(",")]
    known = sum(bool(NVIDIA_FIELDS.match(n)) for n in names)
    return len(names) >= 2 and known == len(names) and any("." in n for n in names)


def _json_head(lines: list[str], head: str):
    """The first JSON object of the file, or None (a truncated head of a pretty-printed or a
    very long one-line object yields its keys from a plain text search instead)."""
    first = lines[0].lstrip()
    if not first.startswith("{"):
        return None
    try:
        obj = json.loads(lines[0])
        return obj if isinstance(obj, dict) else None
    except (ValueError, RecursionError):  # too deep: the parser says so with the file and line
        pass
    try:
        obj = json.loads(head)
        return obj if isinstance(obj, dict) else None
    except (ValueError, RecursionError):
        # head cut inside a long object: keys are still visible as text
        keys = re.findall(r'"([A-Za-z_][\w.:]*)"\s*:', head[:65536])
        return dict.fromkeys(keys) if keys else None


def detect_telemetry(head: str) -> str | None:
    from .notebook_head import is_notebook_head

    if is_notebook_head(head.lstrip("\ufeff")):
        return None  # JSON, but a notebook: its outputs are a log (ingest/notebook.py)
    lines = _meaningful(head)
    if not lines:
        return None
    first = lines[0].lstrip("\ufeff")
    obj = _json_head([first] + lines[1:], head.lstrip("\ufeff"))
    if obj is not None:
        if any(k in obj for k in _LOG_RECORD_KEYS) and not any(k in obj for k in BENCH_KEYS):
            return None  # a structured log record
        return "bench_json"  # any other JSON object: a result file, or refused as not one
    if is_nvidia_smi_header(first):
        return "nvidia_smi_csv"
    if _DMON_HEADER.match(first) and len(lines) > 1 and lines[1].lstrip().startswith("#"):
        return "nvidia_smi_dmon"
    for line in lines[:5]:  # rocm-smi prints WARNING/blank lines before its header
        if _ROCM_HEADER.match(line):
            return "rocm_smi_csv"
        if _AMD_CSV_HEADER.match(line):
            return "amd_smi_csv"
    prom = sum(bool(_PROM_META.match(ln) or _PROM_SAMPLE.match(ln)) for ln in lines)
    if prom >= max(3, int(0.6 * len(lines))) and any(_PROM_SAMPLE.match(ln) for ln in lines):
        return "prometheus"
    nccl = sum(bool(_NCCL.search(ln)) for ln in lines)
    if nccl >= max(2, int(0.8 * len(lines))):
        return "nccl_debug"  # NCCL output alone; inside a server log the log pipeline stores it
    return None



def looks_like_bench_result(head: str) -> bool:
    """Whether a JSON head names a benchmark client's result keys. A folder walk uses it to
    leave model configs, tokenizer files and other JSON beside the logs out, instead of
    refusing them as "not a bench result" (named explicitly, they are refused)."""
    return any(f'"{k}"' in head for k in BENCH_KEYS)
