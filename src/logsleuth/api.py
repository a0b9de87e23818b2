"""The library API: everything the CLI does, without typer or rich.

Contract: functions take a DuckDB connection (from ``open_db``) and plain values, and
return typed data: dataclasses, lists of them, or polars frames. Errors are
``LogsleuthError`` subclasses carrying their exit code. Read-side SQL is loaded by name
from ``queries/app/*.sql`` (``db/queries.py``); nothing here formats for a terminal.

Runs are chosen by *selectors*: a run id, a source file name (with or without its
extension, or its path) or an ingest ``--label``; ``resolve_runs`` turns them into run
ids, and no selector means every run. Every function taking ``selectors`` uses it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .db import queries
from .db.connection import default_db_path, fetch_frame, open_db as open_database
from .errors import NoRunsError, QueryError, UsageError
from .fleet.views import is_dataset, open_dataset
from .table import Table

if TYPE_CHECKING:
    import polars as pl

    from .ingest.pipeline import IngestOptions, IngestResult

    from .analysis.compare import CompareResult
    from .analysis.rules import Finding

from .intake.paths import LOG_SUFFIXES  # noqa: E402,F401  (re-exported)

__all__ = ["open_db", "open_dataset", "is_dataset", "ingest_dataset", "fleet_summary", "expand_paths", "checked_files", "ingest_files", "query", "run_sql", "runs",
           "resolve_runs", "resolve_run", "run_details", "show_runs", "diagnose", "diagnosis", "compare", "report_html",
           "write_report", "schema", "rules_table", "known_issues", "unparsed", "default_db_path", "IngestOptions",
           "RunView", "Diagnosis", "StatementResult"]

Selectors = Iterable["str | int"] | None


def __getattr__(name: str):
    """``IngestOptions``/``IngestResult`` load with the ingest modules on first use, so that
    commands that only read (diagnose, runs, sql) never import polars for them."""
    if name in ("IngestOptions", "IngestResult"):
        from .ingest import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_db(path: str | None = None, **options):
    """A connection to the database at ``path`` (default ./logsleuth.duckdb, created with its
    schema); a fleet dataset folder opens as a read-only view of its Parquet files instead."""
    if path and is_dataset(path):
        return open_dataset(path)
    from .derive.upgrades import derivations

    options.setdefault("derived", derivations())
    return open_database(path, **options)


# --------------------------------------------------------------------------- ingest

def expand_paths(paths: Iterable[str], on_note: Callable[[str], None] | None = None) -> list[str]:
    """Files as given, globs expanded, directories walked for inputs (``intake/paths.py``);
    ``on_note(text)`` hears of each file a folder walk skipped and why."""
    from .intake.paths import expand_paths as _expand

    return _expand(paths, on_note)


def checked_files(paths: Iterable[str], on_note: Callable[[str], None] | None = None) -> list[str]:
    """``expand_paths``, then every file checked (exists, readable, not empty or binary)
    before any database is opened: nothing is written when one of several files is bad."""
    from .intake.paths import checked_files as _checked

    return _checked(paths, on_note)


def ingest_files(con, paths: Iterable[str], options: IngestOptions | None = None,
                 on_file: Callable[[str], None] | None = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 on_result: Callable[[IngestResult], None] | None = None) -> list[IngestResult]:
    """Ingest each path (globs and directories expanded), logs and telemetry alike, each
    all-or-nothing (small files share one transaction per batch: ``ingest/batch.py``); stops
    at the first bad input. ``on_file(path)`` is called before a file, ``progress(path,
    bytes_done, bytes_total)`` while it is read, ``on_result(result)`` once it is committed."""
    from .intake import ingest_files as _ingest

    return _ingest(con, paths, options, on_file=on_file, progress=progress, on_result=on_result)


def ingested_run_ids(con, results: Iterable[IngestResult]) -> list[int]:
    """Run ids of ingest results, with the runs of files skipped as already ingested."""
    results = list(results)
    ids = {r for res in results for r in res.run_ids}
    skipped = [res.source_id for res in results if res.status == "skipped"]
    if skipped:
        ids |= {r["run_id"] for r in queries.rows(con, "source_runs", {"source_ids": skipped})}
    return sorted(ids)


# --------------------------------------------------------------------------- SQL

def query(con, sql: str, params: list | dict | None = None) -> pl.DataFrame:
    """Run SQL and return a polars frame; errors become QueryError."""
    import duckdb

    try:
        return fetch_frame(con, sql, params)
    except duckdb.Error as exc:
        msg = str(exc).strip().splitlines()
        raise QueryError(f"SQL error: {msg[0] if msg else exc}") from None


@dataclass
class StatementResult:
    """One statement of a ``run_sql`` script and its result: ``table`` as DuckDB returned
    it (no columns when the statement returns no rows, e.g. CREATE), ``frame`` the same as a
    polars DataFrame (converted on first use)."""

    number: int
    statement: str
    table: Table
    returns_rows: bool

    @property
    def frame(self) -> "pl.DataFrame":
        from .db.sandbox import table_to_polars

        return table_to_polars(self.table)


def run_sql(con, text: str, *, sandboxed: bool = False, allow_files: bool = False) -> list[StatementResult]:
    """Run every statement of ``text`` in order and return each result. ``sandboxed``
    first turns off file access and extension loading on ``con`` (``db/sandbox.py``;
    ``allow_files`` keeps file access). A failing statement raises QueryError naming its
    number; the statements before it have run."""
    import duckdb

    from .db.sandbox import SQL_EXAMPLE, sandbox, user_query

    try:
        parsed = [s for s in duckdb.extract_statements(text) if s.query.strip().rstrip(";").strip()]
    except duckdb.Error as exc:
        raise QueryError(f"SQL error: {_first_line(exc)}") from None
    statements = [s.query.strip() for s in parsed]
    types = [s.type.name for s in parsed]
    if not statements:
        raise QueryError("empty SQL statement", hint=SQL_EXAMPLE)
    if sandboxed and sandbox(con, allow_files=allow_files):
        from .db.sandbox import dataset_refusal

        if refusal := dataset_refusal(statements):
            raise QueryError(refusal, hint="--allow-files lets a query of a dataset write files")
    out = []
    for i, stmt in enumerate(statements, 1):
        try:
            table = user_query(con, stmt)
        except QueryError as exc:
            if len(statements) == 1:
                raise
            raise QueryError(f"statement {i} of {len(statements)}: {exc.message}", hint=exc.hint) from None
        # DDL and DML return a lone "Count" column: not a result anyone asked to see
        out.append(StatementResult(i, stmt, table, returns_rows=bool(table.width) and not (
            table.columns == ["Count"] and types[i - 1] != "SELECT")))
    return out


# --------------------------------------------------------------------------- runs

def require_runs(con, where: str | None = None) -> int:
    """How many runs ``con`` holds; a NoRunsError (exit 2) when it holds none, so that an
    empty database never reads as "no findings" or an empty list."""
    n = queries.rows(con, "run_count")[0]["n"]
    if not n:
        raise NoRunsError(f"no runs{' in ' + where if where else ''}", hint="run `logsleuth ingest FILE` first")
    return n


def resolve_runs(con, selectors: Selectors = None) -> list[int]:
    """Run ids for the selectors (id, source file name, label), in the order given;
    every run when there is no selector. An unmatched selector is a UsageError."""
    from .analysis.selectors import resolve_runs as _resolve  # the one resolver, shared with compare

    return _resolve(con, selectors)


def resolve_run(con, selector: str | int) -> int:
    """The one run a selector names; a UsageError when it names none or several."""
    ids = resolve_runs(con, [selector])
    if len(ids) != 1:
        raise UsageError(f"'{selector}' names {len(ids)} runs ({', '.join(map(str, ids))}); name one",
                         hint="use a run id; see `logsleuth runs`")
    return ids[0]


def runs(con, selectors: Selectors = None, *, frame: bool = True):
    """The runs (server launches): id, source, label, engine, version, model, TP, attention
    backend, speculative method, GPU and how it was found, end state. A polars DataFrame;
    ``frame=False``: a ``logsleuth.table.Table`` (no polars import)."""
    params = {"run_ids": resolve_runs(con, selectors)}
    return queries.frame(con, "runs", params) if frame else queries.table(con, "runs", params)


def run_details(con, run_ids: list[int]) -> list[dict]:
    """``run_summary`` rows of ``run_ids`` plus line range, provenance and end reason."""
    return queries.rows(con, "run_details", {"run_ids": list(run_ids)})


@dataclass
class RunView:
    """What ``logsleuth show`` shows of one run."""

    summary: dict  # run_details row
    throughput: list  # generation tok/s of the primary rank, in log order
    phases: dict  # startup phases (analysis.timeline.startup_phases)
    milestones: "pl.DataFrame"
    config: "pl.DataFrame"
    all_settings: bool = False  # config holds every setting, not only those that differ from the defaults

    def as_dict(self) -> dict:
        return {"summary": self.summary, "throughput_tok_s": self.throughput, "startup_phases": self.phases,
                "milestones": self.milestones.to_dicts(), "config": self.config.to_dicts()}


def show_runs(con, selectors: Selectors, *, limit: int = 400, all_settings: bool = False) -> list[RunView]:
    """Everything ``show`` prints, for each selected run: its settings that differ from the
    engine's defaults (``parsers/config_defaults.toml``), or every one with ``all_settings``."""
    from .analysis.config_defaults import default_pairs
    from .analysis.timeline import startup_phases

    ids = resolve_runs(con, selectors)
    phases = startup_phases(con, ids)
    out = []
    for row in run_details(con, ids):
        rid = row["run_id"]
        gen = [r["gen_tok_s"] for r in queries.rows(con, "run_throughput", {"run_id": rid})]
        out.append(RunView(
            summary=row, throughput=gen, phases=phases.get(rid) or {},
            milestones=queries.frame(con, "run_milestones", {"run_id": rid, "limit": 40}),
            config=queries.frame(con, "run_config", {"run_id": rid, "limit": limit, "all": all_settings,
                                                     "defaults": default_pairs(row.get("engine"))}),
            all_settings=all_settings))
    return out


