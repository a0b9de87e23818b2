"""Self-contained HTML report: charts per run and overlaid across runs, findings, the compare table.

Contract: ``build_report(con, selectors) -> str`` returns one HTML document that needs no
network and no JavaScript: charts are inline SVG drawn here (no plotting dependency), the
CSS is inline, and a Content-Security-Policy meta tag forbids every fetch and every script.
``write_report(con, selectors, path)`` writes it. Every text that comes from a log (model
names, config values, error messages, evidence lines, labels, file names) passes through
:func:`esc`, so a log line holding ``<script>`` shows as text.

Charts: generation throughput over time; throughput against running requests (the
concurrency curve, log x axis); acceptance length over time (speculative runs); KV-cache
usage and queue length over time; the startup timeline (init, weights, compile, KV cache,
graph capture, ready). Time axes count seconds from a run's first decode sample, so runs
from different days overlay.
"""
from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..analysis.compare import CompareResult, band_of, compare, startup_phases
from ..analysis.compare_format import best_index, config_cell, fmt_value, row_title

# Okabe-Ito, readable by colour-blind people; yellow darkened for white paper
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#555555", "#B8A000"]
PHASE_COLORS = {"init": "#9E9E9E", "weights": "#0072B2", "compile": "#CC79A7", "KV cache": "#009E73",
                "graph capture": "#E69F00", "ready": "#56B4E9"}
DASHES = [None, "6 3", "2 2", "8 3 2 3"]  # after each 8 colours, the next line style
MAX_POINTS = 1200  # per series; longer series are reduced to min/max per bucket


def esc(v) -> str:
    """HTML-escape any value (quotes too): the only way log text enters the page."""
    return html.escape("" if v is None else str(v), quote=True)


# --------------------------------------------------------------------------- SVG primitives

