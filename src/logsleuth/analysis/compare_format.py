"""Rendering of ``compare`` results and startup timelines: rich table, JSON, Markdown, CSV, text bars.

Contract: functions take the plain data of :mod:`logsleuth.compare` and return strings or
write to a stream; rich is imported only by :func:`compare_rich` (the table format).
"""
from __future__ import annotations

import csv
import io
import json
import math

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
    from ..cli.inert import json_inert, plain_json

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
    from ..cli.inert import inert  # log text: control characters made visible

    return inert("\n".join(out).rstrip() + "\n")


def compare_csv(result: CompareResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["section", "key", "title", "unit"] + [c.name for c in result.columns])
    for r in result.rows:
        w.writerow(["metric", r.key, r.title, r.unit or ""] + ["" if v is None else v for v in r.values])
    for r in result.config:
        w.writerow(["config", r.name, r.title, ""] + ["" if v is None else v for v in r.values])
    from ..cli.inert import inert  # log text: control characters made visible

    return inert(buf.getvalue())


def compare_rich(result: CompareResult):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..cli.inert import inert, markup_safe  # run names, settings and notes come from logs

    t = Table(title="runs compared", header_style="bold", show_lines=False)
    t.add_column("metric", style="dim", overflow="fold")
    for c in result.columns:
        t.add_column(markup_safe(c.name) + (" \\[bench]" if c.kind == "bench" else ""), overflow="fold",
                     justify="right")
    prev_group = None
    for r in result.rows:
        if prev_group is not None and r.group != prev_group:
            t.add_section()
        prev_group = r.group
        best = best_index(r)
        cells = [Text(inert(fmt_value(v, r.unit)), style="bold green" if i in best else "")
                 for i, v in enumerate(r.values)]
        t.add_row(Text(inert(row_title(r))), *cells)
    parts = [t]
    if result.config:
        ct = Table(title="configuration differences", header_style="bold")
        ct.add_column("setting", style="dim", overflow="fold")
        for c in result.columns:
            ct.add_column(markup_safe(c.name), overflow="fold")
        for r in result.config:
            ct.add_row(Text(inert(r.title)), *[Text(inert(_clip(config_cell(r, i)))) for i in range(len(r.values))])
        parts.append(ct)
    for n in result.notes:
        parts.append(Text(inert(f"note: {n}"), style="dim"))
    return Group(*parts)


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


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
