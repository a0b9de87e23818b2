"""The fleet from the command line: ingest --dataset, then the ordinary commands and `fleet`."""
from __future__ import annotations

import pytest

import json

from support.cli import run_in_process as _run


def run_in_process(*args: str) -> tuple[int, str, str]:
    return _run(*args, db=None)  # the dataset is named by --dataset


@pytest.mark.slow  # a dataset round trip, ~65 s here
def test_cli_dataset_round_trip(fleet_dir, tmp_path):
    ds = str(tmp_path / "ds")
    logs = sorted(str(p) for p in fleet_dir.rglob("server.log"))
    code, out, err = run_in_process("ingest", "--dataset", ds, "--host-from", "{host}/server.log",
                                    "--executor", "serial", *logs)
    assert code == 0, err
    assert "7 new" in out and "stored as host gpu-04" in err
    code, out, _ = run_in_process("--dataset", ds, "fleet", "--format", "json", "--no-findings")
    flags = json.loads(out)
    assert {o["host"] for o in flags["outliers"]} == {"gpu-04"}
    assert len(flags["crash_clusters"]) == 1 and flags["changes"] == []
    code, out, _ = run_in_process("sql", "--dataset", ds, "--format", "json", "SELECT count(DISTINCT host) AS n FROM sources")
    assert code == 0 and json.loads(out) == [{"n": 7}]
    code, out, _ = run_in_process("--dataset", ds, "diagnose", "--format", "json")
    assert code == 0 and any(f["rule_id"] == "illegal_memory_access" for f in json.loads(out))
    # the same bytes again: nothing new
    code, out, _ = run_in_process("ingest", "--dataset", ds, "--host-from", "{host}/server.log", "--executor", "serial", *logs)
    assert code == 0 and "7 skipped" in out


def test_cli_dataset_errors(tmp_path):
    code, _, err = run_in_process("--dataset", str(tmp_path), "runs")
    assert code == 3 and "no logsleuth dataset here" in err
    code, _, err = run_in_process("--db", str(tmp_path / "x.duckdb"), "fleet")
    assert code == 2 and "fleet reads a dataset" in err


def test_cli_split_bytes(tmp_path):
    """--split-bytes: a large file is parsed as byte ranges, and the line per file says so."""
    from support.paths import SAMPLES

    log = tmp_path / "restarts.log"
    log.write_bytes((SAMPLES / "sglang_baseline.log").read_bytes() + (SAMPLES / "eras" / "sglang_capture_oom.log").read_bytes())
    ds = str(tmp_path / "ds")
    code, out, err = run_in_process("ingest", "--dataset", ds, "--host", "h1", "--executor", "serial",
                                    "--split-bytes", "50KB", str(log))
    assert code == 0, err
    assert "stored as host h1 (split into 2 byte ranges at launch boundaries)" in err and "1 new" in out
    code, _, err = run_in_process("ingest", "--dataset", ds, "--split-bytes", "lots", str(log))
    assert code == 2 and "--split-bytes 'lots'" in err
