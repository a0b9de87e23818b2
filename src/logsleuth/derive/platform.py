"""The platform a run ran on (CUDA, ROCm, MLX/Metal, CPU, TPU, XPU, NPU, HPU), learned from its log.

Contract: ``run_platforms(con, rows, grammars)`` fills ``platform`` and ``platform_how`` of the
runs rows ``rows`` (run id -> row dict, its GPU context already set: ``gpu_vendor``) with a fixed
number of statements. What counts as evidence is grammar data (parsers/*.toml): vLLM's
"Automatically detected platform X" event, the marker lists ``platform_<name>`` (LIKE patterns:
``device='npu'``, ``amdsmi``, ``torch_xla``...) and ``[aliases.platform]`` (spellings and GPU
vendors -> platform names). The order of trust: the engine's own statement; then a line of a
platform other than CUDA (CUDA's names leak onto other platforms: HIP keeps "cuda graph", SGLang
and vLLM resolve their device to "cuda" on ROCm); then the GPU vendor; then CUDA's own lines.
A log that says nothing leaves the platform unknown (None): rules meant for one platform still
read such a run (analysis/rules.py ``platform`` header).
"""
from __future__ import annotations

import polars as pl

from ..formats import grammar as gdata
from .sql import run_set

#: the marker lists of platforms are named platform_<name>
_PREFIX = "platform_"
#: the platform whose names other platforms print too: its lines count last
_GENERIC = "cuda"


def _markers(grammars) -> dict[str, list[str]]:
    names = sorted({m for g in grammars for m in g.markers if m.startswith(_PREFIX)})
    return {name[len(_PREFIX):]: gdata.markers(grammars, name) for name in names}


def _evidence(con, starts: dict[int, int], grammars) -> dict[int, list[tuple]]:
    """Run id -> [(platform, how, line_no, text)] (queries/derive/platform_evidence.sql)."""
    marks = {p: likes for p, likes in _markers(grammars).items() if likes}
    if not marks:
        return {}
    cases, params = [], []
    for platform, likes in marks.items():
        cases.append("WHEN " + " OR ".join("raw LIKE ?" for _ in likes) + f" THEN '{platform}'")
        params += likes
    every = [like for likes in marks.values() for like in likes]
    out: dict[int, list[tuple]] = {}
    frame = pl.DataFrame({"run_id": list(starts), "first_line": list(starts.values())},
                         schema={"run_id": pl.Int64, "first_line": pl.Int64})
    for rid, platform, how, line_no, said in run_set(
            con, "platform_evidence", runs=list(starts), params=params + every, frames={"derive_starts": frame},
            fmt={"cases": " ".join(cases), "any": " OR ".join("raw LIKE ?" for _ in every)}):
        out.setdefault(rid, []).append((platform, how, line_no, said))
    return out


def decide(evidence: list[tuple], vendor: str | None, spell: dict[str, str]) -> tuple[str | None, str | None]:
    """(platform, how it is known) from a run's evidence rows and its GPU vendor."""
    def name(p):
        return spell.get(p, p)

    stated = sorted((e for e in evidence if e[1] == "event"), key=lambda e: e[2])
    if stated:
        return name(stated[0][0]), f"line {stated[0][2]}: the engine says platform {stated[0][0]}"
    lines = sorted((e for e in evidence if e[1] == "line"), key=lambda e: e[2])
    other = [e for e in lines if name(e[0]) != _GENERIC]
    if other:
        return name(other[0][0]), f"line {other[0][2]}: {str(other[0][3]).strip()[:120]}"
    if vendor and vendor.lower() in spell:
        return spell[vendor.lower()], f"GPU vendor {vendor}"
    if lines:
        return name(lines[0][0]), f"line {lines[0][2]}: {str(lines[0][3]).strip()[:120]}"
    return None, None


def run_platforms(con, rows: dict[int, dict], grammars) -> None:
    if not rows:
        return
    found = _evidence(con, {rid: r["first_line"] or 0 for rid, r in rows.items()}, grammars)
    spell = {k.lower(): v for k, v in gdata.aliases(grammars, "platform").items()}
    for rid, r in rows.items():
        r["platform"], r["platform_how"] = decide(found.get(rid, []), r.get("gpu_vendor"), spell)
