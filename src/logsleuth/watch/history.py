"""What earlier runs of the same model took: the yardstick of a live start.

Contract: ``History.load(con)`` reads the runs already in the database (query
``queries/app/watch_history.sql``) once, before the watch stores anything; the tracker
then asks, per model and TP size, for the previous run's phase time, the best
single-stream decode and the weight size (GB) that turns a shard rate into GB/s. Runs
match on the model name (the part after the last ``/``, so a local path and a hub id of
the same model meet) and, when both sides know it, the TP size.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: tracker phase -> runs column holding the previous run's time for it
PHASE_COLUMN = {"loading_weights": "weight_load_s", "cuda_graphs": "cuda_graph_capture_s"}


def model_key(model: str | None) -> str:
    return (model or "").rstrip("/").rsplit("/", 1)[-1].lower()


@dataclass
class History:
    rows: list[dict] = field(default_factory=list)

    @classmethod
    def load(cls, con) -> "History":
        from ..db.queries import rows

        return cls(rows(con, "watch_history"))

    gpu: dict = field(default_factory=dict)  # model key -> GPU name of the live run, once learned

    def matching(self, model: str | None, tp_size: int | None) -> list[dict]:
        """Earlier runs of this model (and TP size, and GPU once the live run's is known:
        runs on other hardware only when none on the same)."""
        key = model_key(model)
        if not key:
            return []
        rows = [r for r in self.rows if model_key(r.get("model")) == key
                and (tp_size is None or r.get("tp_size") is None or r.get("tp_size") == tp_size)]
        gpu = self.gpu.get(key)
        same = [r for r in rows if gpu and r.get("gpu_name") == gpu]
        return same or rows

    def previous(self, model, tp_size, column: str):
        vals = [r[column] for r in self.matching(model, tp_size) if r.get(column)]
        return float(vals[-1]) if vals else None

    def phase_seconds(self, model, tp_size, phase: str) -> float | None:
        column = PHASE_COLUMN.get(phase)
        return self.previous(model, tp_size, column) if column else None

    def time_to_ready(self, model, tp_size) -> float | None:
        return self.previous(model, tp_size, "time_to_ready_s")

    def weights_gb(self, model, tp_size) -> float | None:
        return self.previous(model, tp_size, "weights_gb")

    def best_single_stream(self, model, tp_size) -> float | None:
        vals = [float(r["single_stream_tok_s"]) for r in self.matching(model, tp_size) if r.get("single_stream_tok_s")]
        return max(vals) if vals else None
