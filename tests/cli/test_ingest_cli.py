"""CLI contract of ingest/runs/show/sql/unparsed: exit codes, results on stdout, notes and
errors on stderr, machine-readable formats that parse.

Most calls run the real entry point (``logsleuth.cli.app.main``) in-process for speed; a few
go through a subprocess to check the console script end to end.
"""
from __future__ import annotations

import csv
import io
import json

import pytest

from support.cli import run_in_process
from support.paths import SAMPLES

from logsleuth.errors import ExitCode

KV = str(SAMPLES / "eras" / "vllm_kv_too_small.log")
HMS = str(SAMPLES / "eras" / "sglang_v0.3_hms.log")
BASELINE = str(SAMPLES / "sglang_baseline.log")


@pytest.fixture
def run(monkeypatch, db_path):
    """Run ``logsleuth --db <db> ARGS`` in-process; return (exit code, stdout, stderr)."""
    monkeypatch.delenv("LOGSLEUTH_DB", raising=False)

    def _run(*args, db=db_path):
        return run_in_process(*args, db=db)

    return _run


def test_ingest_table_output_and_notes(run):
    code, out, err = run("ingest", KV, HMS)
    assert code == 0
    assert "vllm_kv_too_small.log" in out and "ingested" in out and "startup_failed" in out
    assert "sglang_v0.3_hms.log" in out and "served" in out
    assert "Error" not in err
    # again: skipped, and the note goes to stderr, not stdout
    code, out, err = run("ingest", KV)
    assert code == 0
    assert "already ingested" in err and "--replace" in err
    assert "already ingested" not in out


def test_ingest_json_parses(run):
    code, out, err = run("ingest", BASELINE, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [d["status"] for d in data] == ["ingested"]
    (item,) = data
    assert item["kind"] == "server_log" and item["engine"] == "sglang" and item["lines"] == 1255
    assert [(r["end_state"], r["attention_backend"]) for r in item["runs"]] == [("killed", "triton"), ("served", "triton")]
    assert item["runs"][1]["single_stream_tok_s"] == pytest.approx(55.0)


def test_missing_file_is_bad_input(run):
    code, out, err = run("ingest", "/no/such/file.log")
    assert code == ExitCode.BAD_INPUT == 3
    assert out == ""
    assert err.startswith("Error: ") and "/no/such/file.log" in err and "no such file" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_binary_and_empty_files_are_bad_input(run, tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "blob.log").write_bytes(bytes(range(256)) * 64)
    for name in ("empty.log", "blob.log"):
        code, out, err = run("ingest", str(tmp_path / name))
        assert code == 3 and out == "" and err.startswith("Error: "), name


def test_runs_formats(run):
    assert run("ingest", KV, HMS)[0] == 0
    code, out, err = run("runs", "--format", "json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [(r["source"], r["end_state"]) for r in rows] == [("vllm_kv_too_small.log", "startup_failed"),
                                                            ("sglang_v0.3_hms.log", "served")]
    code, out, err = run("runs", "--format", "csv")
    assert code == 0
    parsed = list(csv.DictReader(io.StringIO(out)))
    assert [r["engine"] for r in parsed] == ["vllm", "sglang"]
    assert parsed[0]["version"] == "0.11.0"
    code, out, _ = run("runs")
    assert code == 0 and "startup_failed" in out


def test_show(run):
    run("ingest", HMS, "--format", "json")
    run_id = json.loads(run("runs", "--format", "json")[1])[0]["run_id"]
    code, out, err = run("show", str(run_id))
    assert code == 0 and err == ""
    assert "sglang_v0.3_hms.log" in out and "served" in out
    assert "server_ready" in out  # milestones table
    code, out, err = run("show", "987654")
    assert code == ExitCode.USAGE and out == "" and "no run matches '987654'" in err


def test_sql_read_only_and_write(run):
    run("ingest", KV)
    code, out, err = run("sql", "SELECT count(*) AS n FROM runs", "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 1}] and err == ""
    code, out, err = run("sql", "DELETE FROM runs")
    assert code == ExitCode.QUERY_ERROR == 4
    assert out == "" and err.startswith("Error: SQL error") and "read-only" in err
    assert json.loads(run("sql", "SELECT count(*) AS n FROM runs", "--format", "json")[1]) == [{"n": 1}]
    code, out, err = run("sql", "UPDATE runs SET label = 'x'", "--write")
    assert code == 0, err
    assert json.loads(run("sql", "SELECT label FROM runs", "--format", "json")[1]) == [{"label": "x"}]
    code, out, err = run("sql", "SELEC 1")
    assert code == 4 and "syntax error" in err and out == ""
    code, out, err = run("sql", "SELECT * FROM no_such_table")
    assert code == 4 and "no_such_table" in err


def test_sql_csv_parses(run):
    run("ingest", HMS)
    code, out, _ = run("sql", "SELECT line_no, gen_tok_s, running_reqs FROM decode_stats ORDER BY line_no LIMIT 3",
                       "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3 and set(rows[0]) == {"line_no", "gen_tok_s", "running_reqs"}
    assert all(float(r["gen_tok_s"]) >= 0 for r in rows)


def test_unparsed(run, tmp_path):
    log = tmp_path / "odd.log"
    log.write_text("[2025-01-01 00:00:00] The flux capacitor reads 1.21 GW\n"
                   "[2025-01-01 00:00:01] The flux capacitor reads 2.42 GW\n"
                   "[2025-01-01 00:00:02] Decode batch. #running-req: 1, #token: 5, token usage: 0.00, "
                   "gen throughput (token/s): 9.00, #queue-req: 0\n", encoding="utf-8")
    run("ingest", str(log))
    code, out, err = run("unparsed", "--format", "json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert len(rows) == 1 and rows[0]["n_lines"] == 2 and "flux capacitor" in rows[0]["template"]
    code, out, _ = run("unparsed", "--format", "csv", "--limit", "5")
    assert code == 0 and list(csv.DictReader(io.StringIO(out)))[0]["n_lines"] == "2"


def test_usage_errors(run):
    code, out, err = run("runs", "--format")
    assert code == ExitCode.USAGE
    code, out, err = run("no-such-command")
    assert code == ExitCode.USAGE and out == ""


def test_console_script_end_to_end(cli, db_path, tmp_path):
    """The real console entry point in a subprocess: the same split and exit codes."""
    r = cli("ingest", KV, "--format", "json", db=db_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["runs"][0]["end_state"] == "startup_failed"
    r = cli("sql", "DROP TABLE runs", db=db_path)
    assert r.returncode == 4 and r.stdout == b"" and r.stderr.startswith(b"Error: ")
    r = cli("ingest", str(tmp_path / "missing.log"), db=db_path)
    assert r.returncode == 3 and r.stdout == b"" and b"no such file" in r.stderr
    assert b"Traceback" not in r.stderr
