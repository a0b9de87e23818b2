"""Many small files share one transaction per batch (ingest/batch.py), with the semantics of
one transaction per file: the same tables (ids included) as ingesting the files one by one; a
bad file in a batch rolls back alone (the files before it are kept, nothing after it is
stored); a telemetry file in a batch gets its own transaction; re-ingesting is a no-op; Ctrl-C
in a batch keeps only the batches committed before it; a full disk puts the database back as
it was before the batch.
"""
from __future__ import annotations

import duckdb
import pytest

import logsleuth
from logsleuth.intake import ingest_options
from logsleuth.db import diskfull
from logsleuth.errors import BadInputError
from logsleuth.ingest import batch as batch_mod
from logsleuth.ingest import batch_frame
from logsleuth.ingest import pipeline
from logsleuth.ingest.pipeline import IngestOptions
from support.paths import SAMPLES

#: columns that differ between two ingests of the same files by nature (wall-clock stamps)
CLOCK_COLUMNS = {("sources", "ingested_at"), ("schema_migrations", "applied_at")}


def _small_log(i: int) -> str:
    if i % 3 == 0:
        return (f"[2026-02-06 09:00:{i % 60:02d} TP0] Decode batch. #running-req: {1 + i % 7}, #token: {100 + i}, "
                f"token usage: 0.0{i % 10}, gen throughput (token/s): {50 + i}.5, #queue-req: 0\n"
                f"[2026-02-06 09:00:{i % 60:02d}] INFO:     127.0.0.1:{40000 + i} - \"POST /generate HTTP/1.1\" 200 OK\n")
    if i % 3 == 1:
        return (f"(APIServer pid={1000 + i}) INFO 02-06 09:00:{i % 60:02d} [loggers.py:123] Engine 000: "
                f"Avg prompt throughput: {i}.0 tokens/s, Avg generation throughput: {40 + i}.0 tokens/s, Running: 1 reqs, "
                f"Waiting: 0 reqs, GPU KV cache usage: 1.{i}%, Prefix cache hit rate: 0.0%\n"
                f"(APIServer pid={1000 + i}) INFO:     127.0.0.1:{40000 + i} - \"POST /v1/completions HTTP/1.1\" 200 OK\n")
    return (f"[2026-02-06 09:01:{i % 60:02d} TP0] Load weight begin. avail mem=70.{i} GB\n"
            f"[2026-02-06 09:01:{i % 60:02d} TP0] a message nobody parses, number {i}\n")


@pytest.fixture
def folder(tmp_path):
    """Small generated logs, three real samples (launches, runs, config, errors) and a
    telemetry file, in one folder."""
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(24):
        (d / f"small_{i:03d}.log").write_text(_small_log(i), encoding="utf-8")
    for name in ("sglang_eagle3.log", "vllm_eagle3.log", "sglang_baseline.log"):
        (d / name).write_bytes((SAMPLES / name).read_bytes())
    (d / "gpu.csv").write_bytes((SAMPLES / "telemetry" / "nvidia_smi_lms.csv").read_bytes())
    return d


def _tables(db: str) -> dict[str, list]:
    con = duckdb.connect(db, read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                           "WHERE table_schema = 'main' AND table_type = 'BASE TABLE'").fetchall()]
        out = {}
        for t in sorted(names):
            cols = [r[0] for r in con.execute(f"DESCRIBE \"{t}\"").fetchall() if (t, r[0]) not in CLOCK_COLUMNS]
            sel = ", ".join(f'"{c}"' for c in cols)
            out[t] = con.execute(f'SELECT {sel} FROM "{t}" ORDER BY ALL').fetchall()
        return out
    finally:
        con.close()


def _one_by_one(db: str, paths: list[str]) -> list:
    con = logsleuth.open_db(db)
    try:
        opts = ingest_options(IngestOptions())  # with the telemetry store, as the library's ingest has it
        return [pipeline.ingest_source(con, p, opts) for p in paths]
    finally:
        con.close()