def unparsed(con, limit: int = 20) -> pl.DataFrame:
    """The ``limit`` most frequent templates of lines no grammar pattern claimed."""
    if limit < 1:
        raise UsageError(f"--limit {limit}: must be at least 1")
    return queries.frame(con, "unparsed_templates", {"limit": limit})


# --------------------------------------------------------------------------- findings

def diagnose(con, selectors: Selectors = None, **kwargs) -> list[Finding]:
    """Run the diagnose rules over the selected runs (all when none); a list of findings.
    Keyword arguments go to ``analysis.rules.diagnose`` (rule_ids, min_severity,
    extra_dirs, sets, silent, run_ids)."""
    from .analysis.rules import diagnose as _diagnose

    if selectors is not None and "run_ids" not in kwargs:
        kwargs["run_ids"] = resolve_runs(con, selectors)
    return _diagnose(con, **kwargs)


@dataclass
class Diagnosis:
    """Findings of one diagnose call, the rules that stayed silent and why, and the runs
    they cover (run_id -> source, engine, model, end_state)."""

    findings: list
    silent: list = field(default_factory=list)  # (rule_id, reason)
    runs: dict = field(default_factory=dict)
    run_ids: list | None = None  # None: every run
    known: list = field(default_factory=list)  # (known-issue entry, why it was not a match)

    def counts(self) -> dict[str, int]:
        from .analysis.rules import SEVERITIES

        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    def at_or_above(self, severity: str) -> bool:
        """Whether a finding is at ``severity`` or more severe (``--fail-on``)."""
        from .analysis.rules import SEV_RANK

        if severity not in SEV_RANK:
            raise UsageError(f"--fail-on {severity}: one of {', '.join(SEV_RANK)}")
        return any(SEV_RANK[f.severity] <= SEV_RANK[severity] for f in self.findings)


