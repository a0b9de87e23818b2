"""Detect what a file is from its head: SGLang or vLLM server log, benchmark output,
environment report, or unknown.

Contract: ``detect(head_text, grammars)`` returns a ``Detection`` (``kind`` one of
``server_log``, ``bench``, ``env_report``, ``unknown``; ``engine`` ``sglang`` / ``vllm`` /
``bench`` / ``env`` / ``unknown``; ``scores`` per engine). Scores are the weighted counts of
each grammar's ``detect`` literals, so a format is taught to the detector in its TOML.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..gpus.env_report import detect_report_kind

_BENCH_TITLE = "Serving Benchmark Result"


@dataclass
class Detection:
    kind: str
    engine: str
    scores: dict
    report_kind: str | None = None
    # run_id -> engine its lines were parsed with, set after parsing (ingest/segment.py): a
    # file may hold launches of several engines (``cat sglang.log vllm.log``)
    run_engines: dict = field(default_factory=dict)


def detect(head: str, grammars) -> Detection:
    scores: dict[str, float] = {}
    for g in grammars:
        if g.engine == "common" or not g.detect:
            continue
        scores[g.engine] = sum(head.count(lit) * w for lit, w in g.detect)
    best = max(scores, key=lambda k: scores[k]) if scores else None
    best_score = scores.get(best, 0) if best else 0
    # literals of weight >= 3 only occur in server logs; a benchmark printout mentions the
    # engine by name ("Backend: sglang") but carries none of them
    strong = {g.engine: sum(head.count(lit) for lit, w in g.detect if w >= 3)
              for g in grammars if g.engine != "common" and g.detect}
    if _BENCH_TITLE in head and not any(strong.values()):
        return Detection("bench", "bench", scores)
    report = detect_report_kind(head)
    if report and best_score < 10:
        return Detection("env_report", "env", scores, report)
    if _BENCH_TITLE in head and best_score < 10:  # a benchmark client's output that names its engine
        return Detection("bench", "bench", scores)
    if best and best_score >= 4:
        return Detection("server_log", best, scores)
    if _BENCH_TITLE in head:
        return Detection("bench", "bench", scores)
    if best and best_score > 0:
        return Detection("server_log", best, scores)
    return Detection("unknown", "unknown", scores)
