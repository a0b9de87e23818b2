"""``ingest`` prints a line per file and a block per run for a few files; above
``INGEST_DETAIL`` files or runs it prints totals instead, and JSON still holds every run."""
from __future__ import annotations

import json

from logsleuth.cli.output import INGEST_DETAIL
from support.cli import run_in_process


def _folder(tmp_path, n: int):
    d = tmp_path / f"logs_{n}"
    d.mkdir()
    for i in range(n):
        (d / f"s_{i:03d}.log").write_text(
            f"[2026-02-06 09:00:{i % 60:02d} TP0] Decode batch. #running-req: 1, #token: {i}, token usage: 0.01, "
            f"gen throughput (token/s): {40 + i}.0, #queue-req: 0\n", encoding="utf-8")
    return d


def test_few_files_print_a_line_per_file_and_a_block_per_run(tmp_path):
    d = _folder(tmp_path, INGEST_DETAIL)
    code, out, _ = run_in_process("ingest", str(d), db=str(tmp_path / "a.duckdb"))
    assert code == 0
    assert out.count(": ingested, server_log (sglang), 1 line, 1 run\n") == INGEST_DETAIL
    assert sum(ln.startswith("run ") for ln in out.splitlines()) == INGEST_DETAIL  # one summary block per run


def test_many_files_print_totals(tmp_path):
    n = INGEST_DETAIL + 5
    d = _folder(tmp_path, n)
    db = str(tmp_path / "b.duckdb")
    code, out, _ = run_in_process("ingest", str(d), db=db)
    assert code == 0
    assert ": ingested," not in out and not any(ln.startswith("run ") for ln in out.splitlines())
    assert f"{n} files: ingested {n}" in out
    assert f"{n} runs (ids 1-{n}): engines sglang {n}" in out
    code, out, _ = run_in_process("ingest", "--format", "json", str(d), db=db)  # all skipped now
    assert code == 0 and [f["status"] for f in json.loads(out)] == ["skipped"] * n
    code, out, _ = run_in_process("ingest", "--format", "json", str(d), db=str(tmp_path / "c.duckdb"))
    assert sum(len(f["runs"]) for f in json.loads(out)) == n