def diagnosis(con, selectors: Selectors = None, *, run_ids: list[int] | None = None,
              rule_ids: list[str] | None = None, min_severity: str = "info",
              extra_dirs: list[str] | None = None, sets: list[str] | None = None,
              sandboxed: bool = False, known_dirs: list[str] | None = None) -> Diagnosis:
    """``diagnose`` with what a findings listing needs around it. ``run_ids`` (already
    resolved, e.g. from an ingest) and ``selectors`` intersect. ``sandboxed`` turns off
    file access on ``con`` first, so a user's rule file cannot read or write files."""
    if sandboxed:
        from .db.sandbox import sandbox

        sandbox(con)
    chosen = None if selectors is None else resolve_runs(con, selectors)
    if run_ids is not None:
        chosen = [r for r in run_ids if chosen is None or r in chosen]
    silent: list = []
    known: list = []
    findings = diagnose(con, run_ids=chosen, rule_ids=rule_ids, min_severity=min_severity,
                        extra_dirs=extra_dirs, sets=sets, silent=silent, known_dirs=known_dirs, known_notes=known)
    headers = {r["run_id"]: r for r in queries.rows(con, "run_headers")}
    return Diagnosis(findings=findings, silent=silent, runs=headers, run_ids=chosen, known=known)


def rules_table(extra_dirs: list[str] | None = None, *, frame: bool = True):
    """The diagnose rules: id, severity, title, parameters, threshold source (a polars
    DataFrame; ``frame=False``: a ``logsleuth.table.Table``)."""
    from .analysis.rules import load_rules

    rules = load_rules(extra_dirs)
    table = Table(["id", "severity", "title", "params", "source"], [
        (r.id, r.severity, r.title, ", ".join(f"{k}={v}" for k, v in r.params.items()), r.source) for r in rules])
    return _as_frame(table, {c: "Utf8" for c in table.columns}) if frame else table


