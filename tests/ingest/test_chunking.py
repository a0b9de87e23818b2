"""Chunked ingest == unchunked ingest, and ingest memory is bounded by the chunk size.

The log comes from bench/generate.py (seeded, so always the same bytes): an SGLang TP8 log
with speculative decode lines, an ASGI traceback, a benchmark block, a crash traceback
ending the first launch and a second launch. Chunk sizes are chosen so that a chunk
boundary falls inside the traceback, at the run switch and inside the benchmark block;
one more ingest uses tiny chunks (a boundary every few dozen lines).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import logsleuth
from logsleuth.db import schema
from logsleuth.ingest.pipeline import IngestOptions, ingest_source

from support.paths import ROOT  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402

BIG = 64 << 20  # one chunk for the whole file

#: columns that legitimately differ between two ingests of the same file
VOLATILE = {"sources": {"ingested_at"}}


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("chunk") / "gen_sglang.log", "sglang", 400_000, seed=7)


@pytest.fixture(scope="module")
def whole(log, tmp_path_factory) -> dict:
    """The tables of the unchunked ingest (computed once for the module)."""
    return _tables(log, BIG, tmp_path_factory.mktemp("whole"))


def _offset_of(data: bytes, needle: bytes, skip_lines: int = 0) -> int:
    """Byte offset of the line ``skip_lines`` lines after the last line holding ``needle``
    (the last occurrence: a big first chunk keeps the number of chunks, and the time, low)."""
    pos = data.rindex(needle)
    pos = data.rfind(b"\n", 0, pos) + 1
    for _ in range(skip_lines):
        pos = data.index(b"\n", pos) + 1
    return pos


def _boundary_chunk(data: bytes, offset: int) -> int:
    """A chunk size whose first chunk ends in the middle of the line starting at ``offset``
    (so the boundary falls right before that line)."""
    return offset + 3


def _tables(path: Path, chunk_bytes: int, tmp_path: Path) -> dict:
    db = tmp_path / f"c{chunk_bytes}.duckdb"
    con = logsleuth.open_db(str(db))
    try:
        ingest_source(con, str(path), IngestOptions(chunk_bytes=chunk_bytes))
        return _dump(con)
    finally:
        con.close()


def _dump(con) -> dict:
    out = {}
    for table in schema.PER_SOURCE_TABLES:
        cols = [c for c in schema.columns(table) if c not in VOLATILE.get(table, set())]
        sel = ", ".join(f'"{c}"' for c in cols)
        out[table] = con.execute(f"SELECT {sel} FROM {table} ORDER BY ALL").fetchall()
    return out


def _assert_same(a: dict, b: dict, label: str) -> None:
    for table in a:
        assert len(a[table]) == len(b[table]), f"{label}: {table} row count {len(a[table])} != {len(b[table])}"
        for ra, rb in zip(a[table], b[table]):
            assert ra == rb, f"{label}: {table} differs:\n  {ra}\n  {rb}"


def test_generated_log_has_the_structures(log):
    data = log.read_bytes()
    assert data.count(b"server_args=ServerArgs(") == 2  # two launches
    assert data.count(b"Serving Benchmark Result") == 2  # one per launch
    assert b"Scheduler hit an exception: Traceback" in data
    assert b"Serving Benchmark Result" in data
    assert b"accept len: " in data


@pytest.mark.parametrize("where", ["traceback", "run_switch", "bench_block"])
def test_chunked_equals_unchunked(log, whole, tmp_path, where):
    data = log.read_bytes()
    if where == "traceback":  # 4 lines into the crash traceback
        chunk = _boundary_chunk(data, _offset_of(data, b"Scheduler hit an exception", 4))
    elif where == "run_switch":  # the second launch's first line
        second = data.index(b"server_args=ServerArgs(", data.index(b"server_args=ServerArgs(") + 1)
        chunk = _boundary_chunk(data, data.rfind(b"\n", 0, second) + 1)
    else:  # 5 rows into the (second launch's) benchmark block
        chunk = _boundary_chunk(data, _offset_of(data, b"Serving Benchmark Result", 5))
    assert chunk < len(data)
    assert whole["lines_other"] and whole["lines_bulk"] and whole["decode_stats"] and whole["bench_results"] and whole["errors"]
    assert len(whole["runs"]) == 2
    _assert_same(whole, _tables(log, chunk, tmp_path), f"chunk_bytes={chunk} ({where})")


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_parallel_equals_serial(log, whole, tmp_path, jobs, monkeypatch):
    """Parse workers change nothing: with 48 KiB chunks (~40 of them, boundaries inside the
    traceback and the benchmark blocks) and 1, 2 or 3 parse processes, every table, id and
    line is that of the one-chunk ingest."""
    import importlib

    workers = importlib.import_module("logsleuth.ingest.workers")
    sent: list[int] = []

    class CountingPool(workers.ProcessPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            sent.append(1)
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", CountingPool)
    chunk = 48 * 1024
    assert log.stat().st_size > 2 * chunk  # large enough for the parallel path
    db = tmp_path / f"j{jobs}.duckdb"
    con = logsleuth.open_db(str(db))
    try:
        ingest_source(con, str(log), IngestOptions(chunk_bytes=chunk, jobs=jobs))
        got = _dump(con)
    finally:
        con.close()
    _assert_same(whole, got, f"jobs={jobs}")
    # jobs > 1 parsed every chunk in worker processes; jobs = 1 started none
    assert (len(sent) >= log.stat().st_size // chunk) if jobs > 1 else not sent


def test_ingest_memory_is_bounded_by_the_chunk(log, whole, tmp_path, monkeypatch):
    """No parse step ever sees more than a chunk plus the carried tail of a record: the whole
    file is never materialised (checked on the frames the pipeline hands to the parser).
    With 32 KiB chunks (a boundary every ~200 lines) the tables are still those of the
    unchunked ingest."""
    import importlib

    import polars as pl

    workers = importlib.import_module("logsleuth.ingest.workers")

    seen: list[tuple[int, int]] = []
    real = workers.parse_frame

    def spy(frame, *a, **kw):
        seen.append((frame.height, int(frame.select(pl.col("raw").str.len_bytes().sum()).item())))
        return real(frame, *a, **kw)

    monkeypatch.setattr(workers, "parse_frame", spy)
    chunk = 32 * 1024
    size = log.stat().st_size
    assert size > 8 * chunk
    con = logsleuth.open_db(str(tmp_path / "mem.duckdb"))
    try:
        res = ingest_source(con, str(log), IngestOptions(chunk_bytes=chunk, jobs=1))  # parsed in this process
        n_file = log.read_bytes().count(b"\n")
        assert res.n_lines == n_file
        assert con.execute("SELECT count(*) FROM lines").fetchone()[0] == n_file
        _assert_same(whole, _dump(con), f"chunk_bytes={chunk}")
    finally:
        con.close()
    assert len(seen) >= size // chunk
    # a chunk holds at most chunk_bytes (+ the unfinished line carried into it); a record
    # cut by a boundary (traceback, bench block) is carried whole into the next chunk
    assert max(b for _, b in seen) <= 2 * chunk + 64 * 1024
    assert sum(h for h, _ in seen) < 1.5 * n_file