def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks = [round(start, 10)]
    while ticks[-1] < hi - step * 1e-9:  # the last tick is at or above hi
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def fmt_tick(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    if a >= 100 or v == int(v):
        return f"{v:,.0f}"
    return f"{v:.2f}".rstrip("0").rstrip(".")


def reduce_points(points: list[tuple[float, float]], limit: int = MAX_POINTS) -> list[tuple[float, float]]:
    """Keep the shape of a long series: per bucket, its min and max in x order."""
    if len(points) <= limit:
        return points
    buckets = limit // 2
    size = len(points) / buckets
    out: list[tuple[float, float]] = []
    for b in range(buckets):
        chunk = points[int(b * size): int((b + 1) * size)] or points[int(b * size): int(b * size) + 1]
        lo = min(chunk, key=lambda p: p[1])
        hi = max(chunk, key=lambda p: p[1])
        out.extend(sorted({lo, hi}, key=lambda p: p[0]))
    return out


@dataclass
class Series:
    name: str
    color: str
    points: list  # [(x, y)]
    mode: str = "line"  # line | scatter | line+points
    dash: str | None = None
    width: float = 1.6
    tips: list | None = None  # tooltip text per point (scatter)


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    series: list[Series] = field(default_factory=list)
    x_log: bool = False
    y_zero: bool = True
    y_max: float | None = None
    y_integer: bool = False  # counts: no fractional ticks
    width: int = 880
    height: int = 280
    kind: str = "line"  # for the data-kind attribute

    def svg(self) -> str:
        W, H = self.width, self.height
        ml, mr, mt, mb = 62, 16, 12, 44
        pw, ph = W - ml - mr, H - mt - mb
        pts = [(x, y) for s in self.series for x, y in s.points
               if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)
               and (not self.x_log or x > 0)]
        out = [f'<svg class="chart" data-kind="{esc(self.kind)}" xmlns="http://www.w3.org/2000/svg" '
               f'viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{esc(self.title)}">',
               f"<title>{esc(self.title)}</title>"]
        if not pts:
            out.append(f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="empty">no data</text></svg>')
            return "".join(out)
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        if self.x_log:
            lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
            if lx1 - lx0 < 1:
                lx0, lx1 = lx0 - 0.5, lx1 + 0.5
            xt = [2.0 ** k for k in range(math.floor(lx0), math.ceil(lx1) + 1)]
            lx0, lx1 = math.log2(xt[0]), math.log2(xt[-1])

            def sx(x):
                return ml + (math.log2(x) - lx0) / (lx1 - lx0) * pw
        else:
            x0, x1 = min(xs), max(xs)
            if x1 == x0:
                x0, x1 = x0 - 1, x1 + 1
            xt = nice_ticks(x0, x1, 6)
            x0, x1 = min(xt[0], x0), max(xt[-1], x1)

            def sx(x):
                return ml + (x - x0) / (x1 - x0) * pw
        y0 = 0.0 if self.y_zero else min(ys)
        y1 = self.y_max if self.y_max is not None else max(ys)
        if self.y_integer:
            y1 = max(y1, y0 + 5)
        if y1 <= y0:
            y1 = y0 + (abs(y0) or 1.0)
        yt = nice_ticks(y0, y1, 5)
        y0, y1 = min(yt[0], y0), max(yt[-1], y1)

        def sy(y):
            return mt + ph - (y - y0) / (y1 - y0) * ph

        out.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" class="plot"/>')
        for t in yt:
            yy = sy(t)
            out.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{yy:.1f}" y2="{yy:.1f}" class="grid"/>'
                       f'<text x="{ml - 6}" y="{yy + 4:.1f}" text-anchor="end" class="tick">{esc(fmt_tick(t))}</text>')
        for t in xt:
            xx = sx(t)
            out.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{mt}" y2="{mt + ph}" class="grid"/>'
                       f'<text x="{xx:.1f}" y="{mt + ph + 16}" text-anchor="middle" class="tick">'
                       f'{esc(fmt_tick(t))}</text>')
        out.append(f'<text x="{ml + pw / 2}" y="{H - 6}" text-anchor="middle" class="axis">{esc(self.x_label)}</text>'
                   f'<text transform="translate(14 {mt + ph / 2}) rotate(-90)" text-anchor="middle" class="axis">'
                   f'{esc(self.y_label)}</text>')
        for s in self.series:
            spts = [(x, y) for x, y in s.points if x is not None and y is not None and math.isfinite(x)
                    and math.isfinite(y) and (not self.x_log or x > 0)]
            if not spts:
                continue
            out.append(f'<g class="series" data-name="{esc(s.name)}">')
            if s.mode in ("line", "line+points") and len(spts) > 1:
                line = reduce_points(spts)
                coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in line)
                dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
                out.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="{s.width}"{dash} '
                           f'stroke-linejoin="round" points="{coords}"/>')
            if s.mode in ("scatter", "line+points") or len(spts) == 1:
                step = max(1, len(spts) // MAX_POINTS)
                r = 2.2 if s.mode == "scatter" else 3
                for i in range(0, len(spts), step):
                    x, y = spts[i]
                    tip = s.tips[i] if s.tips and i < len(s.tips) else f"{s.name}: {fmt_tick(x)}, {fmt_tick(y)}"
                    out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{r}" fill="{s.color}" '
                               f'fill-opacity="0.55"><title>{esc(tip)}</title></circle>')
            out.append("</g>")
        out.append("</svg>")
        return "".join(out)


