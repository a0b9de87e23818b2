"""Run derivation costs a fixed number of statements per finalize_sources call, whatever the
number of sources and runs: 40 small logs take as many as 4 (a statement per run or per
source would make a folder of thousands of small files, or a file of thousands of launches,
pay milliseconds per run)."""
from __future__ import annotations

import sys
from pathlib import Path

import logsleuth

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deferred import REAL_FINALIZE, store_without_deriving  # noqa: E402


def _log(i: int) -> str:
    """A two-line SGLang (even i) or vLLM (odd i) log, distinct for each i."""
    if i % 2 == 0:
        return (f"[2026-02-06 09:00:{i % 60:02d} TP0] Decode batch. #running-req: {1 + i % 7}, #token: {100 + i}, "
                f"token usage: 0.0{i % 10}, gen throughput (token/s): {50 + i}.5, #queue-req: 0\n"
                f"[2026-02-06 09:00:{i % 60:02d}] INFO:     127.0.0.1:{40000 + i} - "
                f"\"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")
    return (f"(APIServer pid={1000 + i}) INFO 02-06 09:00:{i % 60:02d} [loggers.py:123] Engine 000: "
            f"Avg prompt throughput: {i}.0 tokens/s, Avg generation throughput: {40 + i}.5 tokens/s, "
            f"Running: {1 + i % 5} reqs, Waiting: 0 reqs, GPU KV cache usage: {i % 9}.5%, Prefix cache hit rate: 0.0%\n"
            f"(APIServer pid={1000 + i}) INFO:     127.0.0.1:{40000 + i} - \"POST /v1/completions HTTP/1.1\" 200 OK\n")


class _Counting:
    """A connection that counts the statements it runs."""

    def __init__(self, con):
        self.con, self.statements = con, 0

    def execute(self, *args, **kwargs):
        self.statements += 1
        return self.con.execute(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.con, name)


def _statements(tmp_path: Path, n: int, monkeypatch) -> tuple[int, int]:
    folder = tmp_path / f"logs_{n}"
    folder.mkdir()
    files = []
    for i in range(n):
        files.append(folder / f"server_{i:03d}.log")
        files[-1].write_text(_log(i), encoding="utf-8")
    con = logsleuth.open_db(str(tmp_path / f"db_{n}.duckdb"))
    try:
        items = store_without_deriving(con, files, monkeypatch)
        counting = _Counting(con)
        con.execute("BEGIN TRANSACTION")
        run_ids = REAL_FINALIZE(counting, items)
        con.execute("COMMIT")
        return counting.statements, sum(len(r) for r in run_ids)
    finally:
        con.close()


def test_statements_do_not_grow_with_sources(tmp_path, monkeypatch):
    few, few_runs = _statements(tmp_path, 4, monkeypatch)
    many, many_runs = _statements(tmp_path, 40, monkeypatch)
    assert (few_runs, many_runs) == (4, 40)
    assert many == few, f"{few} statements for 4 sources, {many} for 40"
