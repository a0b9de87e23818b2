"""Bad telemetry gets what bad logs get: one clear line, exit code 3, nothing stored from it."""
from __future__ import annotations

import pytest

from support.cli import run_in_process

GOOD_CSV = ("timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
            "2026/04/17 00:33:00.000, 0, 50 %, 100 MiB\n")
BAD = {
    # a loop killed mid-line: the last row lacks fields
    "truncated.csv": GOOD_CSV + "2026/04/17 00:33:01.000, 0, 5",
    # a sample line cut inside its label set
    "broken.prom": ('# HELP vllm:num_requests_waiting Number of requests waiting.\n'
                    '# TYPE vllm:num_requests_waiting gauge\n'
                    'vllm:num_requests_waiting{engine="0",model_name="m"} 1.0\n'
                    'vllm:num_requests_running{engine="0",model_name="m 2.0\n'
                    'vllm:num_requests_running{engine="0",model_name="m"} 2.0\n'),
    # JSON, but not a benchmark result
    "config.json": '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32}\n',
    # a bench result line followed by garbage
    "cut.jsonl": '{"backend": "sglang", "completed": 4, "request_throughput": 1.0}\n{"backend": "sgl',
}
WHY = {"truncated.csv": "line 3: 3 field(s) where the nvidia-smi CSV header has 4",
       "broken.prom": "line 4: not Prometheus text exposition",
       "config.json": "line 1: JSON but not a benchmark result",
       "cut.jsonl": "line 2: not valid JSON"}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_telemetry_one_line_exit_3_nothing_stored(tmp_path, name):
    f = tmp_path / name
    f.write_text(BAD[name])
    db = str(tmp_path / "t.duckdb")
    code, out, err = run_in_process("ingest", str(f), db=db)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and WHY[name] in lines[0], err
    assert "Traceback" not in err and out == ""
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        for table in ("sources", "lines_other", "metrics", "gpu_samples", "bench_results", "telemetry_sources"):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    finally:
        con.close()


def test_good_file_before_a_bad_one_is_kept(tmp_path):
    good, bad = tmp_path / "a_gpu.csv", tmp_path / "b_truncated.csv"
    good.write_text(GOOD_CSV)
    bad.write_text(BAD["truncated.csv"])
    db = str(tmp_path / "t.duckdb")
    code, _, err = run_in_process("ingest", str(good), str(bad), db=db)
    assert code == 3 and "b_truncated.csv" in err
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT name FROM sources").fetchall() == [("a_gpu.csv",)]
        assert con.execute("SELECT count(*) FROM gpu_samples").fetchone()[0] == 1
    finally:
        con.close()
