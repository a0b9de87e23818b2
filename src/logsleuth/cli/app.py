"""Command-line interface: parse arguments, call the library, render.

Contract: every command opens the database, makes library calls and renders; results go
to stdout, progress and errors to stderr. A ``LogsleuthError`` becomes one line
``Error: ...`` and its exit code (README "Exit codes"); without ``--debug`` no traceback
reaches the user. Heavy modules (polars, duckdb) are imported inside commands so that
``logsleuth --help`` stays fast.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from ..errors import ExitCode, LogsleuthError, UsageError

app = typer.Typer(
    name="logsleuth", no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False, pretty_exceptions_show_locals=False,
    # plain click help: typer's rich help imports and renders with rich (~0.3 s of a 0.5 s --help)
    rich_markup_mode=None,
    help="Forensics for SGLang and vLLM inference-server logs: ingest into DuckDB, diagnose, compare.",
)
formats_app = typer.Typer(help="Inspect and check the log grammars (parsers/*.toml).", no_args_is_help=True,
                          rich_markup_mode=None)
app.add_typer(formats_app, name="formats")


class _State:
    db: str | None = None
    debug: bool = False


state = _State()


def _err(msg: str) -> None:
    sys.stderr.write(f"Error: {msg}\n")


def _note(msg: str) -> None:
    sys.stderr.write(f"{msg}\n")


def _db(read_only: bool = False, create: bool = True):
    from ..db.connection import open_db

    name = state.db or "the database"
    return open_db(state.db, read_only=read_only, create=create,
                   on_wait=lambda s: _note(f"{name}: locked by another process (an ingest?); "
                                           f"waiting up to {s:g} s (LOGSLEUTH_LOCK_TIMEOUT) ..."),
                   on_progress=lambda w: _note(f"{name}: still locked, waited {w:.0f} s ..."))


@app.callback()
def main_options(
    db: Optional[str] = typer.Option(None, "--db", envvar="LOGSLEUTH_DB",
                                     help="DuckDB database file (default ./logsleuth.duckdb)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
):
    state.db = db
    state.debug = debug


def _checked_files(paths: List[str]) -> list[str]:
    """The files ``paths`` name (globs and directories expanded), each checked before the
    database is opened (or created): nothing is written when one of several files is
    missing, empty or binary."""
    from ..api import expand_paths
    from ..ingest.read import check_input

    files = expand_paths(paths)
    for p in files:
        if p != "-":
            check_input(p)
    return files


def _ingest_paths(con, files: List[str], label, replace, gpu, year, keep_prompts, quiet=False) -> list:
    """Ingest ``files`` (from ``_checked_files``) one by one, with a progress bar on a TTY."""
    from ..ingest.pipeline import IngestOptions, ingest_source

    results = []
    show_bar = sys.stderr.isatty() and not quiet
    for p in files:
        progress = None
        bar = None
        if show_bar:
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

            bar = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                           TimeRemainingColumn(), transient=True)
            task = bar.add_task(os.path.basename(p)[:40], total=None)
            bar.start()

            def progress(done, total, _bar=bar, _task=task):
                _bar.update(_task, completed=done, total=total)
        opts = IngestOptions(label=label, replace=replace, gpu=gpu, year=year, keep_prompts=keep_prompts,
                             progress=progress)
        try:
            res = ingest_source(con, p, opts)
        finally:
            if bar:
                bar.stop()
        for n in res.notes:
            _note(f"{p}: {n}")
        if res.status == "skipped" and not quiet:
            _note(f"{p}: already ingested (source {res.source_id}), skipped; --replace re-ingests")
        results.append(res)
    return results


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="Files, globs, directories, .gz, or - for stdin."),
    label: Optional[str] = typer.Option(None, "--label", help="Label for the runs of these files."),
    replace: bool = typer.Option(False, "--replace", help="Re-ingest files already in the database."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help='GPU of these runs, e.g. "RTX PRO 6000" or "8xH100".'),
    year: Optional[int] = typer.Option(None, "--year", help="Year for vLLM timestamps (they print none)."),
    keep_prompts: bool = typer.Option(False, "--keep-prompts", help="Store request prompts unredacted."),
    fmt: str = typer.Option("table", "--format", help="table | json"),
):
    """Ingest logs: detect engine and era, split into runs, parse every line, print a summary."""
    from ..api import query
    from .inert import markup_safe, plain_json
    from .output import console, frame_rows, run_summary_panel

    files = _checked_files(paths)
    con = _db()
    try:
        results = _ingest_paths(con, files, label, replace, gpu, year, keep_prompts)
        run_ids = [r for res in results for r in res.run_ids]
        if fmt == "json":
            import json

            rows = frame_rows(query(con, "SELECT * FROM run_summary WHERE list_contains(?, run_id) ORDER BY run_id",
                                    [run_ids])) if run_ids else []
            out = [{"path": r.path, "status": r.status, "source_id": r.source_id, "kind": r.kind,
                    "engine": r.engine, "lines": r.n_lines, "notes": r.notes,
                    "runs": [x for x in rows if x["source_id"] == r.source_id]} for r in results]
            sys.stdout.write(plain_json(out, indent=2) + "\n")
            return
        c = console()
        for res in results:
            c.print(f"[bold]{markup_safe(res.path)}[/]: {res.status}, {res.kind} ({res.engine}), {res.n_lines} lines, "
                    f"{len(res.run_ids)} run(s)")
        if run_ids:
            frame = query(con, """SELECT s.*, r.first_line, r.last_line, r.attention_backend_how,
                                         r.gpu_source, r.end_reason, r.end_line
                                  FROM run_summary s JOIN runs r USING (run_id)
                                  WHERE list_contains(?, run_id) ORDER BY run_id""", [run_ids])
            for row in frame_rows(frame):
                c.print(run_summary_panel(row))
    finally:
        con.close()


@app.command()
def runs(fmt: str = typer.Option("table", "--format", help="table | csv | json | markdown")):
    """List the runs (server launches) in the database."""
    from ..api import query
    from .output import write_frame

    con = _db(read_only=True)
    try:
        frame = query(con, """SELECT r.run_id, s.name AS source, r.label, r.engine,
                                     coalesce(r.engine_version, r.format_era) AS version, r.model, r.tp_size AS tp,
                                     r.attention_backend AS attention, r.spec_method AS spec,
                                     r.gpu_name AS gpu, r.gpu_source, r.end_state
                              FROM runs r JOIN sources s USING (source_id) ORDER BY r.run_id""")
        write_frame(frame, fmt, title="runs")
    finally:
        con.close()


@app.command()
def show(run: int = typer.Argument(..., help="Run id (see `logsleuth runs`).")):
    """Show one run: summary, startup milestones, configuration, throughput."""
    from ..api import query
    from .output import console, frame_rows, run_summary_panel, rich_table, sparkline

    con = _db(read_only=True)
    try:
        frame = query(con, """SELECT s.*, r.first_line, r.last_line, r.attention_backend_how,
                                     r.gpu_source, r.end_reason, r.end_line
                              FROM run_summary s JOIN runs r USING (run_id) WHERE run_id = ?""", [run])
        if frame.height == 0:
            raise UsageError(f"no run {run}; see `logsleuth runs`")
        c = console()
        c.print(run_summary_panel(frame_rows(frame)[0]))
        gen = query(con, """SELECT gen_tok_s FROM decode_stats WHERE run_id = ? AND primary_rank
                            ORDER BY line_no""", [run])["gen_tok_s"].to_list()
        if gen:
            c.print(f"  gen tok/s over time  {sparkline(gen)}  (max {max((v for v in gen if v is not None), default=0):,.1f})")
        from ..analysis.compare import startup_phases
        from ..analysis.compare_format import timeline_text
        from .inert import inert

        for line in timeline_text(startup_phases(con, [run]).get(run) or {}):
            c.print("  " + inert(line), markup=False, highlight=False)
        miles = query(con, """SELECT line_no, ts, kind, value, text FROM events WHERE run_id = ? AND kind IN
            ('weights_begin','weights_loaded','kv_cache_allocated','kv_cache_tokens','cuda_graph_begin',
             'cuda_graph_end','torch_compile','init_engine','server_ready','app_startup_complete','shutdown',
             'attention_backend','attention_backend_default','spec_max_running_reset')
            AND coalesce(tp_rank, 0) = 0 ORDER BY line_no LIMIT 40""", [run])
        c.print(rich_table(miles, "milestones"))
        cfg = query(con, """SELECT key, value, origin FROM config WHERE run_id = ? AND value IS NOT NULL
                            AND value NOT IN ('None', 'False', '[]', '{}', '') ORDER BY line_no, key LIMIT 400""", [run])
        c.print(rich_table(cfg, "configuration (set values)"))
    finally:
        con.close()


_SEV_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


@app.command()
def diagnose(
    paths: List[str] = typer.Argument(None, help="Logs to ingest first (optional); findings then cover their runs."),
    run: List[int] = typer.Option(None, "--run", help="Only these run ids (repeatable)."),
    rule: List[str] = typer.Option(None, "--rule", help="Only these rule ids (repeatable)."),
    min_severity: str = typer.Option("info", "--min-severity", help="critical | warning | info"),
    fmt: str = typer.Option("table", "--format", help="table | json | markdown"),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", help="Exit 1 if a finding is at or above this severity."),
    rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files (repeatable)."),
    set_: List[str] = typer.Option(None, "--set", help="Override a rule parameter: RULE.PARAM=VALUE."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU of the runs being ingested."),
    label: Optional[str] = typer.Option(None, "--label", help="Label for the runs being ingested."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also say which rules stayed silent and why."),
):
    """Run the rules over the database (after ingesting PATHs) and print findings with evidence and fixes."""
    from ..analysis.rules import SEV_RANK, diagnose as run_rules

    if fail_on and fail_on not in SEV_RANK:
        raise UsageError(f"--fail-on {fail_on}: one of critical, warning, info")
    files = _checked_files(paths) if paths else []
    con = _db(read_only=not paths)
    try:
        run_ids = list(run) if run else None
        if paths:
            results = _ingest_paths(con, files, label, False, gpu, None, False, quiet=True)
            ids = [r for res in results for r in res.run_ids]
            for res in results:  # already-ingested files: use their runs
                if res.status == "skipped":
                    ids += [x[0] for x in con.execute("SELECT run_id FROM runs WHERE source_id = ?",
                                                      [res.source_id]).fetchall()]
            run_ids = sorted(set(ids) & set(run_ids)) if run_ids else sorted(set(ids))
            con.close()  # the ingest has committed: the rules read through a read-only connection
            con = _db(read_only=True)
        from ..db.sandbox import sandbox

        sandbox(con)  # rule files (--rules-dir too) cannot touch files or extensions
        silent: list = []
        findings = run_rules(con, run_ids=run_ids, rule_ids=list(rule) if rule else None,
                             min_severity=min_severity, extra_dirs=list(rules_dir) if rules_dir else None,
                             sets=list(set_) if set_ else None, silent=silent)
        runs_info = {r[0]: r[1:] for r in con.execute(
            "SELECT r.run_id, s.name, r.engine, r.model, r.end_state FROM runs r JOIN sources s USING (source_id)"
        ).fetchall()}
        _render_findings(findings, fmt, runs_info, run_ids)
        if verbose:
            for rid, why in silent:
                _note(f"silent: {rid}: {why}")
        if fail_on and any(SEV_RANK[f.severity] <= SEV_RANK[fail_on] for f in findings):
            raise typer.Exit(int(ExitCode.FINDINGS))
    finally:
        con.close()


def _render_findings(findings, fmt, runs_info, run_ids) -> None:
    from .inert import inert, plain_json

    if fmt == "json":
        sys.stdout.write(plain_json([f.as_dict() for f in findings], indent=2) + "\n")
        return
    by_run: dict = {}
    for f in findings:
        by_run.setdefault(f.run_id, []).append(f)
    if fmt == "markdown":
        out = ["# logsleuth findings", ""]
        for rid, items in by_run.items():
            name, engine, model, end = runs_info.get(rid, ("?", "?", "?", "?"))
            out.append(inert(f"## Run {rid}: {name} ({engine}, {model or '-'}, {end or '-'})"))
            out.append("")
            for f in items:
                out.append(inert(f"- **{f.severity.upper()}** `{f.rule_id}`: {f.title}"))
                if f.evidence:
                    out.append(inert(f"  - evidence `{f.source}:{f.line_no}`: `{f.evidence[:300]}`"))
                out.append(f"  - fix: {f.fix}")
            out.append("")
        if not findings:
            out.append("No findings.")
        sys.stdout.write("\n".join(out) + "\n")
        return
    from .inert import markup_safe as escape  # log text: control characters visible, markup escaped
    from .output import console

    c = console()
    if not findings:
        c.print("No findings." + ("" if run_ids is None else f" (runs {', '.join(map(str, run_ids)) or 'none'})"))
        return
    for rid, items in by_run.items():
        name, engine, model, end = runs_info.get(rid, ("?", "?", "?", "?"))
        c.print(f"[bold]run {rid}[/] {escape(str(name))} — {engine}, {escape(str(model or '-'))}, ended {end or '-'}")
        for f in items:
            style = _SEV_STYLE.get(f.severity, "")
            c.print(f"  [{style}]{f.severity.upper():8}[/] {escape(f.title)} [dim]({f.rule_id})[/]")
            if f.evidence:
                c.print(f"           [dim]{escape(f'{f.source}:{f.line_no}')}[/] {escape(f.evidence[:240])}")
            for e in f.evidence_lines[:3]:
                where = f"{f.source}:{e['line_no']}"
                c.print(f"           [dim]{escape(where)}[/] {escape((e.get('text') or '')[:240])}")
            c.print(f"           fix: {escape(f.fix)}")
        c.print("")
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("critical", "warning", "info")}
    c.print(f"{len(findings)} finding(s): {counts['critical']} critical, {counts['warning']} warning, "
            f"{counts['info']} info")


@app.command("rules")
def rules_cmd(
    rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files."),
    fmt: str = typer.Option("table", "--format", help="table | json | markdown | csv"),
):
    """List the diagnose rules: id, severity, title, parameters, threshold source."""
    import polars as pl

    from .output import write_frame
    from ..analysis.rules import load_rules

    rules = load_rules(list(rules_dir) if rules_dir else None)
    frame = pl.DataFrame({
        "id": [r.id for r in rules], "severity": [r.severity for r in rules],
        "title": [r.title for r in rules],
        "params": [", ".join(f"{k}={v}" for k, v in r.params.items()) for r in rules],
        "source": [r.source for r in rules],
    })
    write_frame(frame, fmt, title=f"{len(rules)} rules")


@app.command()
def sql(
    statement: str = typer.Argument(..., help="SQL to run against the database."),
    fmt: str = typer.Option("table", "--format", help="table | csv | json | markdown"),
    write: bool = typer.Option(False, "--write", help="Open the database writable."),
    allow_files: bool = typer.Option(False, "--allow-files",
                                     help="Let the SQL read and write files (read_csv, COPY, ATTACH...)."),
):
    """Run ad-hoc SQL on the database: read-only and without file access unless --write / --allow-files."""
    from ..db.sandbox import sandbox, user_query
    from .output import write_frame

    con = _db(read_only=not write)
    try:
        sandbox(con, allow_files=allow_files)
        write_frame(user_query(con, statement), fmt)
    finally:
        con.close()


@app.command()
def unparsed(limit: int = typer.Option(20, "--limit", help="How many templates."),
             fmt: str = typer.Option("table", "--format", help="table | csv | json | markdown")):
    """Top templates of lines no grammar pattern claimed."""
    from ..api import query
    from .output import write_frame

    con = _db(read_only=True)
    try:
        frame = query(con, """SELECT t.template, sum(t.n_lines) AS n_lines, count(DISTINCT t.source_id) AS sources,
                                     min(s.name || ':' || t.example_line_no) AS example
                              FROM templates t JOIN sources s USING (source_id)
                              GROUP BY t.template ORDER BY n_lines DESC LIMIT ?""", [limit])
        write_frame(frame, fmt, title="unparsed line templates")
    finally:
        con.close()


@app.command("compare")
def compare_cmd(
    runs: List[str] = typer.Argument(None, help="Runs: ids, source file names or --label values (default: all)."),
    fmt: str = typer.Option("table", "--format", help="table | json | markdown | csv"),
    no_findings: bool = typer.Option(False, "--no-findings", help="Do not run the diagnose rules."),
):
    """Compare runs side by side: engine, kernels, startup, throughput per concurrency band, benchmarks,
    findings, and the configuration keys that differ (SGLang and vLLM names mapped onto one)."""
    from ..analysis.compare import compare as compare_runs
    from ..analysis.compare_format import FORMATS, write_compare

    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: one of {', '.join(FORMATS)}")
    con = _db(read_only=True)
    try:
        result = compare_runs(con, list(runs) if runs else None, findings=not no_findings)
    finally:
        con.close()
    write_compare(result, fmt)


@app.command("report")
def report_cmd(
    runs: List[str] = typer.Argument(None, help="Runs: ids, source file names or --label values (default: all)."),
    output: str = typer.Option("report.html", "--output", "-o", help="HTML file to write (- for stdout)."),
    title: Optional[str] = typer.Option(None, "--title", help="Page title."),
    no_findings: bool = typer.Option(False, "--no-findings", help="Do not run the diagnose rules."),
):
    """Write one self-contained HTML report (inline SVG charts, findings, compare table; opens offline)."""
    from ..report.html import build_report

    con = _db(read_only=True)
    try:
        page = build_report(con, list(runs) if runs else None, title=title, findings=not no_findings)
    finally:
        con.close()
    if output == "-":
        sys.stdout.write(page)
        return
    from pathlib import Path

    try:
        Path(output).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{output}: cannot write the report ({exc.strerror})") from None
    _note(f"wrote {output} ({len(page.encode('utf-8')) / 1024:,.0f} KiB)")


@formats_app.command("check")
def formats_check(files: List[str] = typer.Argument(None, help="Grammar files (default: all in parsers/).")):
    """Validate grammars: regexes compile, fields map to captures, samples are claimed."""
    from pathlib import Path

    from ..formats.grammar import grammar_files, load_grammars

    paths = [Path(f) for f in files] if files else grammar_files()
    for p in paths:
        if not p.exists():
            raise UsageError(f"{p}: no such grammar file")
    if files:  # a user grammar is checked together with the shipped ones it extends
        shipped = [p for p in grammar_files() if p.name not in {x.name for x in paths}]
        grammars = load_grammars(shipped + paths)
    else:
        grammars = load_grammars(paths)
    n = sum(len(g.patterns) for g in grammars)
    s = sum(len(p.samples) for g in grammars for p in g.patterns)
    sys.stdout.write(f"ok: {len(grammars)} grammars, {n} patterns, {s} sample lines claimed by their own pattern\n")


@formats_app.command("list")
def formats_list():
    """List grammar patterns: grammar, name, target table, literal."""
    from ..formats.grammar import load_grammars

    for g in load_grammars(check_samples=False):
        for p in g.patterns:
            sys.stdout.write(f"{g.name}\t{p.name}\t{p.table}\t{p.kind}\n")


def _is_click(exc: BaseException, name: str) -> bool:
    """click exceptions by class name: typer may vendor its own copy of click."""
    return any(c.__name__ == name for c in type(exc).__mro__)


def main() -> None:
    """Console-script entry point: run the app, map errors to exit codes."""
    try:
        rc = app(standalone_mode=False)  # typer.Exit(n) comes back as a return value here
    except LogsleuthError as exc:
        if state.debug:
            import traceback

            traceback.print_exc()
        _err(str(exc))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        _err("interrupted; any ingest in progress was rolled back")
        sys.exit(int(ExitCode.INTERRUPTED))
    except SystemExit:
        raise
    except BrokenPipeError:  # stdout closed early (`| head`): not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        sys.exit(int(ExitCode.OK))
    except Exception as exc:  # click usage errors, DuckDB interrupts and the unexpected
        if _is_click(exc, "Abort") or type(exc).__name__ == "InterruptException":
            _err("interrupted; any ingest in progress was rolled back")
            sys.exit(int(ExitCode.INTERRUPTED))
        if _is_click(exc, "ClickException"):
            exc.show()
            sys.exit(int(ExitCode.USAGE))
        if isinstance(exc, MemoryError):
            _err("out of memory (run with --debug for a traceback)")
            sys.exit(int(ExitCode.INTERNAL))
        if state.debug:
            raise
        _err(f"internal error: {type(exc).__name__}: {_one_line(exc)} (run with --debug for a traceback)")
        sys.exit(int(ExitCode.INTERNAL))
    if rc == int(ExitCode.INTERRUPTED):  # typer turns KeyboardInterrupt into Exit(130), silently
        _err("interrupted; any ingest in progress was rolled back")
    sys.exit(rc if isinstance(rc, int) and not isinstance(rc, bool) else int(ExitCode.OK))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


if __name__ == "__main__":
    main()