def timeline_svg(rows: list[tuple[str, dict]], width: int = 880) -> str:
    """Startup Gantt: one bar row per run, coloured by phase, x in seconds from the run's start."""
    rows = [(n, tl) for n, tl in rows if tl and tl.get("phases")]
    if not rows:
        return '<p class="muted">No startup milestones with timestamps.</p>'
    ml, mr, mt, mb, rh = 170, 16, 8, 40, 26
    H = mt + mb + rh * len(rows)
    pw = width - ml - mr
    total = max(max(p["end_s"] for p in tl["phases"]) for _, tl in rows) or 1.0
    ticks = nice_ticks(0, total, 6)
    total = max(total, ticks[-1])

    def sx(x):
        return ml + x / total * pw

    out = [f'<svg class="chart" data-kind="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {H}" '
           f'width="{width}" height="{H}" role="img" aria-label="startup timeline"><title>startup timeline</title>']
    for t in ticks:
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{mt}" y2="{H - mb}" class="grid"/>'
                   f'<text x="{sx(t):.1f}" y="{H - mb + 16}" text-anchor="middle" class="tick">'
                   f'{esc(fmt_tick(t))}</text>')
    out.append(f'<text x="{ml + pw / 2}" y="{H - 6}" text-anchor="middle" class="axis">seconds from launch</text>')
    for i, (name, tl) in enumerate(rows):
        y = mt + i * rh
        out.append(f'<text x="{ml - 8}" y="{y + rh / 2 + 4}" text-anchor="end" class="rowname">{esc(name)}</text>')
        for p in tl["phases"]:
            x0, x1 = sx(p["start_s"]), sx(p["end_s"])
            color = PHASE_COLORS.get(p["phase"], "#999")
            tip = f'{name}: {p["phase"]} {p["start_s"]:,.0f}-{p["end_s"]:,.0f} s ({p["end_s"] - p["start_s"]:,.1f} s)'
            out.append(f'<rect class="phase" x="{x0:.1f}" y="{y + 4}" width="{max(x1 - x0, 1.5):.1f}" '
                       f'height="{rh - 8}" fill="{color}"><title>{esc(tip)}</title></rect>')
        if tl.get("ready_s") is not None:
            xr = sx(tl["ready_s"])
            out.append(f'<line x1="{xr:.1f}" x2="{xr:.1f}" y1="{y + 2}" y2="{y + rh - 2}" class="ready"/>')
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- data

