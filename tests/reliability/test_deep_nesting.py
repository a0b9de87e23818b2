"""Structured input nested absurdly deep is a clear error (exit 3, the file and line), never
a RecursionError (exit 70); a config dump nested deep in a log is kept as text."""
from __future__ import annotations

import time

import pytest

from support.cli import run_in_process
from support.paths import SAMPLES

DEEP = 100_000
RESULT = '{"completed": 1, "request_throughput": 1.0, "mean_ttft_ms": 2.0, "x": %s}'


def _deep(n: int = DEEP) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize("shape,line", [
    ("one", 1),  # a single deep object
    ("jsonl", 2),  # a good result, then a deep one
    ("pretty", 1),  # a pretty-printed object over lines
    ("array", 1),  # a bare deep array
])
def test_deep_bench_json_is_bad_input(tmp_path, shape, line):
    good = RESULT % "1"
    text = {"one": RESULT % _deep(), "jsonl": good + "\n" + RESULT % _deep(),
            "pretty": "{\n" + '"completed": 1,\n "x": ' + _deep() + "\n}", "array": _deep()}[shape]
    path = tmp_path / "bench_result.json"
    path.write_text(text + "\n")
    db = str(tmp_path / "db.duckdb")
    t = time.perf_counter()
    code, out, err = run_in_process("ingest", str(path), db=db)
    elapsed = time.perf_counter() - t
    assert "RecursionError" not in err and "Traceback" not in err, err
    if shape == "array":  # not a bench result: raw lines, cut at the line cap
        assert code == 0, err
    else:
        assert code == 3, (code, out, err)
        assert f"{path}: line {line}: JSON nested more than" in err, err
    assert elapsed < 10


def test_shallow_results_still_load(tmp_path):
    path = tmp_path / "bench_result.json"
    path.write_text(RESULT % ("[" * 5 + "1" + "]" * 5) + "\n")
    code, _, err = run_in_process("ingest", str(path), db=str(tmp_path / "db.duckdb"))
    assert code == 0, err


def test_a_deep_config_dump_in_a_log_is_kept_as_text(tmp_path):
    lines = (SAMPLES / "vllm_eagle3.log").read_text(encoding="utf-8").splitlines()[:40]
    i = next(k for k, ln in enumerate(lines) if "non-default args: {" in ln)
    deep = "{'a': " * 20_000 + "1" + "}" * 20_000
    lines[i] = lines[i].replace("{'model_tag'", "{'deep': " + deep + ", 'model_tag'", 1)
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_in_process("ingest", str(path), db=str(tmp_path / "db.duckdb"))
    assert code == 0 and "RecursionError" not in err, (code, err)
