"""Store what a watch has seen, in short write transactions, and find what is wrong with it.

Contract: ``Store.sync(paths)`` opens the database, ingests what is new in each path,
re-runs the diagnose rules over the runs those paths hold, closes the database and returns
the findings as dicts. The database is open only during a sync, so another ``watch``, a
``diagnose`` or the duckdb CLI can use it in between (DuckDB allows one writing process
at a time; others wait for the lock as they do for an ingest).

``ingest_new`` is the one place that knows how the ingest engine takes a grown file: the
engine's incremental append extends the stored source (``ingest_files`` on the same path
reads only the new bytes); a truncated or replaced file becomes a new source, and a rotated
file (``server.log.1``) continues the source it was, so each line is stored once.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Store:
    db_path: str
    rules: dict = field(default_factory=dict)  # keyword arguments of logsleuth.diagnose
    findings: bool = True
    stored_runs: dict = field(default_factory=dict)  # path -> runs rows (watch_runs.sql) of the latest store

    def _open(self):
        from ..db.connection import open_db
        from ..derive.upgrades import derivations

        return open_db(self.db_path, derived=derivations())  # (an older database is upgraded)

    def history(self):
        from .history import History

        con = self._open()
        try:
            return History.load(con)
        finally:
            con.close()

    def ingest_new(self, con, path: str) -> int | None:
        """Ingest the new bytes of ``path`` (the engine's incremental append); the source id
        now holding it (None: nothing stored)."""
        from ..intake import ingest_files

        results = ingest_files(con, [path])
        return results[0].source_id if results else None

    def sync(self, paths: list[str], rotated: dict | None = None, admit=None) -> list[dict]:
        """Ingest the new bytes of ``paths`` (and the rest of files rotated away from them,
        ``rotated``: path -> where it went) and diagnose their runs; findings as dicts.
        ``admit(path)``, asked right before a path is read, may still refuse it (the file
        at the path is no longer the one the watch vetted)."""
        from ..db.queries import rows

        con = self._open()
        try:
            sids = {}
            # the rest of a rotated file first: the engine continues its source with it
            for old in (rotated or {}).values():
                sid = self.ingest_new(con, old)
                if sid is not None:
                    sids[old] = sid
            for p in paths:
                if admit is not None and not admit(p):
                    continue
                sid = self.ingest_new(con, p)
                if sid is not None:
                    sids[p] = sid
            if not sids:
                return []
            run_ids, where = [], {}
            for p, sid in sids.items():
                for r in rows(con, "watch_runs", {"source_ids": [sid]}):
                    run_ids.append(r["run_id"])
                    where[r["run_id"]] = p
                    self.stored_runs[p] = [x for x in self.stored_runs.get(p, []) if x["run_id"] != r["run_id"]] + [r]
            if not self.findings or not run_ids:
                return []
            from ..analysis.rules import diagnose

            found = diagnose(con, run_ids=run_ids, **self.rules)
            out = []
            for f in found:
                d = f.as_dict()
                d["path"] = where.get(f.run_id)
                out.append(d)
            return out
        finally:
            con.close()
