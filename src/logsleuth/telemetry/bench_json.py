"""Benchmark result files (JSON / JSONL) -> ``bench_results`` and ``bench_requests`` rows.

Contract: ``parse_bench_json(lines, name)`` takes the physical lines of a result file written
by ``python -m sglang.bench_serving --output-file`` (one object appended per run: JSONL) or
``vllm bench serve --save-result`` (one object; ``--append-result`` appends more, one a line;
a pretty-printed object spanning lines is read whole) and returns ``(results, requests,
line_kinds)``. Units follow the schema (``*_ms`` ms, ``duration_s`` s); per-request lists
(``ttfts``, ``itls`` in seconds, saved with details) become ``bench_requests`` rows and their
p50/p99 in ``detail_*`` columns. A file that is JSON but not a bench result, or a line that
does not parse, raises ``BadInputError``: nothing is stored. Key names are those of docs
telemetry-formats.md section 4 (SGLang 0.4.6-0.5.23, vLLM 0.10-0.33 and the legacy script).
"""
from __future__ import annotations

import datetime as dt
import math
from types import MappingProxyType

import polars as pl

from ..errors import BadInputError
from ..nesting import json_loads

#: JSON key -> bench_results column (same meaning, same unit)
_NAMED_KEYS = {
    "backend": "backend", "endpoint_type": "backend", "completed": "successful_requests", "failed": "failed_requests",
    "max_concurrency": "max_concurrency", "request_rate": "request_rate", "duration": "duration_s",
    "total_input_tokens": "total_input_tokens", "total_output_tokens": "total_output_tokens",
    "request_throughput": "request_throughput", "input_throughput": "input_tok_s", "output_throughput": "output_tok_s",
    "total_throughput": "total_tok_s", "total_token_throughput": "total_tok_s",
    "max_output_tokens_per_s": "peak_output_tok_s", "max_concurrent_requests": "peak_concurrency",
    "concurrency": "concurrency", "accept_length": "accept_len", "spec_decode_acceptance_length": "accept_len",
    "spec_decode_acceptance_rate": "accept_rate", "spec_decode_num_drafts": "spec_drafts",
    "spec_decode_draft_tokens": "spec_draft_tokens", "spec_decode_accepted_tokens": "spec_accepted_tokens",
    "model_id": "model_id", "label": "bench_label", "tag": "bench_label",
}
# latency statistics: sglang writes e2e_latency, vLLM e2el; both in ms
KEY_COLUMNS = MappingProxyType({
    **_NAMED_KEYS,
    **{f"{stat}_{metric}_ms": f"{stat}_{col}_ms"
       for metric, col in (("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl"), ("e2e_latency", "e2e"), ("e2el", "e2e"))
       for stat in ("mean", "median", "p90", "p95", "p99")},
    "max_itl_ms": "max_itl_ms",
})
_INT_COLUMNS = {"successful_requests", "failed_requests", "total_input_tokens", "total_output_tokens",
                "spec_drafts", "spec_draft_tokens", "spec_accepted_tokens", "n_detailed"}
_TEXT_COLUMNS = {"backend", "model_id", "bench_label", "tool"}
#: a result object has the count of completed requests and at least one latency/throughput figure
_NEEDED_ANY = ("request_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
               "mean_e2e_latency_ms", "mean_e2el_ms")


def _objects(lines: list[str], name: str) -> list[tuple[int, int, dict]]:
    """(first line, last line, object) per result; 1-based line numbers."""
    out = []
    try:
        for i, line in enumerate(lines):
            if line.strip():
                obj = json_loads(line, f"{name}: line {i + 1}")  # reads sglang's bare Infinity/NaN too
                out.append((i + 1, i + 1, obj))
        return out
    except ValueError as exc:
        first_error = (i + 1, str(exc))
    try:  # one pretty-printed object over several lines
        obj = json_loads("\n".join(lines), f"{name}: line 1")
    except ValueError:
        ln, why = first_error
        raise BadInputError(f"{name}: line {ln}: not valid JSON ({why[:100]})",
                            hint="nothing was stored from this file") from None
    first = next(i for i, ln in enumerate(lines) if ln.strip())
    last = max(i for i, ln in enumerate(lines) if ln.strip())
    return [(first + 1, last + 1, obj)]


def _tool(obj: dict) -> str:
    if "date" in obj or "endpoint_type" in obj or "model_id" in obj or "request_goodput:" in obj:
        return "vllm bench serve"
    return "sglang.bench_serving"


