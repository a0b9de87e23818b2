"""Command-line interface: parse arguments, make one library call, render.

Contract: every command parses its arguments, opens the database, calls ``logsleuth.api``
(the same functions ``import logsleuth`` gives) and renders with ``cli/output.py``;
``cli/`` holds no SQL. Results go to stdout, progress and notes to stderr. A
``LogsleuthError`` becomes one line ``Error: ...`` and its exit code (docs/commands.md "Exit
codes"); without ``--debug`` no traceback reaches the user. ``--db`` and ``--debug`` may
come before or after the subcommand (``cli/params.py``). Heavy modules (polars, duckdb,
rich) are imported inside commands so that ``logsleuth --help`` stays fast.

Commands defined in other modules register here with one line each (``scrape``,
``watch``): ``from .MODULE import register as _register_MODULE; _register_MODULE(app)``
at the end of the registrations below; they take the global options and the database
opener from ``cli/context.py``, never from this module.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from .. import __version__
from ..errors import ExitCode, LogsleuthError, UsageError
from .output import ColorMode, CompareFormat, FindingsFormat, FleetExecutor, Format, RecordFormat, Severity
from .context import debug_requested, error, note, open_database, state, with_database
from .params import LogsleuthGroup

_CONTEXT = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    cls=LogsleuthGroup, name="logsleuth", no_args_is_help=True, add_completion=True,
    pretty_exceptions_enable=False, pretty_exceptions_show_locals=False,  # locals hold log lines, secrets
    rich_markup_mode="rich", context_settings=_CONTEXT,
    help="Forensics for SGLang and vLLM inference-server logs: ingest into DuckDB, diagnose, compare.",
    epilog="--db, --dataset and --debug may also follow the subcommand. Exit codes: 0 ok, 1 findings (--fail-on), "
           "2 usage, 3 bad input, 4 query error, 70 internal, 130 interrupted.",
)
formats_app = typer.Typer(cls=LogsleuthGroup, help="Inspect and check the log grammars (parsers/*.toml).",
                          no_args_is_help=True, rich_markup_mode="rich", context_settings=_CONTEXT)
app.add_typer(formats_app, name="formats")

RUN_HELP = "Run: id, source file name or --label (repeatable; default: all runs)."


# the shared pieces live in context.py so that command modules never import this one
_db, _err, _note = open_database, error, note


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"logsleuth {__version__}\n")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", envvar="LOGSLEUTH_DB", metavar="PATH",
                                     help="DuckDB database file (default ./logsleuth.duckdb)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", envvar="LOGSLEUTH_DATASET", metavar="DIR",
                                          help="A Parquet fleet dataset instead of a database (docs/fleet.md)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    color: Optional[ColorMode] = typer.Option(None, "--color", help="Style the output: auto (on a terminal, "
                                              "unless NO_COLOR is set), always, never."),
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
):
    """Forensics for SGLang and vLLM inference-server logs: ingest into DuckDB, diagnose, compare."""
    if db and dataset:
        raise UsageError("--db and --dataset name the same thing: give one")
    ctx.obj = {"db": dataset or db, "dataset": bool(dataset), "debug": debug,  # read by context.state
               "color": color.value if color else None}  # read by color.mode


def _ingest(con, files: list[str], options, quiet: bool = False) -> list:
    """``api.ingest_files`` with a progress bar on a terminal and notes on stderr."""
    from .. import api
    from .output import ingest_progress

    def on_result(res):
        if res.status == "skipped":  # one note (res.notes says the same in other words)
            _note(f"{res.path}: already ingested (source {res.source_id}), skipped; --replace re-ingests")
            return
        for n in res.notes:
            _note(f"{res.path}: {n}")

    with ingest_progress(enabled=sys.stderr.isatty() and not quiet) as progress:
        return api.ingest_files(con, files, options, progress=progress, on_result=on_result)


GRAMMAR_DIR_HELP = ("Extra folder of grammar .toml files, loaded after the shipped ones and "
                    "$XDG_CONFIG_HOME/logsleuth/parsers (repeatable).")


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="Files, globs, directories, .gz, or - for stdin."),
    label: Optional[str] = typer.Option(None, "--label", help="Label for the runs of these files."),
    replace: bool = typer.Option(False, "--replace", help="Re-ingest files already in the database."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help='GPU of these runs, e.g. "RTX PRO 6000" or "8xH100".'),
    year: Optional[int] = typer.Option(None, "--year", help="Year for vLLM timestamps (they print none)."),
    keep_prompts: bool = typer.Option(False, "--keep-prompts", help="Store request prompts unredacted."),
    run: Optional[str] = typer.Option(None, "--run", "-r", metavar="RUN",
                                      help="Attach telemetry files (metrics, GPU samples, bench JSON) to this run: "
                                           "id, source file name or label."),
    fmt: RecordFormat = typer.Option(RecordFormat.table, "--format", help="Output format."),
    grammar_dir: List[str] = typer.Option(None, "--grammar-dir", help=GRAMMAR_DIR_HELP, metavar="DIR"),
    env: List[str] = typer.Option(None, "--env", metavar="FILE",
                                  help="Environment report (collect_env, nvidia-smi, topo) for the runs of these files; "
                                       "without it a report attaches to the logs of its folder (or the folder above an env/ folder)."),
    host: Optional[str] = typer.Option(None, "--host", help="With --dataset: the host of these files."),
    host_from: Optional[str] = typer.Option(None, "--host-from", metavar="PATTERN",
                                            help="With --dataset: the host from each path, e.g. '{host}/*.log'."),
    executor: FleetExecutor = typer.Option(FleetExecutor.local, "--executor",
                                           help="With --dataset: who parses the files (ray: a Ray cluster)."),
    address: Optional[str] = typer.Option(None, "--address", help="With --executor ray: auto or ray://HOST:10001."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1,
                                       help="Processes that parse (default: the cores this process may use); "
                                            "with --dataset: files parsed in parallel. The result is the same for any value."),
    split_bytes: Optional[str] = typer.Option(None, "--split-bytes", metavar="SIZE",
                                              help="With --dataset: a file larger than this (e.g. 256MiB, the default; "
                                                   "0: never) is parsed as byte ranges cut at server launches."),
):
    """Ingest logs: detect engine and era, split into runs, parse every line, print a summary."""
    from .. import api
    from .output import write_ingest

    if state.dataset or (state.db is not None and api.is_dataset(state.db)):
        return _ingest_dataset(paths, host=host, host_from=host_from, executor=executor.value, address=address,
                               jobs=jobs, replace=replace, label=label, gpu=gpu, year=year, keep_prompts=keep_prompts,
                               **({} if split_bytes is None else {"split_bytes": split_bytes}))

    from ..ingest.normalize import check_year

    check_year(year)  # a --year out of range is refused before anything is opened
    env_files = api.checked_files(env or [], _note)  # reports first: the runs that follow attach to them
    files = env_files + [f for f in api.checked_files(paths, _note) if f not in env_files]  # before the database is opened
    con = _db()
    try:
        results = _ingest(con, files, api.IngestOptions(label=label, replace=replace, gpu=gpu, year=year,
                                                        keep_prompts=keep_prompts,
                                                        run=None if run is None else api.resolve_run(con, run),
                                                        grammar_dirs=tuple(grammar_dir or ()),
                                                        env_files=tuple(env_files), jobs=jobs or 0))
        details = api.run_details(con, [r for res in results for r in res.run_ids])
    finally:
        con.close()
    write_ingest(results, details, fmt.value)


def _ingest_dataset(paths: list[str], **options) -> None:
    """``ingest --dataset DIR``: one library call, a line per file on stderr, the summary on stdout."""
    from .. import api
    from ..ingest.normalize import check_year

    check_year(options.get("year"))
    files = api.checked_files(paths, _note)

    def on_done(job, outcome) -> None:
        failed = getattr(outcome, "message", None)
        note = f" ({outcome.note})" if getattr(outcome, "note", "") else ""
        _note(f"{job.path}: {'failed: ' + failed if failed else 'stored as host ' + outcome.entry.host + note}")

    res = api.ingest_dataset(state.db, files, on_done=on_done, **options)
    for path in res.skipped:
        _note(f"{path}: already in the dataset, skipped; --replace re-ingests")
    sys.stdout.write(f"{state.db}: generation {res.generation}; {len(res.ingested)} new, {len(res.replaced)} replaced, "
                     f"{len(res.skipped)} skipped, {len(res.failed)} failed\n")
    if res.failed:
        raise api.BadInputError(f"{len(res.failed)} file(s) failed, the others were stored: "
                                + "; ".join(f.message for f in res.failed[:3]))


@app.command()
def runs(
    run: List[str] = typer.Option(None, "--run", "-r", help=RUN_HELP, metavar="RUN"),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
):
    """List the runs (server launches) in the database."""
    from .. import api
    from .output import write_frame

    frame = with_database(api.runs, run or None, needs_runs=True, frame=False)
    write_frame(frame, fmt.value, title="runs")


@app.command()
def show(
    runs: List[str] = typer.Argument(None, help="Runs: ids, source file names or labels (default: all).", show_default=False),
    run: List[str] = typer.Option(None, "--run", "-r", help=RUN_HELP, metavar="RUN"),
    fmt: RecordFormat = typer.Option(RecordFormat.table, "--format", help="Output format."),
    all_settings: bool = typer.Option(False, "--all", help="Every setting, not only those that differ from the "
                                                           "engine's defaults."),
):
    """Show runs: summary, throughput sparkline, startup timeline, milestones, configuration."""
    from .. import api
    from .output import write_runs

    selectors = list(runs or []) + list(run or [])
    views = with_database(api.show_runs, selectors or None, needs_runs=True, all_settings=all_settings)
    write_runs(views, fmt.value)


@app.command()
def diagnose(
    paths: List[str] = typer.Argument(None, help="Logs to ingest first (optional); findings then cover their runs.", show_default=False),
    run: List[str] = typer.Option(None, "--run", "-r", help=RUN_HELP, metavar="RUN"),
    rule: List[str] = typer.Option(None, "--rule", help="Only these rule ids (repeatable).", metavar="RULE"),
    min_severity: Severity = typer.Option(Severity.info, "--min-severity", help="Lowest severity shown."),
    fmt: FindingsFormat = typer.Option(FindingsFormat.table, "--format", help="Output format."),
    fail_on: Optional[Severity] = typer.Option(None, "--fail-on",
                                               help="Exit 1 if a finding is at or above this severity."),
    rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files (repeatable).",
                                        metavar="DIR"),
    set_: List[str] = typer.Option(None, "--set", help="Override a rule parameter: RULE.PARAM=VALUE.",
                                   metavar="RULE.PARAM=VALUE"),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU of the runs being ingested."),
    label: Optional[str] = typer.Option(None, "--label", help="Label for the runs being ingested."),
    grammar_dir: List[str] = typer.Option(None, "--grammar-dir", help=GRAMMAR_DIR_HELP, metavar="DIR"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the compact findings table (run, severity, "
                                                             "rule, title); nothing when there are none."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also say which rules stayed silent, and which known "
                                                             "issues were considered, and why."),
    known_dir: List[str] = typer.Option(None, "--known-issues-dir", metavar="DIR",
                                        help="Extra folder of known upstream issue .toml files (repeatable)."),
):
    """Run the diagnose rules (after ingesting PATHS) and print the findings.

    First a compact table (run, severity, rule, title), then each finding with its evidence and fix.
    """
    from .. import api
    from .output import write_findings

    ingested = None
    if paths:
        files = api.checked_files(paths, _note)
        con = _db()
        try:
            ingested = api.ingested_run_ids(con, _ingest(con, files, api.IngestOptions(label=label, gpu=gpu,
                                                                                   grammar_dirs=tuple(grammar_dir or ())),
                                                         quiet=True))
        finally:
            con.close()  # the ingest has committed: the rules read through a read-only connection
    result = with_database(api.diagnosis, run or None, needs_runs=True, run_ids=ingested, rule_ids=rule or None,
                           min_severity=min_severity.value, extra_dirs=rules_dir or None, sets=set_ or None,
                           sandboxed=True,  # rule files (--rules-dir too) cannot touch files or extensions
                           known_dirs=known_dir or None)
    write_findings(result, fmt.value, quiet=quiet)
    if verbose:
        for rid, why in result.silent:
            _note(f"silent: {rid}: {why}")
        for rid, why in result.known:
            _note(f"{rid}: {why}")
    if fail_on and result.at_or_above(fail_on.value):
        raise typer.Exit(int(ExitCode.FINDINGS))


@app.command("rules")
def rules_cmd(
    rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files (repeatable).",
                                        metavar="DIR"),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
):
    """List the diagnose rules: id, severity, title, parameters, threshold source."""
    from .. import api
    from .output import write_frame

    frame = api.rules_table(rules_dir or None, frame=False)
    write_frame(frame, fmt.value, title=f"{frame.height} rules")


@app.command()
def sql(
    statement: Optional[str] = typer.Argument(
        None, help="SQL to run; - (or none, with stdin piped) reads it from stdin. Several statements run in order and every result "
                   "is shown (--format table or markdown).", show_default=False),
    file: Optional[str] = typer.Option(None, "--file", "-f", help="Read the SQL from this file (- for stdin).",
                                       metavar="PATH"),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    write: bool = typer.Option(False, "--write", help="Open the database writable."),
    allow_files: bool = typer.Option(False, "--allow-files",
                                     help="Let the SQL read and write files (read_csv, COPY, ATTACH...)."),
):
    """Run ad-hoc SQL on the database (read-only, no file access unless --write / --allow-files).

    `logsleuth schema` lists the tables and columns.
    """
    from .. import api
    from .output import sql_text, write_statements

    text = sql_text(statement, file)
    results = with_database(api.run_sql, text, read_only=not write, sandboxed=True, allow_files=allow_files)
    write_statements(results, fmt.value)


@app.command()
def schema(
    table: Optional[str] = typer.Argument(None, help="A table or view: list its columns.",
                                          show_default=False),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
):
    """List the tables and views, or the columns of one, each with a one-line description."""
    from .. import api
    from .output import write_frame

    frame = with_database(api.schema, table, frame=False)
    write_frame(frame, fmt.value, title=f"columns of {table}" if table else "tables and views")


@app.command()
def unparsed(
    limit: int = typer.Option(20, "--limit", help="How many templates."),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
):
    """Top templates of lines no grammar pattern claimed."""
    from .. import api
    from .output import write_frame

    frame = with_database(api.unparsed, limit)
    write_frame(frame, fmt.value, title="unparsed line templates")


@app.command("compare")
def compare_cmd(
    runs: List[str] = typer.Argument(None, help="Runs: ids, source file names or labels (default: all).", show_default=False),
    run: List[str] = typer.Option(None, "--run", "-r", help=RUN_HELP, metavar="RUN"),
    fmt: CompareFormat = typer.Option(CompareFormat.table, "--format", help="Output format."),
    no_findings: bool = typer.Option(False, "--no-findings", help="Do not run the diagnose rules."),
):
    """Compare runs side by side.

    Engine, kernels, startup, throughput per concurrency band, benchmarks, findings, and the
    configuration keys that differ (SGLang and vLLM names mapped onto one).
    """
    from .. import api
    from .output import write_comparison

    selectors = list(runs or []) + list(run or [])
    result = with_database(api.compare, selectors or None, needs_runs=True, findings=not no_findings)
    write_comparison(result, fmt.value)


@app.command("report")
def report_cmd(
    runs: List[str] = typer.Argument(None, help="Runs: ids, source file names or labels (default: all).", show_default=False),
    run: List[str] = typer.Option(None, "--run", "-r", help=RUN_HELP, metavar="RUN"),
    output: str = typer.Option("report.html", "--output", "-o", help="HTML file to write (- for stdout).",
                               metavar="PATH"),
    title: Optional[str] = typer.Option(None, "--title", help="Page title."),
    no_findings: bool = typer.Option(False, "--no-findings", help="Do not run the diagnose rules."),
):
    """Write one self-contained HTML report (inline SVG charts, findings, compare table; opens offline)."""
    from .. import api

    selectors = list(runs or []) + list(run or [])
    if output == "-":
        sys.stdout.write(with_database(api.report_html, selectors or None, needs_runs=True, title=title, with_findings=not no_findings))
        return
    size = with_database(api.write_report, selectors or None, output, needs_runs=True, title=title, with_findings=not no_findings)
    _note(f"wrote {output} ({size / 1024:,.0f} KiB)")


@formats_app.command("check")
def formats_check(
    files: List[str] = typer.Argument(None, help="Grammar files (default: all shipped and user grammars).",
                                      show_default=False),
    grammar_dir: List[str] = typer.Option(None, "--grammar-dir", help="Extra folder of grammar .toml files (repeatable).",
                                          show_default=False),
    rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files (repeatable).",
                                        show_default=False),
):
    """Check grammars, and the rules and views against them: schema, regexes, samples, event kinds, references."""
    from ..analysis.format_check import check_formats

    sys.stdout.write(check_formats(files or None, grammar_dirs=grammar_dir or (), rules_dirs=rules_dir or ()).line() + "\n")


@formats_app.command("list")
def formats_list(grammar_dir: List[str] = typer.Option(None, "--grammar-dir", help="Extra folder of grammar .toml files.",
                                                       show_default=False)):
    """List grammar patterns: grammar, name, target table, kind."""
    from ..formats.grammar import load_grammars

    for g in load_grammars(grammar_dirs=grammar_dir or (), check_regexes=False):
        for p in g.patterns:
            sys.stdout.write(f"{g.name}\t{p.name}\t{p.table}\t{p.kind}\n")


# --- commands of other modules: one registration line each (see the module docstring)
from .watch import register as _register_watch; _register_watch(app)  # noqa: E402,E702 (cli/watch.py)
from .scrape import register as _register_scrape; _register_scrape(app)  # noqa: E402,E702 (cli/scrape.py)
from .fleet import register as _register_fleet; _register_fleet(app)  # noqa: E402,E702 (cli/fleet.py)
from .lnav import register as _register_lnav; _register_lnav(formats_app)  # noqa: E402,E702 (cli/lnav.py)
from .known import register as _register_known; _register_known(app)  # noqa: E402,E702 (cli/known.py)


def _is_click(exc: BaseException, name: str) -> bool:
    """click exceptions by class name: typer may vendor its own copy of click."""
    return any(c.__name__ == name for c in type(exc).__mro__)


def main() -> None:
    """Console-script entry point: run the app, map errors to exit codes."""
    from ..interrupts import install_sigterm, interrupt_message, interrupted_query

    install_sigterm()  # SIGTERM stops like Ctrl-C: rollback, message, exit 130
    from .color import style_help

    style_help(sys.argv[1:])  # help and usage errors are drawn before the callback reads --color
    try:
        rc = app(standalone_mode=False)  # typer.Exit(n) comes back as a return value here
    except LogsleuthError as exc:
        if debug_requested(sys.argv[1:]):
            import traceback

            traceback.print_exc()
        _err(str(exc))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt as exc:
        _err(interrupt_message(exc))
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
        if _is_click(exc, "Abort") or interrupted_query(exc):
            _err(interrupt_message(exc))
            sys.exit(int(ExitCode.INTERRUPTED))
        if _is_click(exc, "ClickException"):
            exc.show()
            sys.exit(int(ExitCode.USAGE))
        if isinstance(exc, MemoryError):
            _err("out of memory (run with --debug for a traceback)")
            sys.exit(int(ExitCode.INTERNAL))
        if type(exc).__name__ == "OutOfMemoryException" and not debug_requested(sys.argv[1:]):
            # DuckDB's, under the cap an ingest sets: say which knob raises it
            _err(f"DuckDB ran out of memory: {_one_line(exc)}; raise its cap with LOGSLEUTH_INGEST_MEMORY "
                 "(e.g. LOGSLEUTH_INGEST_MEMORY=1GB)")
            sys.exit(int(ExitCode.INTERNAL))
        if debug_requested(sys.argv[1:]):
            raise
        _err(f"internal error: {type(exc).__name__}: {_one_line(exc)} (run with --debug for a traceback)")
        sys.exit(int(ExitCode.INTERNAL))
    if rc == int(ExitCode.INTERRUPTED):  # typer turns KeyboardInterrupt into Exit(130), silently
        _err(interrupt_message())
    sys.exit(rc if isinstance(rc, int) and not isinstance(rc, bool) else int(ExitCode.OK))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


if __name__ == "__main__":
    main()
