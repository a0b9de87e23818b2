"""Rendering of results for the terminal: rich tables, CSV, JSON, Markdown.

Contract: functions take plain data (polars frames, dicts) and write to a given stream;
this and the progress bar are the only places that import rich.
"""
from __future__ import annotations

import csv
import io
import json
import math
import sys
from typing import Any

from .inert import cell, inert, markup_safe, plain_json

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # polars is only needed by callers that already hold a frame
    import polars as pl


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 4) if math.isfinite(v) else None  # JSON has no NaN/Infinity
    if hasattr(v, "isoformat"):
        return v.isoformat(sep=" ") if hasattr(v, "hour") else v.isoformat()
    if type(v).__name__ == "Decimal":  # DuckDB sum()/HUGEINT: a number in JSON, not a string
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def frame_rows(frame: pl.DataFrame) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def write_frame(frame: pl.DataFrame, fmt: str = "table", out=None, title: str | None = None) -> None:
    out = out or sys.stdout
    if fmt == "json":
        out.write(plain_json(frame_rows(frame), indent=2) + "\n")
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(frame.columns)
        for row in frame.iter_rows():
            w.writerow(["" if v is None else inert(_plain(v)) for v in row])
        out.write(buf.getvalue())
    elif fmt == "markdown":
        out.write(markdown_table(frame))
    else:
        console(out).print(rich_table(frame, title))


def markdown_table(frame: pl.DataFrame) -> str:
    cols = frame.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join("" if v is None else inert(_plain(v)).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


def console(out=None, stderr: bool = False):
    from rich.console import Console

    if stderr:
        return Console(stderr=True, highlight=False)
    return Console(file=out or sys.stdout, highlight=False, soft_wrap=False,
                   width=None if (out or sys.stdout).isatty() else 200)


def rich_table(frame: pl.DataFrame, title: str | None = None):
    from rich.table import Table

    t = Table(title=title, show_lines=False, header_style="bold")
    for c in frame.columns:
        t.add_column(c, overflow="fold")
    for row in frame.iter_rows():
        t.add_row(*[cell("" if v is None else _plain(v)) for v in row])  # log text: never markup
    return t


def fmt_num(v, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:,.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def run_summary_panel(row: dict) -> str:
    """Compact multi-line text block describing one run (used by ingest and show)."""
    def g(k):  # values come from logs: shown inert, never as markup
        v = row.get(k)
        return markup_safe(v) if isinstance(v, str) else v
    eng = f"{g('engine')} {g('engine_version') or g('format_era') or ''}".strip()
    lines = [
        f"[bold]run {g('run_id')}[/] {g('source_name')}  lines {g('first_line')}-{g('last_line')}  "
        f"end: [bold]{g('end_state') or '-'}[/]",
        f"  engine {eng} | model {g('model') or '-'} ({g('model_arch') or '-'}) | TP {g('tp_size') or '-'} "
        f"DP {g('dp_size') or '-'} | GPU {g('gpu_name') or '-'} {g('gpu_sm') or ''} "
        f"[{g('gpu_source') or 'unknown'}]",
        f"  attention {g('attention_backend') or '-'} ({g('attention_backend_how') or '-'}) | spec "
        f"{g('spec_method') or 'off'} accept_len {fmt_num(g('mean_accept_len'), 2)} | CUDA graph "
        f"{'on' if g('cuda_graph') else ('off' if g('cuda_graph') is False else '-')} capture "
        f"{fmt_num(g('cuda_graph_capture_s'))} s",
        f"  KV tokens {fmt_num(g('kv_cache_tokens'), 0)} | weights {fmt_num(g('weight_load_s'))} s | ready after "
        f"{fmt_num(g('time_to_ready_s'))} s | decode samples {g('decode_samples') or 0} | single-stream "
        f"{fmt_num(g('single_stream_tok_s'))} tok/s | peak {fmt_num(g('peak_gen_tok_s'))} tok/s",
        f"  errors {g('n_errors') or 0} (fatal {g('n_fatal') or 0}) | parse coverage "
        f"{fmt_num((g('parse_coverage') or 0) * 100)}% of {g('n_lines') or 0} lines"
        + (f" | cause: {g('end_reason')} (line {g('end_line')})" if g('end_state') in ('crashed', 'startup_failed', 'killed') else ""),
    ]
    return "\n".join(lines)


def sparkline(values: list[float], width: int = 60) -> str:
    vals = [v for v in values if v is not None and math.isfinite(v)]  # a log may print inf
    if not vals:
        return ""
    if len(vals) > width:  # bucket by max so peaks stay visible
        step = len(vals) / width
        vals = [max(vals[int(i * step):max(int((i + 1) * step), int(i * step) + 1)]) for i in range(width)]
    lo, hi = min(vals), max(vals)
    ticks = "▁▂▃▄▅▆▇█"
    if hi == lo:
        return ticks[3] * len(vals)
    return "".join(ticks[int((v - lo) / (hi - lo) * (len(ticks) - 1))] for v in vals)
