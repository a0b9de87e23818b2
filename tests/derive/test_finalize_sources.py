"""Deriving the runs of many sources in one ``finalize_sources`` call gives exactly the rows
that deriving them one by one (as each file is stored) gives: runs, fatal flags, primary
ranks, templates, spec rows, environment reports (a report between logs refreshes the GPU
context of the runs stored before it, and gives its own to the ones after it)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import logsleuth
from logsleuth.ingest import pipeline
from logsleuth.ingest.pipeline import IngestOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snapshot  # noqa: E402
from deferred import REAL_FINALIZE, store_without_deriving  # noqa: E402

S = snapshot.SAMPLES
# logs of several engines and endings (CI preambles, tracebacks, NPU, DP attention, spec
# decoding), an excerpt without a launch, a benchmark printout, two environment reports in the
# middle (nearest by folder to the top-level logs, not to truth/ or eras/)
FILES = [S / "vllm_eagle3.log", *sorted((S / "truth").iterdir())[:9], S / "env" / "rtxpro6000_nvidia-smi.txt",
         S / "bench_sglang_tuned_v1_c1.txt", *sorted((S / "truth").iterdir())[9:], S / "sglang_eagle3.log",
         S / "env" / "rtxpro6000_collect_env.txt", *sorted((S / "eras").iterdir())[:6]]


def _one_by_one(db: Path) -> dict:
    con = logsleuth.open_db(str(db))
    try:
        for f in FILES:
            pipeline.ingest_source(con, str(f), IngestOptions())
        return snapshot.snapshot(con)
    finally:
        con.close()


def _in_one_call(db: Path, monkeypatch) -> tuple[dict, int]:
    """Store every file without deriving its runs, then derive all of them with one
    finalize_sources call."""
    con = logsleuth.open_db(str(db))
    try:
        items = store_without_deriving(con, FILES, monkeypatch)
        assert len(items) == len(FILES)
        con.execute("BEGIN TRANSACTION")
        run_ids = REAL_FINALIZE(con, items)
        con.execute("COMMIT")
        return snapshot.snapshot(con), sum(len(r) for r in run_ids)
    finally:
        con.close()


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        tmp = tmp_path_factory.mktemp("finalize")
        single = _one_by_one(tmp / "single.duckdb")
        batched, n_runs = _in_one_call(tmp / "batched.duckdb", mp)
    finally:
        mp.undo()
    return single, batched, n_runs


def test_the_files_have_runs_reports_and_templates(both):
    single, _, n_runs = both
    assert n_runs == len(single["runs"]) >= len(FILES) - 2  # every log has a run; the reports none
    assert len(single["env_reports"]) == 2 and single["templates"] and single["fatal_errors"]
    # the top-level log derived after the reports took its GPU from them, and so did the one
    # before them (refreshed when the report arrived)
    gpu = {r["source"]: r["gpu_source"] or "" for r in single["runs"]}
    assert gpu["vllm_eagle3.log"].startswith("env_report") and gpu["sglang_eagle3.log"].startswith("env_report")


@pytest.mark.parametrize("table", sorted(set(snapshot._FULL) | set(snapshot._DIGEST)))
def test_one_call_equals_one_by_one(both, table):
    single, batched, _ = both
    assert batched[table] == single[table], f"{table} differs"