def _rows(con, sql, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


@dataclass
class RunData:
    run_id: int
    name: str
    color: str
    dash: str | None
    summary: dict
    decode: list  # dicts: t, running, queued, kv, gen
    spec: list  # (t, accept_len)
    timeline: dict | None
    errors: list
    findings: list
    has_time: bool = True


def _load_runs(con, result: CompareResult) -> list[RunData]:
    cols = [c for c in result.columns if c.kind == "server"]
    ids = [c.run_id for c in cols]
    if not ids:
        return []
    summ = {r["run_id"]: r for r in _rows(con, """SELECT v.*, r.started_at, r.ended_at, r.end_reason, r.gpu_count
                                                  FROM run_summary v JOIN runs r USING (run_id)
                                                  WHERE list_contains(?, v.run_id)""", [ids])}
    dec: dict[int, list] = {}
    for r in _rows(con, """SELECT run_id, line_no, ts, running_reqs, queued_reqs, kv_usage, gen_tok_s, accept_len
                           FROM decode_stats WHERE primary_rank AND list_contains(?, run_id)
                           ORDER BY run_id, line_no""", [ids]):
        dec.setdefault(r["run_id"], []).append(r)
    spec: dict[int, list] = {}
    for r in _rows(con, """SELECT run_id, line_no, ts, accept_len FROM spec_stats
                           WHERE list_contains(?, run_id) AND accept_len IS NOT NULL
                             AND NOT coalesce(cumulative, false)
                           ORDER BY run_id, line_no""", [ids]):
        spec.setdefault(r["run_id"], []).append(r)
    errs: dict[int, list] = {}
    for r in _rows(con, """SELECT e.run_id, e.line_no, e.kind, e.fatal, e.message, s.name AS source
                           FROM errors e JOIN sources s USING (source_id)
                           WHERE list_contains(?, e.run_id) ORDER BY e.run_id, e.fatal DESC, e.line_no""", [ids]):
        if len(errs.setdefault(r["run_id"], [])) < 12:
            errs[r["run_id"]].append(r)
    tls = startup_phases(con, ids)
    out = []
    for i, c in enumerate(cols):
        rows = dec.get(c.run_id, [])
        t0 = next((r["ts"] for r in rows if r["ts"] is not None), None)
        has_time = t0 is not None or not rows
        decode = []
        for k, r in enumerate(rows):
            t = (r["ts"] - t0).total_seconds() if has_time and r["ts"] is not None else (None if has_time else k)
            decode.append({"t": t, "running": r["running_reqs"], "queued": r["queued_reqs"], "kv": r["kv_usage"],
                           "gen": r["gen_tok_s"]})
        sp = spec.get(c.run_id) or [r for r in rows if r["accept_len"] is not None]
        if has_time:
            t_spec = [((r["ts"] - t0).total_seconds(), r["accept_len"]) for r in sp if r["ts"] is not None]
        else:
            t_spec = [(k, r["accept_len"]) for k, r in enumerate(sp)]
        out.append(RunData(run_id=c.run_id, name=c.name, color=PALETTE[i % len(PALETTE)],
                           dash=DASHES[(i // len(PALETTE)) % len(DASHES)],
                           summary=summ.get(c.run_id, {}), decode=decode, spec=t_spec,
                           timeline=tls.get(c.run_id), errors=errs.get(c.run_id, []),
                           findings=[f for f in result.findings if getattr(f, "run_id", None) in c.run_ids],
                           has_time=has_time))
    return out


def _median(vals: list[float]) -> float | None:
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    m = len(vals) // 2
    return vals[m] if len(vals) % 2 else (vals[m - 1] + vals[m]) / 2


def _time_label(runs: list[RunData]) -> str:
    return "seconds since first decode sample" if all(r.has_time for r in runs) else "decode sample # (no timestamps)"


def _with_data(runs: list[RunData]) -> list[RunData]:
    return [r for r in runs if r.decode or r.spec]


def _charts(runs: list[RunData], width: int, half: int | None = None) -> dict[str, str]:
    """The SVG charts for these runs (one series per run); keys name the chart."""
    timeline_runs = runs
    runs = _with_data(runs)
    tl = _time_label(runs)
    out = {}
    gen = [Series(r.name, r.color, [(d["t"], d["gen"]) for d in r.decode if d["gen"] is not None], dash=r.dash)
           for r in runs]
    out["throughput"] = Chart("generation throughput over time", tl, "gen tok/s", gen, width=width,
                              kind="throughput").svg()
    conc = []
    for r in runs:
        pts = [(d["running"], d["gen"]) for d in r.decode if d["running"] and d["gen"] and d["gen"] > 0]
        tips = [f"{r.name}: {x} running, {y:,.1f} tok/s" for x, y in pts]
        conc.append(Series(r.name, r.color, pts, mode="scatter", tips=tips))
        by_band: dict[str, list] = {}
        for x, y in pts:
            by_band.setdefault(band_of(x), []).append((x, y))
        med = sorted((_median([p[0] for p in v]), _median([p[1] for p in v])) for v in by_band.values())
        if med:
            conc.append(Series(f"{r.name} (band median)", r.color, med, mode="line+points", width=2.2, dash=r.dash))
    out["concurrency"] = Chart("throughput against running requests", "running requests (log scale)", "gen tok/s",
                               conc, x_log=True, width=width, kind="concurrency").svg()
    spec_runs = [r for r in runs if r.spec]
    if spec_runs:
        out["acceptance"] = Chart("speculative acceptance length over time", tl, "accepted tokens / step",
                                  [Series(r.name, r.color, r.spec, dash=r.dash) for r in spec_runs], y_zero=True,
                                  width=width,
                                  kind="acceptance").svg()
    kv = [Series(r.name, r.color, [(d["t"], d["kv"] * 100) for d in r.decode if d["kv"] is not None], dash=r.dash)
          for r in runs]
    out["kv"] = Chart("KV cache usage over time", tl, "KV cache used (%)", kv, y_max=100, width=half or width,
                      kind="kv").svg()
    q = [Series(r.name, r.color, [(d["t"], d["queued"]) for d in r.decode if d["queued"] is not None], dash=r.dash)
         for r in runs]
    out["queue"] = Chart("queued requests over time", tl, "queued requests", q, width=half or width,
                         y_integer=True, kind="queue").svg()
    out["timeline"] = timeline_svg([(r.name, r.timeline) for r in timeline_runs], width=width)
    return out


# --------------------------------------------------------------------------- HTML

CSS = """
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#fff; --soft:#f6f7f9; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; max-width: 1240px; padding: 24px 28px 60px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.muted, .note { color: var(--muted); } nav a { margin-right: 14px; color: #0b5cad; text-decoration: none; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; color: var(--muted); }
thead th { background: var(--soft); color: var(--fg); position: sticky; top: 0; }
tr.group td { padding-top: 10px; font-weight: 600; color: var(--fg); background: #fbfbfc; }
td.best { font-weight: 700; color: #05603a; }
.tablewrap { overflow-x: auto; }
figure { margin: 10px 0 18px; } figcaption { font-weight: 600; margin-bottom: 2px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12px; color: var(--muted); margin: 2px 0 4px; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.swl { margin-right: 5px; vertical-align: 0; }
svg.chart { display: block; max-width: 100%; height: auto; font-size: 11px; }
svg .plot { fill: #fff; stroke: #d0d5dd; } svg .grid { stroke: #eef0f3; } svg .tick { fill: #667085; }
svg .axis { fill: #344054; font-size: 12px; } svg .rowname { fill: #344054; font-size: 12px; }
svg .ready { stroke: #d92d20; stroke-width: 2; } svg .empty { fill: #98a2b3; font-size: 13px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 6px 26px; }
.run { border-top: 3px solid var(--runc, #ccc); margin-top: 36px; }
.run h2 { border: 0; margin-top: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 2px 14px; margin: 6px 0 10px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.finding { border-left: 4px solid #98a2b3; padding: 4px 10px; margin: 8px 0; background: var(--soft); }
.finding.critical { border-color: #d92d20; } .finding.warning { border-color: #f79009; }
.finding.info { border-color: #2e90fa; }
.sev { font-weight: 700; text-transform: uppercase; font-size: 11px; margin-right: 6px; }
.critical .sev { color: #b42318; } .warning .sev { color: #b54708; } .info .sev { color: #175cd3; }
pre, code { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre.ev { background: #fff; border: 1px solid var(--line); padding: 6px 8px; margin: 4px 0; white-space: pre-wrap;
         word-break: break-all; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { thead th { position: static; } .run { break-before: page; } }
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _legend(items: Iterable[tuple]) -> str:
    """Legend entries (name, colour[, dash]): a swatch, or a short line when the series is dashed."""
    out = []
    for item in items:
        name, color = item[0], item[1]
        dash = item[2] if len(item) > 2 else None
        if dash:
            sw = (f'<svg class="swl" width="22" height="10" aria-hidden="true"><line x1="0" y1="5" x2="22" y2="5" '
                  f'stroke="{color}" stroke-width="2.5" stroke-dasharray="{dash}"/></svg>')
        else:
            sw = f'<span class="sw" style="background:{color}"></span>'
        out.append(f"<span>{sw}{esc(name)}</span>")
    return '<div class="legend">' + "".join(out) + "</div>"


def _figure(title: str, svg: str, legend: str = "", note: str = "") -> str:
    return (f'<figure><figcaption>{esc(title)}</figcaption>{legend}{svg}'
            + (f'<div class="note">{esc(note)}</div>' if note else "") + "</figure>")


def compare_html(result: CompareResult) -> str:
    head = "".join(f"<th>{esc(c.name)}{' [bench]' if c.kind == 'bench' else ''}</th>" for c in result.columns)
    out = ['<div class="tablewrap"><table class="compare"><thead><tr><th>metric</th>', head, "</tr></thead><tbody>"]
    prev = None
    for r in result.rows:
        if r.group != prev:
            out.append(f'<tr class="group"><td colspan="{len(result.columns) + 1}">{esc(r.group)}</td></tr>')
            prev = r.group
        best = best_index(r)
        cells = "".join(f'<td{" class=best" if i in best else ""}>{esc(fmt_value(v, r.unit))}</td>'
                        for i, v in enumerate(r.values))
        out.append(f'<tr data-key="{esc(r.key)}"><td>{esc(row_title(r))}</td>{cells}</tr>')
    out.append("</tbody></table></div>")
    if result.config:
        out.append('<h3>Configuration differences</h3><div class="tablewrap"><table class="config"><thead><tr>'
                   f'<th>setting</th>{head}</tr></thead><tbody>')
        for r in result.config:
            cells = "".join(f"<td>{esc(config_cell(r, i))}</td>" for i in range(len(r.values)))
            tip = "; ".join(f"{c.name}: {k}" for c, k in zip(result.columns, r.keys) if k)
            out.append(f'<tr data-key="{esc(r.name)}"><td title="{esc(tip)}">{esc(r.title)}</td>{cells}</tr>')
        out.append("</tbody></table></div>")
    for n in result.notes:
        out.append(f'<p class="note">Note: {esc(n)}</p>')
    return "".join(out)


def _findings_html(findings: list) -> str:
    if not findings:
        return '<p class="muted">No findings.</p>'
    out = []
    for f in findings:
        sev = getattr(f, "severity", "info")
        out.append(f'<div class="finding {esc(sev)}"><span class="sev">{esc(sev)}</span>'
                   f'{esc(getattr(f, "title", ""))} <code class="muted">{esc(getattr(f, "rule_id", ""))}</code>')
        src, line = getattr(f, "source", None), getattr(f, "line_no", None)
        if getattr(f, "evidence", None):
            out.append(f'<pre class="ev">{esc(src)}:{esc(line)}  {esc(f.evidence)}</pre>')
        for e in (getattr(f, "evidence_lines", None) or [])[:5]:
            out.append(f'<pre class="ev">{esc(src)}:{esc(e.get("line_no"))}  {esc(e.get("text"))}</pre>')
        if getattr(f, "fix", None):
            out.append(f'<div><b>Fix:</b> {esc(f.fix)}</div>')
        out.append("</div>")
    return "".join(out)


def _errors_html(errors: list) -> str:
    if not errors:
        return ""
    out = ['<h3>Errors</h3><div class="tablewrap"><table class="errors"><thead><tr><th>line</th><th>kind</th>'
           '<th>fatal</th><th style="text-align:left">message</th></tr></thead><tbody>']
    for e in errors:
        msg = (e.get("message") or "").strip()
        out.append(f'<tr><td>{esc(e["source"])}:{esc(e["line_no"])}</td><td>{esc(e["kind"])}</td>'
                   f'<td>{"yes" if e["fatal"] else "no"}</td><td style="text-align:left"><code>'
                   f'{esc(msg[:400])}</code></td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def _facts(r: RunData) -> str:
    s = r.summary
    items = [("source", s.get("source_name")), ("engine", f"{s.get('engine') or '-'} "
                                                          f"{s.get('engine_version') or s.get('format_era') or ''}"),
             ("model", s.get("model")), ("GPU", s.get("gpu_name")), ("TP / DP", f"{s.get('tp_size') or '-'} / "
                                                                             f"{s.get('dp_size') or '-'}"),
             ("attention", s.get("attention_backend")), ("speculative", s.get("spec_method") or "off"),
             ("end state", s.get("end_state")), ("started", s.get("started_at")), ("ended", s.get("ended_at")),
             ("single-stream tok/s", fmt_value(s.get("single_stream_tok_s"))),
             ("peak tok/s", fmt_value(s.get("peak_gen_tok_s")))]
    if s.get("end_reason") and s.get("end_state") in ("crashed", "startup_failed", "killed"):
        items.append(("end reason", s.get("end_reason")))
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc('-' if v is None else v)}</dd>"
                                         for k, v in items) + "</dl>"


def render_html(result: CompareResult, runs: list[RunData], *, title: str = "logsleuth report",
                generated_at: str | None = None) -> str:
    from .. import __version__

    gen = generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    run_legend = _legend((r.name, r.color, r.dash) for r in _with_data(runs))
    spec_legend = _legend((r.name, r.color, r.dash) for r in runs if r.spec)
    phase_legend = _legend(PHASE_COLORS.items())
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<link rel="icon" href="data:,">',
             f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
             f"<header><h1>{esc(title)}</h1><p class=\"muted\">{len(result.columns)} column(s), "
             f"{len(runs)} server run(s) · generated {esc(gen)} by logsleuth {esc(__version__)} · "
             "one file, no scripts, no network</p></header>"]
    nav = ['<a href="#compare">compare</a>']
    if len(runs) > 1:
        nav.append('<a href="#overlay">across runs</a>')
    nav.append('<a href="#findings">findings</a>')
    nav += [f'<a href="#run-{r.run_id}">{esc(r.name)}</a>' for r in runs]
    parts.append("<nav>" + "".join(nav) + "</nav>")
    parts.append('<section id="compare"><h2>Runs compared</h2>' + compare_html(result) + "</section>")
    if len(runs) > 1:
        ch = _charts(runs, 1180, half=580)
        sec = ['<section id="overlay"><h2>Across runs</h2>']
        sec.append(_figure("Generation throughput over time", ch["throughput"], run_legend))
        sec.append(_figure("Throughput against running requests (concurrency curve)", ch["concurrency"], run_legend,
                           "dots: decode samples; line: median per band of running requests (1, 2-4, 5-16, "
                           "17-64, 65-256, >256)"))
        if "acceptance" in ch:
            sec.append(_figure("Speculative acceptance length over time", ch["acceptance"], spec_legend))
        sec.append('<div class="grid2">' + _figure("KV cache usage over time", ch["kv"], run_legend)
                   + _figure("Queued requests over time", ch["queue"], run_legend) + "</div>")
        sec.append(_figure("Startup timeline", ch["timeline"], phase_legend,
                           "red tick: server ready; hover a bar for its seconds"))
        sec.append("</section>")
        parts.append("".join(sec))
    all_findings = [f for r in runs for f in r.findings]
    parts.append('<section id="findings"><h2>Findings</h2>')
    if not all_findings:
        parts.append('<p class="muted">No findings'
                     + (" (rules not available)" if any("rules" in n for n in result.notes) else "") + ".</p>")
    for r in runs:
        if r.findings:
            parts.append(f"<h3>{esc(r.name)} (run {r.run_id})</h3>" + _findings_html(r.findings))
    parts.append("</section>")
    for r in runs:
        ch = _charts([r], 600)
        sec = [f'<section class="run" id="run-{r.run_id}" style="--runc:{r.color}">'
               f"<h2>Run {r.run_id} · {esc(r.name)}</h2>", _facts(r)]
        if r.decode or r.spec:
            sec += ['<div class="grid2">', _figure("Generation throughput over time", ch["throughput"]),
                    _figure("Throughput against running requests", ch["concurrency"])]
            if "acceptance" in ch:
                sec.append(_figure("Acceptance length over time", ch["acceptance"]))
            sec += [_figure("KV cache usage over time", ch["kv"]), _figure("Queued requests over time", ch["queue"]),
                    "</div>"]
        else:
            sec.append('<p class="muted">No decode or throughput samples in this run.</p>')
        sec.append(_figure("Startup timeline", ch["timeline"], phase_legend))
        if r.findings:
            sec.append("<h3>Findings</h3>" + _findings_html(r.findings))
        sec.append(_errors_html(r.errors))
        sec.append("</section>")
        parts.append("".join(sec))
    parts.append("<footer>logsleuth report · charts are inline SVG; hover points and bars for values · "
                 "throughput figures are medians of the server's own decode/stat lines (primary rank)</footer>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def build_report(con, selectors: Iterable[str | int] | None = None, *, title: str | None = None,
                 generated_at: str | None = None, timings: dict | None = None, findings: bool = True) -> str:
    """The whole HTML report for the selected runs. ``timings`` (a dict) receives seconds per stage;
    ``findings=False`` skips the diagnose rules."""
    t = time.perf_counter()
    result = compare(con, selectors, findings=findings)
    t1 = time.perf_counter()
    runs = _load_runs(con, result)
    t2 = time.perf_counter()
    page = render_html(result, runs, title=title or "logsleuth report", generated_at=generated_at)
    t3 = time.perf_counter()
    if timings is not None:
        timings.update({"compare_s": t1 - t, "load_s": t2 - t1, "render_s": t3 - t2, "total_s": t3 - t,
                        "html_bytes": len(page.encode("utf-8"))})
    return page


def write_report(con, selectors: Iterable[str | int] | None, path: str | Path, **kw) -> Path:
    p = Path(path)
    page = build_report(con, selectors, **kw)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(page, encoding="utf-8")
    return p
