"""The small files of a batch stored as one frame (ingest/batch_frame.py) give exactly what
ingesting them one by one gives: every table (ids, resume states, sources rows), over a
folder mixing plain files (SGLang and vLLM lines, time-only and year-less stamps, CRLF, a
last line without its newline, pre-launch chatter at the end, stray body lines, one launch,
unknown text, an over-long line, stray exception and benchmark lines) with files that take the per-file path (two launches, a
traceback at the end, an environment report, a launch after a run's activity, a copy of
another file). Re-ingesting is a no-op; an append after a batched ingest equals the append
after a per-file ingest.
"""
from __future__ import annotations

import os

import pytest

import logsleuth
from logsleuth.ingest import pipeline
from logsleuth.ingest.pipeline import IngestOptions
from support.paths import SAMPLES

from reliability.test_batch_ingest import _one_by_one, _tables

_SG = "[2026-02-06 09:00:{s:02d} TP0] Decode batch. #running-req: 3, #token: {t}, token usage: 0.01, " \
      "gen throughput (token/s): 55.{s}, #queue-req: 0\n"
_VL = "(APIServer pid={p}) INFO {md} 23:59:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, " \
      "Avg generation throughput: 4{s}.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, " \
      "Prefix cache hit rate: 0.0%\n"
_ACCESS = "[2026-02-06 09:00:{s:02d}] INFO:     127.0.0.1:4000{s} - \"POST /generate HTTP/1.1\" 200 OK\n"
_TRACEBACK = ("Traceback (most recent call last):\n  File \"/x/scheduler.py\", line 10, in run\n    step()\n"
              "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def _plain_files() -> dict[str, bytes]:
    files = {}
    for i in range(6):
        files[f"sg_{i}.log"] = (_SG.format(s=i, t=100 + i) + _ACCESS.format(s=i)).encode()
        files[f"vl_{i}.log"] = (_VL.format(p=100 + i, md="12-31", s=i) + _VL.format(p=100 + i, md="01-01", s=i)).encode()
    files["time_only.log"] = b"[09:00:01 TP0] Decode batch. #running-req: 1, #token: 5, gen throughput (token/s): 9.0, " \
                             b"#queue-req: 0\n[09:00:02] a line nobody parses\n"
    files["crlf_partial.log"] = (_SG.format(s=7, t=7).replace("\n", "\r\n") + _SG.format(s=8, t=8).rstrip("\n")).encode()
    files["chatter_at_end.log"] = (_SG.format(s=9, t=9) + "+ python -m sglang.launch_server --port 30000\n"
                                   + "+ export CUDA_VISIBLE_DEVICES=0\n").encode()
    files["blank_lines.log"] = (_SG.format(s=10, t=10) + "\n    indented continuation\n" + _SG.format(s=11, t=11)).encode()
    # an exception line and an error line outside any traceback, a benchmark row outside a block
    # (at the end: fold joins them to the line before, so the open tail starts there)
    files["strays.log"] = (_SG.format(s=14, t=14)
                           + "[2026-02-06 09:00:15] Using default HuggingFace chat template with detected content format: string\n"
                           + "[2026-02-06 09:00:16 TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                           + "RuntimeError: CUDA out of memory\n").encode()
    files["unknown.txt"] = b"2026-02-06 10:00:00 something happened\n2026-02-06 10:00:01 and then more\n"
    files["one_line.log"] = _SG.format(s=12, t=12).encode()
    files["long_line.log"] = (_SG.format(s=13, t=13) + "x" * 70_000 + "\n").encode()
    banner = (SAMPLES / "vllm_eagle3.log").read_bytes().splitlines(keepends=True)
    files["vllm_launch.log"] = b"".join(banner[:40])
    return files


def _per_file_files() -> dict[str, bytes]:
    sg = (SAMPLES / "sglang_baseline.log").read_bytes()
    return {
        "two_launches.log": sg + sg,
        "traceback_at_end.log": (_SG.format(s=20, t=20) + _TRACEBACK).encode(),
        "env_report.txt": (SAMPLES / "env" / "rtxpro6000_check_env.txt").read_bytes(),
        "activity_then_launch.log": _SG.format(s=21, t=21).encode() + sg,
        "zz_copy_of_sg_0.log": _plain_files()["sg_0.log"],
    }


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    for name, data in {**_plain_files(), **_per_file_files()}.items():
        (d / name).write_bytes(data)
        os.utime(d / name, (1_767_000_000, 1_767_000_000))  # 2025-12-29: the vLLM year rolls over
    return d


def _paths(folder) -> list[str]:
    """Every file, named (a folder walk would leave out the unknown text and the chatter)."""
    return sorted(str(p) for p in folder.iterdir())


def _ingest(db: str, paths) -> list:
    con = logsleuth.open_db(db)
    try:
        return logsleuth.ingest_files(con, paths, IngestOptions())
    finally:
        con.close()


def test_batch_frame_equals_one_by_one(folder, tmp_path, monkeypatch):
    paths = _paths(folder)
    ref = str(tmp_path / "ref.duckdb")
    _one_by_one(ref, paths)
    alone = []
    real = pipeline.ingest_source

    def spy(con, path, opts, batched=False, **kw):
        alone.append(os.path.basename(path))
        return real(con, path, opts, batched=batched, **kw)

    monkeypatch.setattr(pipeline, "ingest_source", spy)
    db = str(tmp_path / "batch.duckdb")
    results = _ingest(db, paths)
    # the plain files took the batch path, the others the per-file one
    assert sorted(alone) == sorted(_per_file_files())
    assert [r.status for r in results].count("ingested") == len(paths) - 1
    assert _tables(db) == _tables(ref)


def test_batch_frame_reingest_is_a_no_op(folder, tmp_path):
    paths = _paths(folder)
    db = str(tmp_path / "batch.duckdb")
    _ingest(db, paths)
    before = _tables(db)
    again = _ingest(db, paths)
    assert {r.status for r in again} == {"skipped"}
    assert _tables(db) == before


def _append(folder) -> None:
    for name, more in (("sg_1.log", _SG.format(s=30, t=30)), ("vl_2.log", _VL.format(p=102, md="01-01", s=31)),
                       ("crlf_partial.log", "\r\n" + _SG.format(s=32, t=32)),
                       ("chatter_at_end.log", "[2026-02-06 09:00:33 TP0] a line after the chatter\n"),
                       ("time_only.log", "[09:00:34] one more\n")):
        with open(folder / name, "a", encoding="utf-8", newline="") as fh:
            fh.write(more)


def test_append_after_batch_frame_equals_append_after_one_by_one(folder, tmp_path):
    paths = _paths(folder)
    plain = [p for p in paths if os.path.basename(p) in _plain_files()]
    ref, db = str(tmp_path / "ref.duckdb"), str(tmp_path / "batch.duckdb")
    _one_by_one(ref, plain)
    _ingest(db, plain)
    assert _tables(db) == _tables(ref)
    _append(folder)
    _one_by_one(ref, plain)
    results = _ingest(db, plain)
    assert sum(r.status == "appended" for r in results) == 5
    assert _tables(db) == _tables(ref)


#: real logs of SGLang and vLLM formats from v0.3 / v0.5 on (the plain ones take the batch path;
#: the last one, with a traceback, the per-file path)
_ERAS = ["sglang_v0.3_hms.log", "sglang_v0.4.3_tp2.log", "sglang_v0.4.8_dp.log", "vllm_enforce_eager_awq.log",
         "vllm_moe_untuned.log", "vllm_v0_0.5.4.log", "vllm_v1_0.10.1_workers.log", "vllm_v1_0.12_color.log",
         "vllm_v1_0.8.5_spec.log", "vllm_kv_too_small.log"]


def test_batch_frame_equals_one_by_one_on_era_samples(tmp_path):
    paths = [str(SAMPLES / "eras" / name) for name in _ERAS]
    ref, db = str(tmp_path / "ref.duckdb"), str(tmp_path / "batch.duckdb")
    _one_by_one(ref, paths)
    _ingest(db, paths)
    assert _tables(db) == _tables(ref)


def test_a_file_failing_while_stored_keeps_the_plain_files_before_it(folder, tmp_path, monkeypatch):
    """A per-file member of the batch fails after the plain files before it were stored: the
    batch is rolled back, those files are stored again (batch path) and committed, the error
    goes on, and the database equals ingesting them one by one."""
    from logsleuth.errors import BadInputError

    paths = _paths(folder)
    bad = str(folder / "traceback_at_end.log")
    before = paths[:paths.index(bad)]
    assert any(os.path.basename(p) in _plain_files() for p in before)
    ref = str(tmp_path / "ref.duckdb")
    _one_by_one(ref, before)
    real = pipeline.ingest_source

    def failing(con, path, opts, batched=False, **kw):
        if path == bad:
            con.execute("DELETE FROM sources")  # a write the rollback must undo
            raise BadInputError(f"{path}: corrupt or truncated data (injected)")
        return real(con, path, opts, batched=batched, **kw)

    monkeypatch.setattr(pipeline, "ingest_source", failing)
    db = str(tmp_path / "batch.duckdb")
    with pytest.raises(BadInputError, match="injected"):
        _ingest(db, paths)
    assert _tables(db) == _tables(ref)