def _batched(db: str, paths, **kw) -> list:
    con = logsleuth.open_db(db)
    try:
        return logsleuth.ingest_files(con, paths, IngestOptions(), **kw)
    finally:
        con.close()


def test_batched_equals_one_by_one_table_by_table(folder, tmp_path, monkeypatch):
    paths = logsleuth.expand_paths([str(folder)])
    assert len(paths) == 28
    monkeypatch.setattr(batch_mod, "BATCH_FILES", 10)  # several batches, the telemetry file inside one
    one = _one_by_one(str(tmp_path / "one.duckdb"), paths)
    batched = _batched(str(tmp_path / "batched.duckdb"), [str(folder)])
    assert [(r.path, r.status, r.source_id, r.run_ids) for r in batched] == \
        [(r.path, r.status, r.source_id, r.run_ids) for r in one]
    a, b = _tables(str(tmp_path / "one.duckdb")), _tables(str(tmp_path / "batched.duckdb"))
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
    assert len(a["runs"]) >= 3 and len(a["gpu_samples"]) > 0
    # re-ingesting the folder is a no-op
    again = _batched(str(tmp_path / "batched.duckdb"), [str(folder)])
    assert {r.status for r in again} == {"skipped"}
    assert _tables(str(tmp_path / "batched.duckdb")) == b


def test_a_bad_file_in_a_batch_rolls_back_alone(folder, tmp_path):
    paths = logsleuth.expand_paths([str(folder)])[:12]
    bad = folder / "small_005.log"
    bad.write_bytes(b"")  # empty: refused
    db = str(tmp_path / "b.duckdb")
    seen = []
    with pytest.raises(BadInputError):
        _batched(db, paths, on_result=seen.append)
    before = paths[:paths.index(str(bad))]
    assert [r.path for r in seen] == before  # reported once committed
    con = duckdb.connect(db, read_only=True)
    try:
        stored = [r[0] for r in con.execute("SELECT path FROM sources ORDER BY source_id").fetchall()]
    finally:
        con.close()
    assert stored == before
    # the same files one by one leave the same database
    ref = str(tmp_path / "ref.duckdb")
    _one_by_one(ref, before)
    assert _tables(db) == _tables(ref)


def test_interrupt_in_a_batch_keeps_the_batches_committed_before(folder, tmp_path, monkeypatch):
    from logsleuth import interrupts

    monkeypatch.setattr(batch_mod, "BATCH_FILES", 5)
    monkeypatch.setattr(interrupts, "_COMMITTED", [])  # this process's earlier tests committed too
    paths = [p for p in logsleuth.expand_paths([str(folder)]) if "small_" in p]
    real = batch_frame.open_source
    calls = []

    def interrupted(path):
        calls.append(path)
        if len(calls) == 8:  # the third file of the second batch
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(batch_frame, "open_source", interrupted)
    db = str(tmp_path / "i.duckdb")
    with pytest.raises(KeyboardInterrupt):
        _batched(db, paths)
    assert "committed before it: 5 files" in interrupts.interrupt_message(KeyboardInterrupt())
    con = duckdb.connect(db, read_only=True)
    try:
        assert [r[0] for r in con.execute("SELECT path FROM sources ORDER BY source_id").fetchall()] == paths[:5]
    finally:
        con.close()


def test_full_disk_in_a_batch_puts_the_database_back(folder, tmp_path, monkeypatch):
    import os

    db = str(tmp_path / "d.duckdb")
    paths = [p for p in logsleuth.expand_paths([str(folder)]) if "small_" in p]
    _batched(db, paths[:3])
    size = os.path.getsize(db)

    def exploding(*args, **kw):  # the store of the batch's lines
        raise duckdb.IOException('Could not write file "x.duckdb": No space left on device')

    monkeypatch.setattr(batch_frame, "store_chunk", exploding)
    con = logsleuth.open_db(db)
    with pytest.raises(diskfull.DiskFullError, match=f"a batch of {len(paths) - 3} small files"):
        logsleuth.ingest_files(con, paths[3:])
    assert os.path.getsize(db) == size
    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 3
    finally:
        con.close()
