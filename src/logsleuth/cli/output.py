"""Rendering of results for the terminal: rich tables, CSV, JSON, Markdown.

Contract: functions take what ``logsleuth.api`` returns (polars frames, dataclasses,
dicts) and write to a given stream (stdout by default); this module and the progress bar
are the only places that import rich. The ``--format`` choices of every command are the
enums below (typer validates them: a bad value is a usage error, exit 2).

Width: on a terminal rich uses the terminal's width; when stdout is a pipe or a file,
nothing is hard-wrapped: tables take their natural width and text lines stay whole (so
grep finds them), unless ``COLUMNS`` is set, which is then respected.
"""
from __future__ import annotations

import csv
import enum
import io
import json
import math
import os
import sys
from contextlib import contextmanager
from typing import Any

from .. import settings
from ..analysis.severity import SEVERITIES


def choices(name: str, values: str, doc: str) -> type[enum.Enum]:
    """A ``str`` enum of the space-separated ``values``: typer lists them in the help and
    refuses any other value (usage error, exit 2)."""
    kind = enum.Enum(name, [(v, v) for v in values.split()], type=str, module=__name__)
    kind.__doc__ = doc
    return kind


#: the choices of every option of the CLI that takes a fixed set of words
#: (the same words in the same order everywhere; jsonl = one JSON object a line, like sqlite-utils' --nl
#: and duckdb's -jsonlines; records with nested parts have no csv or markdown form)
Format = choices("Format", "table csv json jsonl markdown", "Output of a table of rows.")
RecordFormat = choices("RecordFormat", "table json jsonl", "Output of records with nested parts (ingest, show).")
FindingsFormat = choices("FindingsFormat", "table csv json jsonl markdown", "Output of diagnose findings.")
CompareFormat = choices("CompareFormat", "table csv json jsonl markdown", "Output of compare.")
FleetExecutor = choices("FleetExecutor", "local ray serial", "Who parses the files of ``ingest --dataset``.")
Severity = choices("Severity", " ".join(SEVERITIES), "A finding's severity, most severe first.")
ColorMode = choices("ColorMode", "auto always never", "When output is styled (cli/color.py).")


#: width of a console that writes to a pipe or a file: wide enough that nothing wraps
UNWRAPPED_WIDTH = 100_000

from ..inert import cell, inert, markup_safe, plain_json

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # polars is only needed by callers that already hold a frame
    import polars as pl


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 4) if math.isfinite(v) else None  # JSON has no NaN/Infinity
    if hasattr(v, "total_seconds"):  # an INTERVAL: as DuckDB prints it, not Python's "1 day, 0:00:00"
        from ..table import interval_text

        return interval_text(v)
    if hasattr(v, "isoformat"):
        return v.isoformat(sep=" ") if hasattr(v, "hour") else v.isoformat()
    if type(v).__name__ == "Decimal":  # DuckDB sum()/HUGEINT: a number in JSON, not a string
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def frame_rows(frame: pl.DataFrame) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def write_jsonl(records, out) -> None:
    """One compact JSON object a line (``--format jsonl``)."""
    out.write("".join(plain_json(r, ensure_ascii=False) + "\n" for r in records))


def write_frame(frame: pl.DataFrame, fmt: str = "table", out=None, title: str | None = None) -> None:
    out = out or sys.stdout
    if fmt == "json":
        out.write(plain_json(frame_rows(frame), indent=2) + "\n")
    elif fmt == "jsonl":
        write_jsonl(frame_rows(frame), out)
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")  # Unix lines, like sqlite-utils and the duckdb shell
        w.writerow(frame.columns)
        for row in frame.iter_rows():
            w.writerow(["" if v is None else inert(_plain(v)) for v in row])
        out.write(buf.getvalue())
    elif fmt == "markdown":
        out.write(markdown_table(frame))
    else:
        console(out).print(rich_table(frame, title, crop=crops(out)))


def crops(stream) -> bool:
    """Whether tables written to ``stream`` crop long cells (``…``) to one line: when the width
    is limited (a terminal, or COLUMNS), never in a pipe or file (the full value, for grep)."""
    return output_width(stream or sys.stdout) != UNWRAPPED_WIDTH