def known_issues(*, engine: str | None = None, gpu: str | None = None, version: str | None = None,
                 category: str | None = None, extra_dirs: list[str] | None = None) -> list[dict]:
    """The known upstream issues (shipped and the user's) that may apply to ``engine``,
    ``gpu`` (an SM such as SM120, a vendor, or a GPU name), ``version`` and ``category``;
    one dict per entry (docs/known-issues.md)."""
    from .analysis.known_issues import load_known_issues, select

    issues = load_known_issues(extra_dirs)
    return [i.as_dict() for i in select(issues, engine=engine, gpu=gpu, version=version, category=category)]


# --------------------------------------------------------------------------- compare, report

def compare(con, selectors: Selectors = None, *, findings: bool = True) -> CompareResult:
    """Runs side by side (``analysis.compare.CompareResult``)."""
    from .analysis.compare import compare as _compare

    return _compare(con, list(selectors) if selectors else None, findings=findings)


def report_html(con, selectors: Selectors = None, *, title: str | None = None, with_findings: bool = True) -> str:
    """The self-contained HTML report of the selected runs, as text."""
    from .report import build_report

    return build_report(con, list(selectors) if selectors else None, title=title, findings=with_findings)


def write_report(con, selectors: Selectors, out: str | Path, *, title: str | None = None,
                 with_findings: bool = True) -> int:
    """Write the HTML report to ``out``; returns its size in bytes."""
    from .report import write_report as _write_report

    return _write_report(con, list(selectors) if selectors else None, out, title=title,
                         with_findings=with_findings)


# --------------------------------------------------------------------------- schema

def _schema_docs() -> dict:
    import tomllib

    from .resources import data_path

    with open(data_path("queries/schema.toml"), "rb") as fh:
        return tomllib.load(fh)


def schema(con, table: str | None = None, *, frame: bool = True):
    """Without ``table``: every table and view (name, type, columns, description). With
    ``table``: its columns (column, data_type, description). Descriptions are data
    (``queries/schema.toml``); an unknown table is a UsageError listing the known ones.
    A polars DataFrame; ``frame=False``: a ``logsleuth.table.Table``."""
    docs = _schema_docs()
    common, tables = docs.get("columns", {}), docs.get("tables", {})
    cols = queries.table(con, "schema_columns").to_dicts()
    if table is None:
        counts: dict[tuple, int] = {}
        for c in cols:  # in the query's order: tables first, then views, each by name
            counts[(c["table"], c["type"])] = counts.get((c["table"], c["type"]), 0) + 1
        out = Table(["table", "type", "columns", "description"],
                    [(t, kind, n, tables.get(t, {}).get("description", "")) for (t, kind), n in counts.items()])
        return _as_frame(out, {"table": "Utf8", "type": "Utf8", "columns": "UInt32", "description": "Utf8"}) \
            if frame else out
    mine = [c for c in cols if c["table"] == table]
    if not mine:
        known = ", ".join(sorted({c["table"] for c in cols}))
        raise UsageError(f"no table or view '{table}'", hint=f"one of {known}")
    described = {**common, **tables.get(table, {}).get("columns", {})}
    out = Table(["column", "data_type", "description"],
                [(c["column"], c["data_type"], described.get(c["column"], "")) for c in mine])
    return _as_frame(out, {c: "Utf8" for c in out.columns}) if frame else out


def _as_frame(table: Table, dtypes: dict[str, str]):
    """``table`` as a polars DataFrame with these column types (by polars type name)."""
    import polars as pl

    return pl.DataFrame({c: table.column(c) for c in table.columns},
                        schema={c: getattr(pl, dtypes[c]) for c in table.columns})


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


# --------------------------------------------------------------------------- fleet

def ingest_dataset(target: str, paths: Iterable[str], **options):
    """Parse files (globs and folders expanded) into the Parquet dataset ``target``; see
    ``logsleuth.fleet.driver.ingest_dataset`` for the options (host, host_from, executor,
    address, jobs, replace, label, gpu, year, keep_prompts, on_done)."""
    from .fleet.driver import ingest_dataset as _ingest_dataset

    if "jobs" in options:
        options["workers"] = options.pop("jobs")
    return _ingest_dataset(target, expand_paths(paths), **options)


def fleet_summary(con, **options):
    """Per-host rows and fleet flags of a dataset; see ``logsleuth.fleet.summary``."""
    from .fleet.summary import fleet_summary as _fleet_summary

    return _fleet_summary(con, **options)



# --------------------------------------------------------------------------- lnav

def export_lnav_formats(folder: str | Path) -> list[Path]:
    """Write one lnav format file per engine, generated from the grammars, into ``folder``;
    the paths written (see ``logsleuth.formats.lnav``)."""
    from .formats.lnav import write_lnav_formats

    return write_lnav_formats(folder)
