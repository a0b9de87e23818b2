"""Incremental append: a file ingested while it grows gives the tables of one ingest of the
whole file (same rows, same ids, byte for byte); a truncated or replaced file is a new
source; rotated sets are read oldest first and a rotated file continues its source.

The growing file is cut at awkward places: inside a line (a partial last line), inside a
traceback, inside a benchmark block and right before the second launch, so that every kind
of open tail is rebuilt by the next append.
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

import logsleuth
from logsleuth.db import schema
from logsleuth.ingest.pipeline import IngestOptions, ingest_source
from logsleuth.ingest.source import order_rotated, rotation_family

from support.paths import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402

#: columns that legitimately differ between two ingests of the same file
VOLATILE = {"sources": {"ingested_at"}}


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


def _comparable(d: dict) -> dict:
    """Drop what names the file read (its path) and the id floor of the resume state."""
    out = dict(d)
    states = []
    for row in d["source_state"]:
        st = json.loads(row[5])
        for key in ("real_path", "family"):
            st.pop(key)
        st["runs"].pop("floor")
        states.append((row[0], row[3], row[4], st))
    out["source_state"] = states
    out["sources"] = [r[:1] + r[3:] for r in d["sources"]]  # (path and name)
    return out


def _one_shot(path: Path, db: Path, chunk: int) -> dict:
    con = logsleuth.open_db(str(db))
    try:
        ingest_source(con, str(path), IngestOptions(chunk_bytes=chunk))
        return _dump(con)
    finally:
        con.close()


def _grow(data: bytes, cuts: list[int], path: Path, db: Path, chunk: int) -> tuple[dict, list]:
    """Write ``data`` to ``path`` in pieces ending at ``cuts``, ingesting after each."""
    con = logsleuth.open_db(str(db))
    statuses = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        written = 0
        for end in cuts + [len(data)]:
            with open(path, "ab") as fh:
                fh.write(data[written:end])
            written = end
            res = ingest_source(con, str(path), IngestOptions(chunk_bytes=chunk))
            statuses.append(res.status)
        return _dump(con), statuses
    finally:
        con.close()


def _cuts(data: bytes) -> list[int]:
    """Four cut points: mid-line, inside the crash traceback, inside the benchmark block,
    at the line before the second launch (offsets in increasing order)."""
    tb = data.rindex(b"Scheduler hit an exception")
    tb = data.index(b"\n", data.index(b"\n", tb) + 1) + 1 + 7  # 2 lines in, 7 bytes into a line
    bench = data.index(b"Serving Benchmark Result")
    bench = data.index(b"\n", data.index(b"\n", bench) + 1) + 1  # after 2 rows of the block
    second = data.index(b"server_args=ServerArgs(", data.index(b"server_args=ServerArgs(") + 1)
    second = data.rfind(b"\n", 0, second) + 1
    return sorted({len(data) // 7 + 11, bench, tb, second})


@pytest.fixture(scope="module")
def sglang_log(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("inc") / "gen_sglang.log", "sglang", 300_000, seed=11)


@pytest.mark.parametrize("chunk", [64 << 20, 24 * 1024])
def test_five_growing_pieces_equal_one_shot(sglang_log, tmp_path, chunk):
    data = sglang_log.read_bytes()
    cuts = _cuts(data)
    assert len(cuts) == 4 and all(0 < c < len(data) for c in cuts)
    whole = _one_shot(sglang_log, tmp_path / "whole.duckdb", chunk)
    assert len(whole["runs"]) == 2 and whole["errors"] and whole["bench_results"]
    grown, statuses = _grow(data, cuts, tmp_path / "gen_sglang.log", tmp_path / "grown.duckdb", chunk)
    assert statuses == ["ingested"] + ["appended"] * 4
    _assert_same(_comparable(whole), _comparable(grown), f"chunk_bytes={chunk}")


def test_vllm_and_sample_grow_like_one_shot(tmp_path):
    """A vLLM log (no year in its timestamps, process tags, a restart) and a real-format
    sample, each in five pieces cut at byte offsets that fall inside lines."""
    # the sample is copied first: time-only stamps take their date from the file's mtime, and
    # the checkout's copy may be from another day than the grown file written now
    sample = tmp_path / "sglang_tuned_v1.log"
    sample.write_bytes((SAMPLES / "sglang_tuned_v1.log").read_bytes())
    logs = [generate(tmp_path / "gen_vllm.log", "vllm", 200_000, seed=5), sample]
    for log in logs:
        data = log.read_bytes()
        cuts = [len(data) * k // 5 + 3 for k in range(1, 5)]
        whole = _one_shot(log, tmp_path / f"{log.stem}_whole.duckdb", 32 * 1024)
        grown_path = tmp_path / "grow" / log.name
        grown_path.parent.mkdir(exist_ok=True)
        grown, statuses = _grow(data, cuts, grown_path, tmp_path / f"{log.stem}_grown.duckdb", 32 * 1024)
        assert statuses == ["ingested"] + ["appended"] * 4
        _assert_same(_comparable(whole), _comparable(grown), log.name)


def test_append_reads_only_the_new_bytes(tmp_path, monkeypatch):
    import importlib

    pipeline = importlib.import_module("logsleuth.ingest.pipeline")
    data = (SAMPLES / "sglang_tuned_v1.log").read_bytes()
    path = tmp_path / "live.log"
    half = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:half])
    con = logsleuth.open_db(str(tmp_path / "db.duckdb"))
    try:
        ingest_source(con, str(path), IngestOptions())
        starts = []
        real = pipeline.iter_chunks

        def spy(src, chunk_bytes=None):
            starts.append(src.start_offset)
            yield from real(src, chunk_bytes)

        monkeypatch.setattr(pipeline, "iter_chunks", spy)
        with open(path, "ab") as fh:
            fh.write(data[half:])
        res = ingest_source(con, str(path), IngestOptions())
        assert res.status == "appended"
        assert starts and half - 64 * 1024 < starts[0] <= half  # at most the open tail is read again
        assert res.n_lines < data[half:].count(b"\n") + 50
        n = con.execute("SELECT count(*) FROM lines").fetchone()[0]
        assert n == data.count(b"\n")
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
        # nothing new: skipped (same content)
        assert ingest_source(con, str(path), IngestOptions()).status == "skipped"
    finally:
        con.close()


def test_truncated_or_replaced_file_is_a_new_source(tmp_path):
    data = (SAMPLES / "sglang_tuned_v1.log").read_bytes()
    other = (SAMPLES / "sglang_baseline.log").read_bytes()
    path = tmp_path / "server.log"
    path.write_bytes(data)
    con = logsleuth.open_db(str(tmp_path / "db.duckdb"))
    try:
        assert ingest_source(con, str(path), IngestOptions()).status == "ingested"
        path.write_bytes(data[: len(data) // 3])  # truncated: the old end is gone
        res = ingest_source(con, str(path), IngestOptions())
        assert res.status == "ingested" and res.source_id == 2
        path.write_bytes(other)  # replaced: another head
        res = ingest_source(con, str(path), IngestOptions())
        assert res.status == "ingested" and res.source_id == 3
        per_source = con.execute("SELECT source_id, count(*) FROM lines GROUP BY 1 ORDER BY 1").fetchall()
        assert per_source == [(1, data.count(b"\n")), (2, data[: len(data) // 3].count(b"\n") + 1),
                              (3, other.count(b"\n"))]
    finally:
        con.close()


def test_rotated_sets_are_ordered_oldest_first():
    paths = ["a/other.log", "logs/server.log", "logs/server.log.1", "logs/server.log.10", "logs/server.log.2.gz",
             "b.txt"]
    assert order_rotated(paths) == ["a/other.log", "logs/server.log.10", "logs/server.log.2.gz",
                                    "logs/server.log.1", "logs/server.log", "b.txt"]
    assert rotation_family("x/server.log.3.gz") == rotation_family("x/server.log")
    assert rotation_family("x/run-1.log") != rotation_family("x/run-2.log")
    assert order_rotated(["run-2.log", "run-1.log"]) == ["run-2.log", "run-1.log"]


def test_rotated_file_continues_its_source(tmp_path):
    """server.log is ingested, grows, is rotated to server.log.1 (then compressed to
    server.log.1.gz) and a new server.log starts: the rotated file continues the first
    source (only its new lines are read), the new file is a new source."""
    data = (SAMPLES / "sglang_tuned_v1.log").read_bytes()
    newer = (SAMPLES / "sglang_baseline.log").read_bytes()
    logs = tmp_path / "logs"
    logs.mkdir()
    half = data.index(b"\n", len(data) // 2) + 1
    (logs / "server.log").write_bytes(data[:half])
    con = logsleuth.open_db(str(tmp_path / "db.duckdb"))
    try:
        first = logsleuth.ingest_files(con, [str(logs)])
        assert [r.status for r in first] == ["ingested"]
        (logs / "server.log").rename(logs / "server.log.1")
        with gzip.open(logs / "server.log.1.gz", "wb") as fh:
            fh.write(data)
        (logs / "server.log.1").unlink()
        (logs / "server.log").write_bytes(newer)
        res = logsleuth.ingest_files(con, [str(logs)])
        assert [(Path(r.path).name, r.status, r.source_id) for r in res] == [
            ("server.log.1.gz", "appended", 1), ("server.log", "ingested", 2)]
        counts = con.execute("SELECT source_id, count(*) FROM lines GROUP BY 1 ORDER BY 1").fetchall()
        assert counts == [(1, data.count(b"\n")), (2, newer.count(b"\n"))]
    finally:
        con.close()


@pytest.mark.parametrize("where", ["mid_line", "after_open", "after_middle"])
def test_prompt_continued_across_the_resume_point_stays_masked(tmp_path, where):
    """A multi-line prompt record cut by the end of a piece: the append starts its redaction
    inside the record, so the continued lines are masked as in one ingest of the whole file."""
    record = (b"(APIServer pid=23) INFO 02-04 15:00:01 [logger.py:41] Received request cmpl-9: prompt: 'Tell me\n"
              b"CONTINUED_PROMPT_WORDS in the middle\n"
              b"and the end', params: SamplingParams(n=1), prompt_token_ids: None, lora_request: None.\n")
    base = (SAMPLES / "vllm_eagle3.log").read_bytes()
    data = base + record + b"(APIServer pid=23) INFO 02-04 15:00:02 [logger.py:41] done\n"
    at = {"mid_line": record.index(b"CONTINUED") + 5, "after_open": record.index(b"\n") + 1,
          "after_middle": record.index(b"and the end")}[where]
    whole = _one_shot(_write(tmp_path / "one" / "p.log", data), tmp_path / "one.duckdb", 1 << 20)
    grown, statuses = _grow(data, [len(base) + at], tmp_path / "grow" / "p.log", tmp_path / "grown.duckdb", 1 << 20)
    assert statuses == ["ingested", "appended"]
    assert not [r for r in grown["lines_other"] if "CONTINUED_PROMPT" in str(r)]
    _assert_same(_comparable(whole), _comparable(grown), where)


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
