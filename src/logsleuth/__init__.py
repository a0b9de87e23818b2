"""logsleuth: forensics for SGLang and vLLM inference-server logs, backed by DuckDB.

``import logsleuth`` gives the library API (no typer, no rich; docs/python-api.md)::

    import logsleuth
    con = logsleuth.open_db("logsleuth.duckdb")
    logsleuth.ingest_files(con, ["server.log"])
    logsleuth.query(con, "SELECT * FROM run_summary")   # a polars DataFrame
    findings = logsleuth.diagnose(con)                   # list of Finding
    result = logsleuth.compare(con, ["1", "2"])          # CompareResult
    logsleuth.write_report(con, None, "report.html")
    logsleuth.schema(con, "runs")                        # columns with descriptions

Heavy modules (polars, duckdb) load on first use so that ``logsleuth --help`` stays fast.
"""
from .errors import ExitCode, LogsleuthError
from .version import __version__  # one place: the CLI and the report read it too

_API = {"open_db", "open_dataset", "ingest_dataset", "fleet_summary", "ingest_files", "query", "run_sql", "runs", "resolve_runs", "show_runs", "diagnose",
        "diagnosis", "compare", "report_html", "write_report", "schema", "rules_table", "unparsed",
        "expand_paths", "IngestOptions", "default_db_path"}
_RULES = {"load_rules", "Finding"}
__all__ = sorted(_API | _RULES | {"ExitCode", "LogsleuthError", "__version__"})


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _RULES:
        from .analysis import rules

        return getattr(rules, name)
    raise AttributeError(f"module 'logsleuth' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
