"""logsleuth: forensics for SGLang and vLLM inference-server logs, backed by DuckDB.

``import logsleuth`` gives the library API (no typer, no rich)::

    import logsleuth
    con = logsleuth.open_db("logsleuth.duckdb")
    logsleuth.ingest(con, ["server.log"])
    logsleuth.query(con, "SELECT * FROM run_summary")
    findings = logsleuth.diagnose(con)

The API is imported lazily so that ``logsleuth --help`` does not pay for polars/duckdb.
"""
from .errors import ExitCode, LogsleuthError

__version__ = "0.1.0"
_API = {"open_db", "ingest", "query", "runs", "expand_paths", "IngestOptions", "default_db_path"}
_RULES = {"diagnose", "load_rules", "Finding"}
__all__ = sorted(_API | _RULES | {"ExitCode", "LogsleuthError", "__version__"})


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _RULES:
        from . import rules

        return getattr(rules, name)
    raise AttributeError(f"module 'logsleuth' has no attribute {name!r}")
