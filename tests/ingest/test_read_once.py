"""A source is opened once: its head is read once for the telemetry sniff, detection and the
stored head (besides the validation read of ``open_source``), and its kind is decided once,
whether it is ingested alone or in a batch (where the batch's read of the whole file serves
as its head)."""
from __future__ import annotations

import pytest

import logsleuth
from logsleuth.ingest import batch_frame, pipeline, read
from logsleuth.ingest.pipeline import IngestOptions
from support.paths import SAMPLES


@pytest.fixture
def counted(monkeypatch):
    calls = {"head": 0, "detect": 0}
    real_head, real_detect = read._read_head, pipeline.detect

    def head(*a, **k):
        calls["head"] += 1
        return real_head(*a, **k)

    def det(*a, **k):
        calls["detect"] += 1
        return real_detect(*a, **k)

    monkeypatch.setattr(read, "_read_head", head)
    monkeypatch.setattr(pipeline, "detect", det)
    monkeypatch.setattr(batch_frame, "detect", det)
    return calls


def test_a_file_alone_reads_its_head_once(counted, tmp_path):
    con = logsleuth.open_db(str(tmp_path / "a.duckdb"))
    try:
        res = pipeline.ingest_source(con, str(SAMPLES / "sglang_eagle3.log"), IngestOptions())
    finally:
        con.close()
    assert res.status == "ingested" and res.run_ids
    # one validation read (open_source), one head for telemetry sniff + detection + stored head
    assert counted == {"head": 2, "detect": 1}


def test_files_of_a_batch_are_detected_once(counted, tmp_path):
    files = [SAMPLES / "sglang_eagle3.log", SAMPLES / "vllm_eagle3.log", SAMPLES / "sglang_baseline.log"]
    con = logsleuth.open_db(str(tmp_path / "b.duckdb"))
    try:
        results = logsleuth.ingest_files(con, [str(f) for f in files], IngestOptions())
    finally:
        con.close()
    assert [r.status for r in results] == ["ingested"] * 3
    assert counted["detect"] == 3
    assert counted["head"] == 3  # the validation reads only: the batch's read serves as the head
