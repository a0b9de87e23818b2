"""Store files without deriving their runs, so that one ``finalize_sources`` call can derive
them all afterwards (as the batch path does), whatever the ingest path of the day."""
from __future__ import annotations

from logsleuth.derive import runs as derive_runs
from logsleuth.ingest import pipeline
from logsleuth.ingest.pipeline import IngestOptions

REAL_FINALIZE = derive_runs.finalize_sources


def store_without_deriving(con, files, monkeypatch) -> list:
    """Ingest ``files`` one by one with run derivation recorded instead of run (the patches are
    undone before returning); returns the ``finalize_sources`` items of all of them."""
    items: list = []

    def record(con, batch):
        items.extend(batch)
        return [[] for _ in batch]

    def record_one(con, *item):
        items.append(item)
        return []

    next_id = pipeline._next_id

    def next_free(con, table, col):  # runs are not stored yet: the next file's ids follow its logs' lines
        n = next_id(con, table, col)
        if table == "runs":
            n = max(n, int(con.execute("""SELECT coalesce(max(run_id), 0) + 1 FROM lines WHERE source_id NOT IN
                                          (SELECT source_id FROM sources WHERE kind = 'env_report')""").fetchall()[0][0]))
        return n

    with monkeypatch.context() as mp:
        mp.setattr(derive_runs, "finalize_sources", record)
        mp.setattr(derive_runs, "finalize_source", record_one)
        mp.setattr(pipeline, "_next_id", next_free)
        for f in files:
            pipeline.ingest_source(con, str(f), IngestOptions())
    return items
