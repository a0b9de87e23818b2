"""A dataset seen as a database: DuckDB views named like the database's tables.

Contract: ``open_dataset(target)`` returns an in-memory DuckDB connection in which every
table of the schema is a view over exactly the part files the manifest lists (never a
file it does not list; columns the schema gained since the files were written read NULL), a table no source has yet is an empty table of the schema, and the
shipped views (``run_summary``, ``lines``, ...) are created on top, so ``sql``, ``runs``,
``diagnose``, ``compare`` and ``report`` run unchanged. ``is_dataset(path)`` tells a
dataset folder from a database file.
"""
from __future__ import annotations

import os

import duckdb

from ..db.connection import create_views
from ..db.schema import SCHEMA_VERSION, create_statements
from ..errors import BadInputError
from .manifest import MANIFEST, load_manifest
from .sql import fleet_fragment, fleet_sql
from .storage import storage_for


def is_dataset(path: str) -> bool:
    return ("://" in path and not path.startswith("file://")) or os.path.isfile(os.path.join(path, MANIFEST))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _columns(con, table: str, scan: str) -> str:
    """The schema's columns in its order (NULL where older part files lack one: a dataset
    written by an earlier logsleuth still opens), then any column only the files have."""
    in_files = [r[0] for r in con.execute(fleet_sql("scan_columns").replace("{scan}", scan)).fetchall()]
    schema = con.execute(fleet_sql("schema_table_columns"), {"t": table}).fetchall()
    if not schema:
        return "*"
    cols = [f'"{c}"' if c in in_files else f'NULL::{typ} AS "{c}"' for c, typ in schema]
    known = {c for c, _ in schema}
    return ", ".join(cols + [f'"{c}"' for c in in_files if c not in known])


#: tables a later schema renamed (schema 4 split ``events``): part files written under the old
#: name are read as the table that took its rows (the ``events`` view still shows them all)
_RENAMED = {"events": "events_other"}


def _files_by_table(manifest) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for table in sorted(manifest.tables):
        out.setdefault(_RENAMED.get(table, table), []).extend(manifest.part_files(table))
    return out


def open_dataset(target: str) -> duckdb.DuckDBPyConnection:
    storage = storage_for(target)
    manifest = load_manifest(storage, SCHEMA_VERSION)
    if not manifest.sources and storage.read_text(MANIFEST) is None:
        raise BadInputError(f"{target}: no logsleuth dataset here (no {MANIFEST}); "
                            "create one with: logsleuth ingest --dataset DIR FILES")
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    for stmt in create_statements():
        con.execute(stmt)
    con.execute(fleet_sql("dataset_schema_version"), {"version": str(SCHEMA_VERSION)})
    for table, files in sorted(_files_by_table(manifest).items()):
        if not files:
            continue
        listed = ", ".join(_quote(storage.uri(f)) for f in files)
        scan = fleet_fragment("part_scan").replace("{files}", listed)
        columns = _columns(con, table, scan)  # before the empty table of the schema is dropped
        con.execute(fleet_sql("part_view").replace("{table}", f'"{table}"').replace("{columns}", columns)
                    .replace("{scan}", scan))
    create_views(con)
    # the sandbox of `sql` and `diagnose` (db/sandbox.py) keeps exactly this folder readable
    con.execute(fleet_sql("dataset_root"), {"root": storage.uri("")})
    # ... and, on a local dataset, only the part files the manifest lists
    listed = [storage.uri(f) for files in _files_by_table(manifest).values() for f in files]
    con.execute(fleet_sql("dataset_files"), {"files": listed})
    return con
