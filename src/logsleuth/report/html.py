"""Self-contained HTML report: charts per run and overlaid across runs, findings, the compare table.

Contract: ``render(data: ReportData) -> str`` returns one HTML document from the data that
report/data.py gathered (this module never touches the database). The page needs no network
and no JavaScript: charts are inline SVG (report/svg.py), the CSS is inline, and a
Content-Security-Policy meta tag forbids every fetch and every script. Every text that comes
from a log (model names, config values, error messages, evidence lines, labels, file names)
passes through :func:`esc`, so a log line holding ``<script>`` shows as text.

A fleet dataset with several hosts gets a fleet page first (``ReportData.fleet``): the flags
(hosts below their peers, changes between days, crash clusters), one row per host, and the
details of each flag, from the same summary ``logsleuth fleet`` prints.

Charts: generation throughput over time; throughput against running requests (the
concurrency curve, log x axis); acceptance length over time (speculative runs); KV-cache
usage and queue length over time; the startup timeline (init, weights, compile, KV cache,
graph capture, ready). Time axes count seconds from a run's first decode sample, so runs
from different days overlay.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..analysis.compare import band_of
from ..analysis.compare_format import best_index, config_cell, fmt_value, row_title
from .svg import PHASE_COLORS, Chart, Series, esc, timeline_svg

if TYPE_CHECKING:  # plain data in, text out
    from ..analysis.compare import CompareResult
    from .data import ReportData, RunData

# --------------------------------------------------------------------------- charts

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
.muted, .note { color: var(--muted); }
nav { display: flex; flex-wrap: wrap; gap: 2px 14px; } nav a { color: #0b5cad; text-decoration: none; overflow-wrap: anywhere; }
.pagecap { margin: 14px 0 0; font-size: 12px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; color: var(--muted); }
table.compare td:first-child, table.config td:first-child { min-width: 260px; max-width: 320px; }
table.compare th, table.config th { max-width: 150px; overflow-wrap: anywhere; }
table.compare td, table.config td { max-width: 220px; overflow-wrap: anywhere; }
td code { white-space: pre-wrap; overflow-wrap: anywhere; }
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
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr);
           gap: 2px 14px; margin: 6px 0 10px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
h1, h2, .legend span { overflow-wrap: anywhere; }
.finding { border-left: 4px solid #98a2b3; padding: 4px 10px; margin: 8px 0; background: var(--soft); }
.finding.critical { border-color: #d92d20; } .finding.warning { border-color: #f79009; }
.finding.info { border-color: #2e90fa; }
.sev { font-weight: 700; text-transform: uppercase; font-size: 11px; margin-right: 6px; }
.critical .sev { color: #b42318; } .warning .sev { color: #b54708; } .info .sev { color: #175cd3; }
pre, code { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre.ev { background: #fff; border: 1px solid var(--line); padding: 6px 8px; margin: 4px 0; white-space: pre-wrap;
         word-break: break-all; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
table.hosts td, table.flags td, table.fdetail td { text-align: left; }
tr.flagged td:first-child { color: #b42318; font-weight: 700; }
.kind { font-weight: 700; text-transform: uppercase; font-size: 11px; color: #b54708; }
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


#: runs per page of the compare table: with the metric column, six runs fit the page's 1240 px
#: (a label of ~220 px and ~150 px per run); more runs make more pages, one under the other
COMPARE_PAGE = 6


def _pages(n: int, size: int = COMPARE_PAGE) -> list[range]:
    """Column ranges of the compare pages: ``size`` runs each, the last one shorter."""
    return [range(i, min(i + size, n)) for i in range(0, n, size)] or [range(0)]


def _page_caption(cols: range, n: int) -> str:
    return f'<p class="muted pagecap">runs {cols.start + 1}–{cols.stop} of {n}</p>' if n > COMPARE_PAGE else ""


def compare_html(result: CompareResult) -> str:
    """The compare table, paged by ``COMPARE_PAGE`` runs (each page repeats the metric column),
    then the configuration differences, paged the same way."""
    n = len(result.columns)
    out = []
    for cols in _pages(n):
        out.append(_page_caption(cols, n) + _compare_page(result, cols))
    if result.config:
        out.append("<h3>Configuration differences</h3>")
        for cols in _pages(n):
            out.append(_page_caption(cols, n) + _config_page(result, cols))
    for note in result.notes:
        out.append(f'<p class="note">Note: {esc(note)}</p>')
    return "".join(out)


def _heads(result: CompareResult, cols: range) -> str:
    return "".join(f"<th>{esc(result.columns[i].name)}{' [bench]' if result.columns[i].kind == 'bench' else ''}</th>"
                   for i in cols)


def _compare_page(result: CompareResult, cols: range) -> str:
    out = ['<div class="tablewrap"><table class="compare"><thead><tr><th>metric</th>', _heads(result, cols),
           "</tr></thead><tbody>"]
    prev = None
    for r in result.rows:
        if r.group != prev:
            out.append(f'<tr class="group"><td colspan="{len(cols) + 1}">{esc(r.group)}</td></tr>')
            prev = r.group
        best = best_index(r)
        cells = "".join(f'<td{" class=best" if i in best else ""}>{esc(fmt_value(r.values[i], r.unit))}</td>'
                        for i in cols)
        out.append(f'<tr data-key="{esc(r.key)}"><td>{esc(row_title(r))}</td>{cells}</tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def _config_page(result: CompareResult, cols: range) -> str:
    out = [f'<div class="tablewrap"><table class="config"><thead><tr><th>setting</th>{_heads(result, cols)}'
           "</tr></thead><tbody>"]
    for r in result.config:
        cells = "".join(f"<td>{esc(config_cell(r, i))}</td>" for i in cols)
        tip = "; ".join(f"{c.name}: {k}" for c, k in zip(result.columns, r.keys) if k)
        out.append(f'<tr data-key="{esc(r.name)}"><td title="{esc(tip)}">{esc(r.title)}</td>{cells}</tr>')
    out.append("</tbody></table></div>")
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
        out += [_citation_html(c) for c in getattr(f, "citations", None) or []]
        out.append("</div>")
    return "".join(out)


def _citation_html(c: dict) -> str:
    """A known upstream issue cited by a finding: links to the issues and pull requests."""
    links = ", ".join(f'<a href="{esc(u)}" rel="noopener noreferrer">{esc(label)}</a>'
                      for label, u in zip(c.get("upstream") or [], c.get("urls") or []) if u.startswith("https://"))
    unknown = f"; not shown by the run: {esc(', '.join(c['unknown']))}" if c.get("unknown") else ""
    return (f'<div class="known"><b>Known issue</b> <code>{esc(c["id"])}</code> ({links}): {esc(c["status"])}; '
            f'{esc(c["version"])}. <b>Workaround:</b> {esc(c["workaround"])} '
            f'<span class="muted">[confidence {esc(c["confidence"])}{unknown}]</span></div>')


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
    version = s.get("engine_version") or (f"era {s['format_era']}" if s.get("format_era") else "")
    items = [("source", s.get("source_name")), ("engine", f"{s.get('engine') or ''} {version}".strip()),
             ("model", s.get("model")), ("GPU", s.get("gpu_name")), ("TP / DP", f"{s.get('tp_size') or '-'} / "
                                                                             f"{s.get('dp_size') or '-'}"),
             ("attention", s.get("attention_backend")), ("speculative", s.get("spec_method") or "off"),
             ("end state", s.get("end_state")), ("started", s.get("started_at")), ("ended", s.get("ended_at")),
             ("single-stream tok/s", fmt_value(s.get("single_stream_tok_s"))),
             ("peak tok/s", fmt_value(s.get("peak_gen_tok_s")))]
    if s.get("end_reason") and s.get("end_state") in ("crashed", "startup_failed", "killed"):
        items.append(("end reason", s.get("end_reason")))
    known = [(k, v) for k, v in items if v not in (None, "", "-", "- / -") and not str(v).startswith("- ")]
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in known) + "</dl>"


def render(data: ReportData) -> str:
    """The whole HTML document."""
    runs, result = data.runs, data.compare
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<link rel="icon" href="data:,">',
             f"<title>{esc(data.title)}</title><style>{CSS}</style></head><body>",
             f"<header><h1>{esc(data.title)}</h1><p class=\"muted\">{len(result.columns)} column(s), "
             f"{len(runs)} server run(s) · generated {esc(data.generated_at)} by logsleuth {esc(data.version)} · "
             "one file, no scripts, no network</p></header>",
             _nav(runs, data.fleet is not None)]
    if data.fleet is not None:
        parts.append(fleet_html(data.fleet))
    parts += ['<section id="compare"><h2>Runs compared</h2>' + compare_html(result) + "</section>"]
    if len(runs) > 1:
        parts.append(_overlay_section(runs))
    parts.append(_findings_section(runs, result))
    parts += [_run_section(r) for r in runs]
    parts.append("<footer>logsleuth report · charts are inline SVG; hover points and bars for values · "
                 "throughput figures are medians of the server's own decode/stat lines (primary rank)</footer>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _nav(runs: list[RunData], fleet: bool = False) -> str:
    nav = (['<a href="#fleet">fleet</a>'] if fleet else []) + ['<a href="#compare">compare</a>']
    if len(runs) > 1:
        nav.append('<a href="#overlay">across runs</a>')
    nav.append('<a href="#findings">findings</a>')
    nav += [f'<a href="#run-{r.run_id}">{esc(r.name)}</a>' for r in runs]
    return "<nav>" + "".join(nav) + "</nav>"


def _overlay_section(runs: list[RunData]) -> str:
    """The charts with one series per run, on shared axes."""
    run_legend = _legend((r.name, r.color, r.dash) for r in _with_data(runs))
    ch = _charts(runs, 1180, half=580)
    sec = ['<section id="overlay"><h2>Across runs</h2>']
    sec.append(_figure("Generation throughput over time", ch["throughput"], run_legend))
    sec.append(_figure("Throughput against running requests (concurrency curve)", ch["concurrency"], run_legend,
                       "dots: decode samples; line: median per band of running requests (1, 2-4, 5-16, "
                       "17-64, 65-256, >256)"))
    if "acceptance" in ch:
        sec.append(_figure("Speculative acceptance length over time", ch["acceptance"],
                           _legend((r.name, r.color, r.dash) for r in runs if r.spec)))
    sec.append('<div class="grid2">' + _figure("KV cache usage over time", ch["kv"], run_legend)
               + _figure("Queued requests over time", ch["queue"], run_legend) + "</div>")
    sec.append(_figure("Startup timeline", ch["timeline"], _legend(PHASE_COLORS.items()),
                       "red tick: server ready; hover a bar for its seconds"))
    sec.append("</section>")
    return "".join(sec)


def _findings_section(runs: list[RunData], result: CompareResult) -> str:
    parts = ['<section id="findings"><h2>Findings</h2>']
    if not any(r.findings for r in runs):
        parts.append('<p class="muted">No findings'
                     + (" (rules not available)" if any("rules" in n for n in result.notes) else "") + ".</p>")
    for r in runs:
        if r.findings:
            parts.append(f"<h3>{esc(r.name)} (run {r.run_id})</h3>" + _findings_html(r.findings))
    parts.append("</section>")
    return "\n".join(parts)


def _telemetry_figure(r: RunData) -> str:
    """GPU utilisation, SM clock and power overlaid with decode throughput on one time axis."""
    series = [Series(label, color, pts) for label, color, pts in r.telemetry]
    chart = Chart("GPU telemetry and decode throughput over time", "seconds since the first telemetry sample",
                  "% (utilisation; others of their peak)", series, y_max=100, width=1180, kind="telemetry")
    return _figure("GPU utilisation, SM clock and power with decode throughput (telemetry)", chart.svg(),
                   _legend((label, color) for label, color, _ in r.telemetry),
                   "a clock or power dip lined up with a throughput dip points at throttling; "
                   "utilisation low while throughput is low and requests wait points at the scheduler")


def _run_section(r: RunData) -> str:
    """One run: its facts, its own charts, findings and errors."""
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
    if r.telemetry:
        sec.append(_telemetry_figure(r))
    sec.append(_figure("Startup timeline", ch["timeline"], _legend(PHASE_COLORS.items())))
    if r.findings:
        sec.append("<h3>Findings</h3>" + _findings_html(r.findings))
    sec.append(_errors_html(r.errors))
    sec.append("</section>")
    return "".join(sec)


# --------------------------------------------------------------------------- fleet page

#: the per-host columns of the fleet page: (key of a FleetSummary host row, heading)
HOST_COLUMNS = [("engine", "engine"), ("model", "model"), ("gpu", "GPU"), ("attention_backend", "attention"),
                ("spec_method", "speculative"), ("accept_len", "accept len"),
                ("single_stream_tok_s", "single-stream tok/s"), ("peak_gen_tok_s", "peak tok/s"),
                ("end_states", "end states")]
SEVERITIES = ("critical", "warning", "info")


def _cell(value) -> str:
    return esc("-" if value is None or value == "" else fmt_value(value) if isinstance(value, float) else value)


def _table(cls: str, heads: list[str], rows: list[list[str]], row_classes: list[str] | None = None) -> str:
    """A table of already-escaped cells."""
    out = [f'<div class="tablewrap"><table class="{cls}"><thead><tr>',
           "".join(f"<th>{esc(h)}</th>" for h in heads), "</tr></thead><tbody>"]
    for i, cells in enumerate(rows):
        cls_attr = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        out.append(f"<tr{cls_attr}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def fleet_html(fleet) -> str:
    """The fleet page: flags first, then one row per host, then each flag's details."""
    t = fleet.thresholds
    flagged = {h.strip() for f in fleet.flags() for h in str(f["hosts"]).split(",")}
    dates = sorted({d for h in fleet.hosts for d in (h.get("first_date"), h.get("last_date")) if d})
    sec = ['<section id="fleet"><h2>Fleet</h2>',
           f'<p class="muted">{len(fleet.hosts)} hosts'
           + (f", {esc(dates[0])} to {esc(dates[-1])}" if dates else "")
           + f". Flags: a host at least {esc(format(t.get('min_drop', 0), '.0%'))} below the median of its peers "
           f"(same configuration, at the same running requests; at least {esc(t.get('min_peers'))} hosts); a host "
           f"whose load is not what its client was set to; what changed on a host between "
           f"consecutive days; one crash cause on at least {esc(t.get('min_hosts'))} hosts.</p>",
           "<h3>Flags</h3>"]
    flags = fleet.flags()
    if flags:
        sec.append(_table("flags", ["kind", "hosts", "what"],
                          [[f'<span class="kind">{esc(f["kind"].replace("_", " "))}</span>', esc(f["hosts"]),
                            esc(f["what"])] for f in flags]))
    else:
        sec.append('<p class="muted">No outlier, change or crash cluster.</p>')
    sec.append("<h3>Hosts</h3>")
    with_findings = any("findings" in h for h in fleet.hosts)
    heads = ["host", "dates", "runs"] + [h for _, h in HOST_COLUMNS] + (list(SEVERITIES) if with_findings else [])
    rows, classes = [], []
    for h in fleet.hosts:
        span = h.get("first_date") if h.get("first_date") == h.get("last_date") else \
            f"{h.get('first_date') or '?'} to {h.get('last_date') or '?'}"
        cells = [esc(h.get("host")), _cell(span), _cell(h.get("runs"))] + [_cell(h.get(k)) for k, _ in HOST_COLUMNS]
        if with_findings:
            cells += [_cell(h.get("findings", {}).get(sev, 0)) for sev in SEVERITIES]
        rows.append(cells)
        classes.append("flagged" if h.get("host") in flagged else "")
    sec.append(_table("hosts", heads, rows, classes))
    if fleet.outliers:
        sec.append("<h3>Below their peers</h3>" + _table(
            "fdetail outliers", ["host", "model", "GPU", "engine", "figure", "value", "peers' median", "below by", "peers"],
            [[esc(o["host"]), _cell(o["model"]), _cell(o["gpu"]), _cell(o["engine"]), _cell(o["metric"]),
              _cell(o["value"]), _cell(o["peer_median"]), esc(f"{o['below_by']:.0%}"), _cell(o["n_peers"])]
             for o in fleet.outliers]))
    if fleet.changes:
        sec.append("<h3>Changes between days</h3>" + _table(
            "fdetail changes", ["host", "from", "to", "what", "before", "after"],
            [[esc(c["host"]), _cell(c["before_date"]), _cell(c["after_date"]), _cell(c["what"]),
              _cell(c["before"]), _cell(c["after"])] for c in fleet.changes]))
    if fleet.crash_clusters:
        sec.append("<h3>Crash clusters</h3>" + _table(
            "fdetail crashes", ["hosts", "runs", "dates", "which hosts", "cause (numbers and paths masked)", "example"],
            [[_cell(c["hosts"]), _cell(c["runs"]), _cell(f"{c.get('first_date')} to {c.get('last_date')}"),
              esc(c["host_list"]), f'<code>{esc(c["cause"])}</code>', f'<code>{esc(c["example"])}</code>']
             for c in fleet.crash_clusters]))
    sec.append("</section>")
    return "".join(sec)

