"""Run derivation of a batch's new sources, once for all of them, before the batch commits.

Contract: a ``PendingDerivation`` collects the new sources a batch stores (ingest/batch.py,
ingest/batch_frame.py, and ``pipeline`` for the files of a batch that take the chunk path):
``base_run(con)`` is the first run id free for the next source (the ``runs`` rows of the
pending sources are not written yet, so the ids their lines took count too), ``add`` queues
one source (its ``finalize_source`` arguments and the ``IngestResult`` whose ``run_ids`` the
derivation fills in), ``flush(con)`` derives every queued source with one
``derive.runs.finalize_sources`` call (a fixed number of set-based statements whatever the
number of sources) and must run before the batch commits, or before anything that reads the
``runs`` table (an append, a ``--replace``).

The rows and ids are those of deriving each file as it is stored: a source's lines before its
first launch that hold a run of their own are split off when it is queued (``split_prelude``,
three statements), so the next source's ids follow that split as they would one file at a
time; an environment report takes no run id (its lines' runs are cleared by its derivation).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..db.connection import fetch_one
from .sql import ingest_sql


@dataclass
class PendingDerivation:
    items: list = field(default_factory=list)  # finalize_source argument tuples, in store order
    results: list = field(default_factory=list)  # the IngestResult of each item
    next_run: int = 0  # first run id after the lines of the queued sources

    def base_run(self, con) -> int:
        """The run id the next new source starts at."""
        stored = int(fetch_one(con.execute(ingest_sql("next_run_id")))[0])
        return max(stored, self.next_run)

    def add(self, con, item: tuple, result, split: bool = True) -> None:
        """Queue one stored source (``split``: split off its pre-launch lines now, see the
        module docstring; the batch frame's plain files never have any)."""
        from ..derive.runs import split_prelude

        det, base_run = item[1], item[4]
        if det.kind != "env_report":
            last = split_prelude(con, item) if split else base_run
            if last is not None:  # a source without a line takes no id
                self.next_run = max(self.next_run, last + 1)
        self.items.append(item)
        self.results.append(result)

    def flush(self, con) -> None:
        """Derive the queued sources (one call) and fill in their results' run ids."""
        if not self.items:
            return
        from ..derive.runs import finalize_sources

        run_ids = finalize_sources(con, self.items)
        for result, ids in zip(self.results, run_ids):
            result.run_ids = ids
        self.items, self.results = [], []
