"""Inline SVG charts for the HTML report: line/scatter charts and the startup Gantt. No plotting library.

Contract: a :class:`Chart` holds :class:`Series` of (x, y) points and draws itself with ``svg()``;
``timeline_svg(rows)`` draws the startup phases of several runs. Input is plain data (no database);
every text that may come from a log passes through :func:`esc`. Long series are reduced to the
min/max per bucket (``reduce_points``) so a page stays small. A new series (e.g. a telemetry
overlay) is one more ``Series`` in a chart's list.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Callable

# Okabe-Ito, readable by colour-blind people; yellow darkened for white paper
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#555555", "#B8A000"]
PHASE_COLORS = {"init": "#9E9E9E", "weights": "#0072B2", "compile": "#CC79A7", "KV cache": "#009E73",
                "graph capture": "#E69F00", "ready": "#56B4E9"}
DASHES = [None, "6 3", "2 2", "8 3 2 3"]  # after each 8 colours, the next line style
MAX_POINTS = 1200  # per series; longer series are reduced to min/max per bucket


def esc(v) -> str:
    """HTML-escape any value (quotes too): the only way log text enters the page."""
    return html.escape("" if v is None else str(v), quote=True)


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


Scale = Callable[[float], float]

# plot margins: left, right, top, bottom
_ML, _MR, _MT, _MB = 62, 16, 12, 44


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
        pw, ph = W - _ML - _MR, H - _MT - _MB
        out = [f'<svg class="chart" data-kind="{esc(self.kind)}" xmlns="http://www.w3.org/2000/svg" '
               f'viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{esc(self.title)}">',
               f"<title>{esc(self.title)}</title>"]
        pts = [p for s in self.series for p in self._plottable(s.points)]
        if not pts:
            out.append(f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="empty">no data</text></svg>')
            return "".join(out)
        sx, xt = self._x_scale([p[0] for p in pts], pw)
        sy, yt = self._y_scale([p[1] for p in pts], ph)
        out.append(f'<rect x="{_ML}" y="{_MT}" width="{pw}" height="{ph}" class="plot"/>')
        out += self._grid(sx, sy, xt, yt, pw, ph)
        for s in self.series:
            out += self._series(s, sx, sy)
        out.append("</svg>")
        return "".join(out)

    def _plottable(self, points) -> list[tuple[float, float]]:
        return [(x, y) for x, y in points if x is not None and y is not None and math.isfinite(x)
                and math.isfinite(y) and (not self.x_log or x > 0)]

    def _x_scale(self, xs: list[float], pw: float) -> tuple[Scale, list[float]]:
        """x -> pixel, and the x ticks: powers of two on a log axis, round numbers otherwise."""
        if self.x_log:
            lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
            if lx1 - lx0 < 1:
                lx0, lx1 = lx0 - 0.5, lx1 + 0.5
            xt = [2.0 ** k for k in range(math.floor(lx0), math.ceil(lx1) + 1)]
            lx0, lx1 = math.log2(xt[0]), math.log2(xt[-1])
            return (lambda x: _ML + (math.log2(x) - lx0) / (lx1 - lx0) * pw), xt
        x0, x1 = min(xs), max(xs)
        if x1 == x0:
            x0, x1 = x0 - 1, x1 + 1
        xt = nice_ticks(x0, x1, 6)
        x0, x1 = min(xt[0], x0), max(xt[-1], x1)
        return (lambda x: _ML + (x - x0) / (x1 - x0) * pw), xt

    def _y_scale(self, ys: list[float], ph: float) -> tuple[Scale, list[float]]:
        """y -> pixel, and the y ticks (from 0 unless ``y_zero`` is off; up to ``y_max`` when set)."""
        y0 = 0.0 if self.y_zero else min(ys)
        y1 = self.y_max if self.y_max is not None else max(ys)
        if self.y_integer:
            y1 = max(y1, y0 + 5)
        if y1 <= y0:
            y1 = y0 + (abs(y0) or 1.0)
        yt = nice_ticks(y0, y1, 5)
        y0, y1 = min(yt[0], y0), max(yt[-1], y1)
        return (lambda y: _MT + ph - (y - y0) / (y1 - y0) * ph), yt

    def _grid(self, sx: Scale, sy: Scale, xt: list[float], yt: list[float], pw: float, ph: float) -> list[str]:
        """Grid lines with their tick labels, and the axis titles."""
        out = []
        for t in yt:
            yy = sy(t)
            out.append(f'<line x1="{_ML}" x2="{_ML + pw}" y1="{yy:.1f}" y2="{yy:.1f}" class="grid"/>'
                       f'<text x="{_ML - 6}" y="{yy + 4:.1f}" text-anchor="end" class="tick">{esc(fmt_tick(t))}</text>')
        for t in xt:
            xx = sx(t)
            out.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{_MT}" y2="{_MT + ph}" class="grid"/>'
                       f'<text x="{xx:.1f}" y="{_MT + ph + 16}" text-anchor="middle" class="tick">'
                       f'{esc(fmt_tick(t))}</text>')
        out.append(f'<text x="{_ML + pw / 2}" y="{self.height - 6}" text-anchor="middle" class="axis">'
                   f'{esc(self.x_label)}</text>'
                   f'<text transform="translate(14 {_MT + ph / 2}) rotate(-90)" text-anchor="middle" class="axis">'
                   f'{esc(self.y_label)}</text>')
        return out

    def _series(self, s: Series, sx: Scale, sy: Scale) -> list[str]:
        """One series: a polyline (reduced when long) and/or its points with tooltips."""
        spts = self._plottable(s.points)
        if not spts:
            return []
        out = [f'<g class="series" data-name="{esc(s.name)}">']
        if s.mode in ("line", "line+points") and len(spts) > 1:
            coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in reduce_points(spts))
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
        return out


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
        out += _timeline_row(name, tl, mt + i * rh, rh, ml, sx)
    out.append("</svg>")
    return "".join(out)


def _timeline_row(name: str, tl: dict, y: float, rh: float, ml: float, sx: Scale) -> list[str]:
    out = [f'<text x="{ml - 8}" y="{y + rh / 2 + 4}" text-anchor="end" class="rowname">{esc(name)}</text>']
    for p in tl["phases"]:
        x0, x1 = sx(p["start_s"]), sx(p["end_s"])
        color = PHASE_COLORS.get(p["phase"], "#999")
        tip = f'{name}: {p["phase"]} {p["start_s"]:,.0f}-{p["end_s"]:,.0f} s ({p["end_s"] - p["start_s"]:,.1f} s)'
        out.append(f'<rect class="phase" x="{x0:.1f}" y="{y + 4}" width="{max(x1 - x0, 1.5):.1f}" '
                   f'height="{rh - 8}" fill="{color}"><title>{esc(tip)}</title></rect>')
    if tl.get("ready_s") is not None:
        xr = sx(tl["ready_s"])
        out.append(f'<line x1="{xr:.1f}" x2="{xr:.1f}" y1="{y + 2}" y2="{y + rh - 2}" class="ready"/>')
    return out
