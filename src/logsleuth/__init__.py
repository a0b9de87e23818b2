"""logsleuth: forensics for SGLang and vLLM inference-server logs, backed by DuckDB.

``import logsleuth`` gives the library API (no typer, no rich)::

    import logsleuth
    con = logsleuth.open_db("logsleuth.duckdb")
    logsleuth.ingest_files(con, ["server.log"])
    logsleuth.query(con, "SELECT * FROM run_summary")
    findings = logsleuth.diagnose(con)

Heavy modules (polars, duckdb) load on first use so that ``logsleuth --help`` stays fast.
"""
from .errors import ExitCode, LogsleuthError

__version__ = "0.1.0"
_API = {"open_db", "ingest_files", "query", "runs", "expand_paths", "IngestOptions", "default_db_path"}
_RULES = {"load_rules", "Finding"}
__all__ = sorted(_API | _RULES | {"diagnose", "ExitCode", "LogsleuthError", "__version__"})


def diagnose(con, **kwargs):
    """Run the diagnose rules; see ``logsleuth.rules.diagnose``."""
    from .analysis.rules import diagnose as _diagnose

    return _diagnose(con, **kwargs)


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _RULES:
        from .analysis import rules

        return getattr(rules, name)
    raise AttributeError(f"module 'logsleuth' has no attribute {name!r}")