def _percentile(values: list[float], q: float) -> float | None:
    vals = sorted(v for v in values if v is not None and not math.isnan(v))
    if not vals:
        return None
    k = (len(vals) - 1) * q  # linear interpolation, numpy's default
    lo = math.floor(k)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (k - lo)


def _row(obj: dict, line_no: int, last_line: int) -> dict:
    row: dict = {"line_no": line_no, "last_line": last_line, "tool": _tool(obj)}
    for key, col in KEY_COLUMNS.items():
        if key in obj and obj[key] is not None and col not in row:
            v = obj[key]
            if col in _TEXT_COLUMNS:
                row[col] = str(v)
            elif isinstance(v, (int, float)):
                row[col] = float(v) if not (isinstance(v, float) and math.isinf(v)) else math.inf
            elif isinstance(v, str) and v.lower() in ("inf", "infinity"):
                row[col] = math.inf
    if isinstance(obj.get("date"), str):
        try:
            row["started_at"] = dt.datetime.strptime(obj["date"], "%Y%m%d-%H%M%S")
        except ValueError:
            pass
    info = obj.get("server_info")
    if "model_id" not in row and isinstance(info, dict):
        model = info.get("model_path") or info.get("served_model_name")
        if model:
            row["model_id"] = str(model)
    return row


def _requests(obj: dict, line_no: int) -> list[dict]:
    ttfts, itls = obj.get("ttfts"), obj.get("itls")
    if not isinstance(ttfts, list):
        return []
    n = len(ttfts)

    def col(key):
        v = obj.get(key)
        return v if isinstance(v, list) and len(v) == n else [None] * n
    ins, outs, starts, errs = col("input_lens"), col("output_lens"), col("start_times"), col("errors")
    itls = itls if isinstance(itls, list) and len(itls) == n else [None] * n
    rows = []
    for k in range(n):  # per request of a detailed result: lists, not log lines
        gaps = [g for g in (itls[k] or []) if isinstance(g, (int, float))]
        t = ttfts[k]
        rows.append({"line_no": line_no, "request_index": k, "input_len": ins[k], "output_len": outs[k],
                     "start_s": starts[k], "ttft_ms": None if not isinstance(t, (int, float)) or t <= 0 else t * 1000,
                     "itl_mean_ms": sum(gaps) / len(gaps) * 1000 if gaps else None,
                     "itl_max_ms": max(gaps) * 1000 if gaps else None, "error": errs[k] or None})
    return rows


def parse_bench_json(lines: list[str], name: str) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, str]]:
    objs = _objects(lines, name)
    results, requests, kinds = [], [], {}
    for first, last, obj in objs:
        if not isinstance(obj, dict) or "completed" not in obj or not any(k in obj for k in _NEEDED_ANY):
            keys = ", ".join(list(obj)[:5]) if isinstance(obj, dict) else type(obj).__name__
            raise BadInputError(
                f"{name}: line {first}: JSON but not a benchmark result (no 'completed' and latency/throughput "
                f"keys; has {keys})", hint="logsleuth reads sglang.bench_serving --output-file and "
                "vllm bench serve --save-result files; nothing was stored from this file")
        row = _row(obj, first, last)
        reqs = _requests(obj, first)
        if reqs:
            row["n_detailed"] = len(reqs)
            row["detail_p50_ttft_ms"] = _percentile([r["ttft_ms"] for r in reqs], 0.5)
            row["detail_p99_ttft_ms"] = _percentile([r["ttft_ms"] for r in reqs], 0.99)
            gaps = [g * 1000 for per in (obj.get("itls") or []) for g in (per or []) if isinstance(g, (int, float))]
            row["detail_p50_itl_ms"] = _percentile(gaps, 0.5)
            row["detail_p99_itl_ms"] = _percentile(gaps, 0.99)
        results.append(row)
        requests.extend(reqs)
        for i in range(first - 1, last):
            kinds[i] = "bench_results"
    for i, line in enumerate(lines):
        kinds.setdefault(i, "bench_meta")
    res = pl.DataFrame(results, infer_schema_length=None)
    res = res.with_columns([pl.col(c).cast(pl.Int64) for c in res.columns if c in _INT_COLUMNS])
    req = pl.DataFrame(requests, infer_schema_length=None) if requests else pl.DataFrame()
    if req.height:
        req = req.with_columns(pl.col("error").cast(pl.Utf8), pl.col("start_s").cast(pl.Float64, strict=False))
    return res, req, kinds