def _cell(value, crop: bool):
    """A table cell (never markup); cropped to one line with an ellipsis when ``crop``."""
    text = cell("" if value is None else _plain(value))
    if crop:
        text.no_wrap, text.overflow = True, "ellipsis"
    return text


def markdown_table(frame: pl.DataFrame) -> str:
    cols = frame.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join("" if v is None else inert(_plain(v)).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


def output_width(stream) -> int | None:
    """Columns to render for ``stream``: ``COLUMNS`` when set, the terminal's own width on
    a terminal (None lets rich ask), else ``UNWRAPPED_WIDTH`` (no hard wrap in a pipe)."""
    cols = settings.columns()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return None
    return UNWRAPPED_WIDTH


def console(out=None, stderr: bool = False):
    """A rich console for ``out`` (stdout) or stderr, styled per ``--color`` / NO_COLOR."""
    from rich.console import Console

    from .color import console_options, mode

    styling = console_options(mode())
    if stderr:
        return Console(stderr=True, highlight=False, **styling)
    stream = out or sys.stdout
    width = output_width(stream)
    return Console(file=stream, highlight=False, soft_wrap=width == UNWRAPPED_WIDTH, width=width, **styling)


def rich_table(frame: pl.DataFrame, title: str | None = None, crop: bool = False):
    """A rich table of ``frame``; ``crop``: one line per row, long cells end in ``…`` (the
    widest columns give way first, as rich narrows wrappable columns before the others)."""
    from rich.table import Table

    t = Table(title=title, show_lines=False, header_style="bold", caption=None if frame.height else "0 rows")
    for c in frame.columns:
        t.add_column(c, overflow="ellipsis" if crop else "fold", min_width=min(len(c), 8) if crop else None)
    for row in frame.iter_rows():
        t.add_row(*[_cell(v, crop) for v in row])  # log text: never markup
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
    """Compact multi-line text block describing one run (used by ingest and show): what is
    known, and nothing for what is not (no ``-`` placeholders; a fact's source only with the fact)."""
    def g(k):  # values come from logs: shown inert, never as markup
        v = row.get(k)
        return markup_safe(v) if isinstance(v, str) else v

    def join(parts) -> str:
        return " | ".join(p for p in parts if p)

    def num(label: str, key: str, unit: str = "", digits: int = 1) -> str:
        v = g(key)
        return f"{label} {fmt_num(v, digits)}{unit}" if v is not None and not (isinstance(v, float) and math.isnan(v)) else ""

    version = g("engine_version") or (f"era {g('format_era')}" if g("format_era") else "")
    model = f"model {g('model')}" + (f" ({g('model_arch')})" if g("model_arch") else "") if g("model") else ""
    par = " ".join(f"{k} {g(c)}" for k, c in (("TP", "tp_size"), ("DP", "dp_size")) if g(c) is not None)
    gpu = (f"GPU {g('gpu_name')}" + (f" {g('gpu_sm')}" if g("gpu_sm") else "")
           + (f" (from {g('gpu_source')})" if g("gpu_source") else "")) if g("gpu_name") else ""
    attn = (f"attention {g('attention_backend')}" + (f" ({g('attention_backend_how')})" if g("attention_backend_how") else "")
            if g("attention_backend") else "")
    spec = (f"spec {g('spec_method')}" + (f" accept_len {fmt_num(g('mean_accept_len'), 2)}" if g("mean_accept_len") is not None else "")
            if g("spec_method") else "")
    graph = {True: "CUDA graph on", False: "CUDA graph off"}.get(g("cuda_graph"), "")
    capture = num("capture", "cuda_graph_capture_s", " s")
    end = g("end_state")
    lines = [
        f"[bold]run {g('run_id')}[/] {g('source_name')}  lines {g('first_line')}-{g('last_line')}"
        + (f"  end: [bold]{end}[/]" if end else ""),
        "  " + join([f"engine {g('engine')} {version}".strip() if g("engine") else "", model, par, gpu]),
        "  " + join([attn, spec, " ".join(p for p in (graph, capture) if p)]),
        "  " + join([num("KV tokens", "kv_cache_tokens", digits=0), num("weights", "weight_load_s", " s"),
                     num("ready after", "time_to_ready_s", " s"),
                     f"decode samples {g('decode_samples')}" if g("decode_samples") else "",
                     num("single-stream", "single_stream_tok_s", " tok/s"), num("peak", "peak_gen_tok_s", " tok/s")]),
        f"  errors {g('n_errors') or 0} (fatal {g('n_fatal') or 0}) | parse coverage "
        f"{fmt_num((g('parse_coverage') or 0) * 100)}% of {g('n_lines') or 0} lines"
        + (f" | cause: {g('end_reason')} (line {g('end_line')})" if end in ('crashed', 'startup_failed', 'killed') else ""),
    ]
    return "\n".join(line for line in lines if line.strip())


def sparkline(values: list[float], width: int = 60, resolution: float = 0.0) -> str:
    """Bars of ``values`` scaled from their lowest to their highest. A spread no larger than
    ``resolution`` (what the printed range can show) is drawn flat: low bars when the values
    are about zero, middle ones otherwise — never full-height bars for 0.00 to 0.004."""
    vals = [v for v in values if v is not None and math.isfinite(v)]  # a log may print inf
    if not vals:
        return ""
    if len(vals) > width:  # bucket by max so peaks stay visible
        step = len(vals) / width
        vals = [max(vals[int(i * step):max(int((i + 1) * step), int(i * step) + 1)]) for i in range(width)]
    lo, hi = min(vals), max(vals)
    ticks = "▁▂▃▄▅▆▇█"
    if hi - lo <= resolution:
        return (ticks[0] if max(abs(lo), abs(hi)) <= resolution else ticks[3]) * len(vals)
    return "".join(ticks[int((v - lo) / (hi - lo) * (len(ticks) - 1))] for v in vals)


# --------------------------------------------------------------------------- command renderers

@contextmanager
def ingest_progress(enabled: bool):
    """A ``progress(path, done, total)`` callback drawing one transient bar per file on
    stderr, or None when ``enabled`` is false (not a terminal, or --quiet)."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    bar = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                   TimeRemainingColumn(), transient=True, console=console(stderr=True))
    tasks: dict[str, Any] = {}

    def progress(path: str, done: int, total: int) -> None:
        if path not in tasks:
            tasks[path] = bar.add_task(markup_safe(os.path.basename(path)[:40]), total=None)
        bar.update(tasks[path], completed=done, total=total)

    with bar:
        yield progress


#: ``ingest`` prints a line per file up to this many files and a summary block per run up to
#: this many runs; above, totals (thousands of small files would print tens of thousands of lines)
INGEST_DETAIL = 20


def write_ingest(results: list, details: list[dict], fmt: str, out=None) -> None:
    """What ``ingest`` prints: one line per file, then a summary block per new run (totals
    instead above ``INGEST_DETAIL`` files or runs; JSON always holds everything)."""
    out = out or sys.stdout
    if fmt in ("json", "jsonl"):
        rows = [{k: _plain(v) for k, v in d.items()} for d in details]
        doc = [{"path": r.path, "status": r.status, "source_id": r.source_id, "kind": r.kind,
                "engine": r.engine, "lines": r.n_lines, "notes": r.notes,
                "runs": [x for x in rows if x["source_id"] == r.source_id]} for r in results]
        out.write(plain_json(doc, indent=2) + "\n") if fmt == "json" else write_jsonl(doc, out)
        return
    c = console(out)
    if len(results) > INGEST_DETAIL:
        for line in _ingest_totals(results):
            c.print(line)
    else:
        for res in results:
            c.print(_ingest_line(res))
    if len(details) > INGEST_DETAIL:
        for line in _run_totals(details):
            c.print(line)
        return
    for row in details:
        c.print(run_summary_panel(row))


def _ingest_line(res) -> str:
    """One file's line of ``ingest``: what happened to it, saying only what is known."""
    path = f"[bold]{markup_safe(res.path)}[/]"
    if res.status == "skipped":  # the why and the way out are one note on stderr
        return f"{path}: skipped (source {res.source_id}, unchanged)"
    what = markup_safe(f"{res.kind} ({res.engine})" if res.engine and res.engine != res.kind else str(res.kind or ""))
    runs = len(res.run_ids)
    return (f"{path}: {res.status}" + (f", {what}" if what else "") + f", {res.n_lines:,} line"
            f"{'' if res.n_lines == 1 else 's'}, {runs} run{'' if runs == 1 else 's'}")


def _counts(values) -> str:
    """``a 3, b 2`` (most frequent first; values from logs shown inert)."""
    from collections import Counter

    return ", ".join(f"{markup_safe(str(k))} {n}" for k, n in Counter(values).most_common())


def _ingest_totals(results: list) -> list[str]:
    """Many files: counts by status and by kind, and the files that carry notes (at most
    ``INGEST_DETAIL`` of them)."""
    lines = [f"[bold]{len(results)} files[/]: {_counts(r.status for r in results)}",
             f"  kinds: {_counts(f'{r.kind} ({r.engine})' for r in results if r.status != 'skipped') or '-'}",
             f"  {sum(r.n_lines for r in results):,} lines, {sum(len(r.run_ids) for r in results):,} run(s)"]
    noted = [r for r in results if r.notes and r.status != "skipped"]
    for r in noted[:INGEST_DETAIL]:
        lines.append(f"  {markup_safe(r.path)}: {markup_safe('; '.join(r.notes))}")
    if len(noted) > INGEST_DETAIL:
        lines.append(f"  ... and {len(noted) - INGEST_DETAIL} more file(s) with notes")
    return lines


def _run_totals(details: list[dict]) -> list[str]:
    """Many runs: their ids, engines, end states and models, counted (``logsleuth runs`` or
    ``--format json`` list them one by one)."""
    ids = [d["run_id"] for d in details]
    return [f"[bold]{len(details)} runs[/] (ids {min(ids)}-{max(ids)}): engines {_counts(d.get('engine') or '-' for d in details)}",
            f"  end states: {_counts(d.get('end_state') or '-' for d in details)}",
            f"  models: {_counts(d.get('model') or '-' for d in details)}",
            "  one line per run: logsleuth runs; everything: ingest --format json"]


def write_runs(views: list, fmt: str, out=None) -> None:
    """What ``show`` prints for each run (``api.RunView``)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(plain_json([_jsonable(v.as_dict()) for v in views], indent=2) + "\n")
        return
    if fmt == "jsonl":
        write_jsonl((_jsonable(v.as_dict()) for v in views), out)
        return
    from ..analysis.compare_format import timeline_text

    c = console(out)
    for i, v in enumerate(views):
        if i:
            c.print("")
        c.print(run_summary_panel(v.summary))
        gen = [x for x in v.throughput if x is not None and math.isfinite(x)]
        if gen:
            c.print(f"  gen tok/s over time  {sparkline(gen)}  (max {max(gen):,.1f})")
        for line in timeline_text(v.phases):
            c.print("  " + inert(line), markup=False, highlight=False)
        c.print(rich_table(v.milestones, "milestones", crop=crops(out)) if v.milestones.height else "milestones: none logged")
        what = "every setting" if v.all_settings else "settings that differ from the engine's defaults; --all for every one"
        c.print(rich_table(v.config, f"configuration ({what})", crop=crops(out)) if v.config.height else
                f"configuration: {'no setting printed' if v.all_settings else 'every printed setting is a default'}")


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return _plain(obj)


_SEV_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def findings_frame(findings: list):
    """The compact findings table: run, severity, rule, title (one row per finding)."""
    import polars as pl

    return pl.DataFrame({"run": [f.run_id for f in findings], "severity": [f.severity for f in findings],
                         "rule": [f.rule_id for f in findings], "title": [f.title for f in findings]},
                        schema={"run": pl.Int64, "severity": pl.Utf8, "rule": pl.Utf8, "title": pl.Utf8})


def _findings_table(findings: list, crop: bool = False):
    """``findings_frame`` as a rich table, built without polars: a diagnose that prints a
    table never imports it (~0.3 s of the command). ``crop``: titles end in ``…`` (each is
    printed whole below)."""
    from rich.table import Table

    t = Table(title=f"{len(findings)} finding(s)", show_lines=False, header_style="bold")
    for name in ("run", "severity", "rule", "title"):
        t.add_column(name, overflow="ellipsis" if crop else "fold")
    for f in findings:  # log text: never markup
        t.add_row(*[_cell(v, crop) for v in (f.run_id, f.severity, f.rule_id, f.title)])
    return t


def write_findings(result, fmt: str, quiet: bool = False, out=None) -> None:
    """What ``diagnose`` prints for an ``api.Diagnosis``: JSON, or the compact table first
    and then (unless ``quiet``) each finding with its evidence, fix and known-issue citations,
    grouped by run."""
    from .citations import citation_text
    out = out or sys.stdout
    findings = result.findings
    if fmt == "json":
        out.write(plain_json([f.as_dict() for f in findings], indent=2) + "\n")
        return
    if fmt == "jsonl":
        write_jsonl((f.as_dict() for f in findings), out)
        return
    if fmt == "csv":  # the compact table's columns, one row per finding
        write_frame(findings_frame(findings), "csv", out)
        return
    if fmt == "markdown":
        _findings_markdown(result, quiet, out)
        return
    c = console(out)
    if not findings:
        if not quiet:
            ids = result.run_ids
            c.print("No findings." + ("" if ids is None else f" (runs {', '.join(map(str, ids)) or 'none'})"))
        return
    c.print(_findings_table(findings, crop=crops(out)))
    if quiet:
        return
    # the rest is one markup text printed once: rich's fixed cost per print() (~0.5 ms:
    # options, render pipeline, buffer) was half of this function for a few dozen findings;
    # rich wraps and styles each of its lines exactly as it did separate prints
    lines = [""]
    by_run: dict = {}
    for f in findings:
        by_run.setdefault(f.run_id, []).append(f)
    for rid, items in by_run.items():
        h = result.runs.get(rid) or {}
        lines.append(f"[bold]run {rid}[/] {markup_safe(h.get('source') or '?')} — {markup_safe(h.get('engine') or '?')}, "
                     f"{markup_safe(h.get('model') or '-')}, ended {markup_safe(h.get('end_state') or '-')}")
        for f in items:
            style = _SEV_STYLE.get(f.severity, "")
            lines.append(f"  [{style}]{f.severity.upper():8}[/] {markup_safe(f.title)} [dim]({f.rule_id})[/]")
            if f.evidence:
                lines.append(f"           [dim]{markup_safe(f'{f.source}:{f.line_no}')}[/] {markup_safe(f.evidence[:240])}")
            for e in f.evidence_lines[:3]:
                where = f"{f.source}:{e['line_no']}"
                lines.append(f"           [dim]{markup_safe(where)}[/] {markup_safe((e.get('text') or '')[:240])}")
            lines.append(f"           fix: {markup_safe(f.fix)}")
            lines += [f"           {markup_safe(citation_text(c))}" for c in getattr(f, "citations", [])]
        lines.append("")
    n = result.counts()
    lines.append(f"{len(findings)} finding(s): {n['critical']} critical, {n['warning']} warning, {n['info']} info")
    c.print("\n".join(lines))


def _findings_markdown(result, quiet: bool, out) -> None:
    from .citations import citation_text

    findings = result.findings
    lines = ["# logsleuth findings", ""]
    if not findings:
        lines.append("No findings.")
        out.write("\n".join(lines) + "\n")
        return
    lines.append(markdown_table(findings_frame(findings)))
    if not quiet:
        by_run: dict = {}
        for f in findings:
            by_run.setdefault(f.run_id, []).append(f)
        for rid, items in by_run.items():
            h = result.runs.get(rid) or {}
            lines.append(inert(f"## Run {rid}: {h.get('source') or '?'} ({h.get('engine') or '?'}, "
                               f"{h.get('model') or '-'}, {h.get('end_state') or '-'})"))
            lines.append("")
            for f in items:
                lines.append(inert(f"- **{f.severity.upper()}** `{f.rule_id}`: {f.title}"))
                if f.evidence:
                    lines.append(inert(f"  - evidence `{f.source}:{f.line_no}`: `{f.evidence[:300]}`"))
                lines.append(inert(f"  - fix: {f.fix}"))
                lines += [inert(f"  - {citation_text(c)}") for c in getattr(f, "citations", [])]
            lines.append("")
    out.write("\n".join(lines).rstrip("\n") + "\n")


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return stream is None or (isatty is not None and isatty())


def sql_text(statement: str | None, file: str | None) -> str:
    """The SQL of ``logsleuth sql``: the argument, stdin for ``-`` (or with no argument when
    stdin is a pipe or file, not a terminal), or ``--file``."""
    from ..db.sandbox import SQL_EXAMPLE
    from ..errors import BadInputError, UsageError

    if statement is not None and file is not None:
        raise UsageError("give the SQL as an argument or with --file, not both")
    piped = statement is None and file is None and not _is_terminal(sys.stdin)
    if statement is None and file is None and not piped:
        raise UsageError("no SQL given", hint=f"{SQL_EXAMPLE}, or pipe it in")
    if piped or statement == "-" or file == "-":  # as sqlite3 and duckdb read a script from a pipe
        return sys.stdin.read()
    if file is not None:
        try:
            with open(file, encoding="utf-8") as fh:
                return fh.read()
        except OSError as exc:
            raise BadInputError(f"{file}: cannot read the SQL file ({exc.strerror or exc})") from None
        except UnicodeDecodeError:
            raise BadInputError(f"{file}: not a UTF-8 text file") from None
    return statement


def write_statements(results: list, fmt: str, out=None) -> None:
    """What ``sql`` prints. One statement: its result. Several: table and markdown show
    every result that has rows, each under the statement that made it; csv and json hold
    one result, so more than one result with rows is refused before anything is printed."""
    from ..errors import UsageError

    out = out or sys.stdout
    shown = [r for r in results if r.returns_rows]
    if len(results) == 1:
        write_frame(results[0].table, fmt, out)
        return
    if fmt in ("csv", "json", "jsonl") and len(shown) > 1:
        raise UsageError(f"{len(shown)} statements return rows; --format {fmt} holds one result",
                         hint="use --format table or markdown, or run the statements one by one")
    if fmt in ("csv", "json", "jsonl"):
        if shown:
            write_frame(shown[0].table, fmt, out)
        return
    for i, r in enumerate(shown):
        title = f"[{r.number}] {r.statement if len(r.statement) <= 80 else r.statement[:79] + '…'}"
        if fmt == "markdown":
            out.write(("\n" if i else "") + f"**{inert(title)}**\n\n")
            out.write(markdown_table(r.table))
        else:
            write_frame(r.table, fmt, out, title=inert(title))


def write_comparison(result, fmt: str, out=None) -> None:
    """What ``compare`` prints: the text formats of ``analysis.compare_format``, the table
    through this module's console (width rules above)."""
    from ..analysis import compare_format as cf

    out = out or sys.stdout
    if fmt == "json":
        out.write(cf.compare_json(result))
    elif fmt == "jsonl":  # one object per run: its metrics and configuration
        write_jsonl(result.as_dict()["runs"], out)
    elif fmt == "markdown":
        out.write(cf.compare_markdown(result))
    elif fmt == "csv":
        out.write(cf.compare_csv(result))
    else:
        console(out).print(_comparison_tables(result))


def _comparison_tables(result):
    """The compare table (best value of a row in green) and the configuration differences,
    cell texts as in every other format (``analysis.compare_format``)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..analysis.compare_format import best_index, config_cell, fmt_value, row_title

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
