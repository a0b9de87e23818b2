"""Rendering of ``compare`` results and startup timelines as text: JSON, Markdown, CSV, text bars.

Contract: functions take the plain data of :mod:`logsleuth.analysis.compare` and return
strings, log text made inert (:mod:`logsleuth.inert`); the cell texts (``fmt_value``,
``row_title``, ``config_cell``, ``best_index``) are shared with the CLI's rich table
(``cli/output.py``) and the HTML report. No rich here: terminal tables are the CLI's.
"""
from __future__ import annotations

import csv
import io
import json
import math

from ..inert import inert, json_inert, plain_json
from .compare import CompareResult, Row

FORMATS = ("table", "json", "markdown", "csv")


def fmt_value(v, unit: str | None = None) -> str:
    """Display text of one cell: '-' for none, yes/no, thousands separators, ratios as %."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "-"
        if unit == "0..1":
            return f"{v * 100:.1f}%"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        if v == int(v):
            return f"{v:,.1f}"
        return f"{v:,.{3 if abs(v) < 10 else 2}f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    return str(v)


def row_title(r: Row) -> str:
    return f"{r.title} ({r.unit})" if r.unit and r.unit != "0..1" else r.title


def best_index(r: Row) -> set[int]:
    """Columns holding the best value of a row with a direction (ties included); empty if < 2 values."""
    if not r.better:
        return set()
    nums = [(i, v) for i, v in enumerate(r.values) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 2:
        return set()
    target = max(v for _, v in nums) if r.better == "higher" else min(v for _, v in nums)
    if all(v == target for _, v in nums):
        return set()
    return {i for i, v in nums if v == target}


def config_cell(r, i: int) -> str:
    """Display text of a config-difference cell: 'default' where the run carries the key with no value,
    '-' where it does not carry the key at all."""
    v = r.values[i]
    if v is None:
        return "default" if r.keys[i] is not None else "-"
    return fmt_value(v)


def compare_json(result: CompareResult) -> str:
    return json_inert(plain_json(result.as_dict(), indent=2, ensure_ascii=False)) + "\n"


def compare_markdown(result: CompareResult) -> str:
    names = [c.name for c in result.columns]

    def esc(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    out = ["## Runs compared", "", "| metric | " + " | ".join(esc(n) for n in names) + " |",
           "|---|" + "---|" * len(names)]
    for r in result.rows:
        best = best_index(r)
        cells = [(f"**{fmt_value(v, r.unit)}**" if i in best else fmt_value(v, r.unit)) for i, v in enumerate(r.values)]
        out.append(f"| {esc(row_title(r))} | " + " | ".join(esc(c) for c in cells) + " |")
    out.append("")
    if result.config:
        out += ["## Configuration differences", "", "| setting | " + " | ".join(esc(n) for n in names) + " |",
                "|---|" + "---|" * len(names)]
        for r in result.config:
            out.append(f"| {esc(r.title)} | " + " | ".join(esc(config_cell(r, i)) for i in range(len(r.values))) + " |")
        out.append("")
    for n in result.notes:
        out.append(f"_Note: {esc(n)}_")
    return inert("\n".join(out).rstrip() + "\n")


def compare_csv(result: CompareResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["section", "key", "title", "unit"] + [c.name for c in result.columns])
    for r in result.rows:
        w.writerow(["metric", r.key, r.title, r.unit or ""] + ["" if v is None else v for v in r.values])
    for r in result.config:
        w.writerow(["config", r.name, r.title, ""] + ["" if v is None else v for v in r.values])
    return inert(buf.getvalue())


def timeline_text(tl: dict, width: int = 48) -> list[str]:
    """Text bars of a startup timeline (from ``compare.startup_phases``), one line per phase."""
    phases = tl.get("phases") or []
    if not phases:
        return []
    total = max(p["end_s"] for p in phases) or 1.0
    order: list[str] = []
    for p in phases:
        if p["phase"] not in order:
            order.append(p["phase"])
    ready = tl.get("ready_s")
    head = "startup timeline" + (f": ready after {ready:,.0f} s" if ready is not None else ": never ready")
    if tl.get("approximate"):
        head += " (from durations; the log has no timestamps for its milestones)"
    lines = [head]
    for name in order:
        cells = [" "] * width
        dur = 0.0
        first = None
        for p in phases:
            if p["phase"] != name:
                continue
            first = p["start_s"] if first is None else first
            dur += p["end_s"] - p["start_s"]
            a = int(p["start_s"] / total * width)
            b = max(a + 1, int(round(p["end_s"] / total * width)))
            for i in range(a, min(b, width)):
                cells[i] = "█"
        lines.append(f"  {name:<14}{first:>7,.0f} s ▕{''.join(cells)}▏ {dur:>7,.1f} s")
    return lines
