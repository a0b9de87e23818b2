"""Files too large for the batch frame but under ``batch.SMALL_FILE_BYTES`` (a rotated set, a
fleet's day cut into files of a few MB) share a batch too: each is stored through the chunk
path inside the batch's transaction, and the run derivation of all the batch's new sources is
one ``finalize_sources`` call (ingest/deferred.py). The tables, ids included, are those of
ingesting the files one by one, including a file whose lines before its launch are the tail
of an earlier run (split off under its own id) followed by more files.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import logsleuth
from logsleuth.derive import runs as derive_runs
from logsleuth.ingest.pipeline import IngestOptions
from reliability.test_batch_ingest import _tables
from support.paths import SAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from generate import generate  # noqa: E402
from many_files import cut  # noqa: E402


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> list[str]:
    """A generated SGLang log cut into 5 files at line boundaries (they start mid-run), and
    among them a file whose decode lines of an earlier launch come before a launch of its own
    (a rotated file: they are split off as a run of their own)."""
    tmp = tmp_path_factory.mktemp("chunked")
    log = generate(tmp / "gen.log", "sglang", 700_000, seed=3)
    paths = [str(p) for p in cut(log, 5, tmp / "parts")]
    tail = b"".join(Path(paths[0]).read_bytes().splitlines(keepends=True)[-40:])
    rotated = tmp / "parts" / "part_001b.log"
    rotated.write_bytes(tail + (SAMPLES / "sglang_baseline.log").read_bytes())
    return paths[:2] + [str(rotated)] + paths[2:]


def test_parts_take_the_chunk_path_in_one_batch(parts, tmp_path, monkeypatch):
    calls = []
    real = derive_runs.finalize_sources

    def counting(con, items):
        calls.append(len(items))
        return real(con, items)

    monkeypatch.setattr(derive_runs, "finalize_sources", counting)
    con = logsleuth.open_db(str(tmp_path / "b.duckdb"))
    try:
        # a chunk of 64 KiB: the parts are several chunks long, so none is plain
        results = logsleuth.ingest_files(con, parts, IngestOptions(chunk_bytes=64 << 10))
    finally:
        con.close()
    assert [r.status for r in results] == ["ingested"] * len(parts)
    assert calls == [len(parts)]  # one derivation for the whole batch
    assert all(r.run_ids for r in results)


def test_batched_parts_equal_one_by_one(parts, tmp_path):
    opts = IngestOptions(chunk_bytes=64 << 10)
    one = str(tmp_path / "one.duckdb")
    con = logsleuth.open_db(one)
    try:
        from logsleuth.ingest import pipeline

        single = [pipeline.ingest_source(con, p, opts) for p in parts]
    finally:
        con.close()
    db = str(tmp_path / "batched.duckdb")
    con = logsleuth.open_db(db)
    try:
        batched = logsleuth.ingest_files(con, parts, opts)
    finally:
        con.close()
    assert [(r.source_id, r.run_ids) for r in batched] == [(r.source_id, r.run_ids) for r in single]
    # the second launch's part splits off the tail of the first run under an id of its own
    assert len(single[2].run_ids) == 2
    a, b = _tables(one), _tables(db)
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
