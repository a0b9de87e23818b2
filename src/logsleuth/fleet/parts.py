"""One source -> its part files: the unit of work a local process or a Ray task runs.

Contract: ``build_parts(job)`` ingests one file with the ordinary pipeline into a private
temporary database, then writes each per-source table as one Parquet file under
``TABLE/host=H/date=D/part-SID-TOKEN.parquet`` and returns the ``SourceEntry`` listing them.
It never touches the manifest, so a task that dies leaves only unlisted files (orphans the
next commit removes). Identifiers are made unique across the dataset: ``source_id`` is
the one the driver assigned, ``run_id`` (and every column holding a run id,
``RUN_ID_COLUMNS``) becomes ``source_id * RUN_STRIDE + local run id`` and every other
integer ``*_id`` column ``source_id * ID_STRIDE + local id``.
``build_parts_safe`` returns a ``PartFailure`` for bad input instead of raising, so Ray
does not retry what cannot succeed.
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..scratch import scratch_dir
from ..errors import LogsleuthError
from .hosts import UNKNOWN_HOST, host_from_log, safe_host
from .manifest import SourceEntry
from .sql import fleet_sql
from .storage import storage_for

RUN_STRIDE = 1_000_000
#: columns whose values are run ids (``runs.deployment``: the run id of the deployment's first run)
RUN_ID_COLUMNS = ("run_id", "deployment")
ID_STRIDE = 1_000_000_000
_INTEGER_TYPES = {"INTEGER", "BIGINT", "SMALLINT", "TINYINT", "HUGEINT", "UINTEGER", "UBIGINT"}


@dataclass
class SourceJob:
    path: str
    source_id: int
    sha256: str
    size: int
    target: str  # the dataset root (a folder or a pyarrow filesystem URI)
    token: str  # unique per ingest: part files are never overwritten
    host: str | None = None  # explicit or from --host-from; else the log's own word, else "unknown"
    label: str | None = None
    gpu: str | None = None
    year: int | None = None
    keep_prompts: bool = False
    note: str = ""  # how the driver chose to parse it (a large file not split: why)
    parse_jobs: int = 1  # parse processes inside the task: the cores the executor leaves idle


@dataclass
class BuiltSource:
    entry: SourceEntry
    tables: dict  # table -> [[column, type], ...], for the manifest's record of the schema
    note: str = ""  # how a large file was parsed (split into byte ranges, or why not)


@dataclass
class PartFailure:
    path: str
    message: str


def _remapped_select(table: str, columns: list[str], types: list[str], sid: int, host: str, date: str) -> str:
    cols = []
    for col, typ in zip(columns, types):
        if col == "source_id":
            cols.append(f"{sid}::INTEGER AS source_id")
        elif col in RUN_ID_COLUMNS:
            cols.append(f'({sid}::BIGINT * {RUN_STRIDE} + "{col}") AS "{col}"')
        elif col.endswith("_id") and typ.upper() in _INTEGER_TYPES:
            cols.append(f'({sid}::BIGINT * {ID_STRIDE} + "{col}") AS "{col}"')
        else:
            cols.append(f'"{col}"')
    if table == "sources":  # the partition values, also as columns for engines that ignore hive paths
        cols += [f"'{host}' AS host", f"'{date}' AS date"]
    return f'SELECT {", ".join(cols)} FROM "{table}"'


def task_options(job: SourceJob):
    """The pipeline's options for one task: ``job.parse_jobs`` parse processes (one, unless the
    executor has fewer tasks than cores: parse workers inside each task would otherwise only
    compete for the cores the tasks run on)."""
    from ..ingest.stages import IngestOptions
    from ..intake import ingest_options

    return ingest_options(IngestOptions(label=job.label, gpu=job.gpu, year=job.year, keep_prompts=job.keep_prompts,
                                        jobs=max(1, job.parse_jobs)))


def build_parts(job: SourceJob) -> BuiltSource:
    from ..db.connection import open_db
    from ..ingest.stages import ingest_source

    work = Path(scratch_dir("logsleuth-part-"))  # (a killed worker's folder is swept by the next)
    try:
        con = open_db(str(work / "one.duckdb"))
        try:
            result = ingest_source(con, job.path, task_options(job))
            return export_parts(con, job, work, result)
        finally:
            con.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def export_parts(con, job: SourceJob, work: Path, result) -> BuiltSource:
    """Write the one source ingested into ``con`` as its part files (ids remapped) and return
    its manifest entry; ``result`` is the pipeline's ``IngestResult`` for it."""
    host = safe_host(job.host or host_from_log(con) or UNKNOWN_HOST)
    day = con.execute(fleet_sql("source_date")).fetchone()[0]
    date = day or dt.datetime.fromtimestamp(os.path.getmtime(job.path), dt.timezone.utc).strftime("%Y-%m-%d")
    storage = storage_for(job.target)
    files, tables = {}, {}
    for table, columns, types in con.execute(fleet_sql("base_tables")).fetchall():
        rel = f"{table}/host={host}/date={date}/part-{job.source_id:06d}-{job.token}.parquet"
        local = work / f"{table}.parquet"
        select = _remapped_select(table, columns, types, job.source_id, host, date)
        con.execute(f"COPY ({select}) TO '{local}' (FORMAT parquet, COMPRESSION zstd)")
        storage.put_file(local, rel)
        files[table] = rel
        tables[table] = [[c, t] for c, t in zip(columns, types)]
    n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    entry = SourceEntry(source_id=job.source_id, path=job.path, name=os.path.basename(job.path),
                        sha256=job.sha256, bytes=job.size, host=host, date=date, kind=result.kind,
                        engine=result.engine or "", n_lines=result.n_lines, n_runs=n_runs, files=files)
    return BuiltSource(entry, tables, note=job.note)


def build_parts_safe(job: SourceJob) -> BuiltSource | PartFailure:
    """``build_parts``, with bad input (a final verdict, not worth a retry) as a value."""
    try:
        return build_parts(job)
    except LogsleuthError as exc:
        return PartFailure(job.path, str(exc))
