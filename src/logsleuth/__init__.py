"""logsleuth: forensics for SGLang and vLLM inference-server logs, backed by DuckDB.

``import logsleuth`` gives the library API (no typer, no rich):

    import logsleuth
    con = logsleuth.open_db("logsleuth.duckdb")
    logsleuth.ingest(con, ["server.log"])
    logsleuth.query(con, "SELECT * FROM run_summary")
"""
from .api import IngestOptions, default_db_path, expand_paths, ingest, open_db, query, runs
from .errors import ExitCode, LogsleuthError

__version__ = "0.1.0"
__all__ = ["open_db", "ingest", "query", "runs", "expand_paths", "IngestOptions", "default_db_path",
           "ExitCode", "LogsleuthError", "__version__"]
