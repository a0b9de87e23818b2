"""Output that fits and messages a person would write: cropped cells on a terminal (whole in a pipe),
`show` without the defaults, no placeholders, one version column, and the re-ingest, Ctrl-C,
empty-result, sparkline and unparsed messages."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

import logsleuth
from logsleuth.cli.output import run_summary_panel, sparkline
from support.paths import ROOT, SAMPLES

from .conftest import SGLANG
from .test_user_habits import in_pty


def test_a_terminal_gets_one_line_per_row_with_an_ellipsis_and_a_pipe_the_whole_value(run, story_db):
    narrow = in_pty(["--db", story_db, "runs"], env={"NO_COLOR": "1", "COLUMNS": "100"}).decode()
    rows = [ln for ln in narrow.splitlines() if ln.startswith("│")]
    assert len(rows) == 3 and all(len(ln) <= 100 for ln in narrow.splitlines())
    assert "…" in narrow
    code, out, _ = run("runs")  # a pipe: whole values, for grep
    assert code == 0 and "…" not in out and "NVIDIA RTX PRO 6000 Blackwell Server Edition" in out


def test_show_lists_the_settings_that_differ_from_the_defaults_and_all_with_all(run):
    code, out, _ = run("show", "2", "--format", "json")
    short = {c["key"]: c["value"] for c in json.loads(out)[0]["config"]}
    code, out, _ = run("show", "2", "--all", "--format", "json")
    full = {c["key"]: c["value"] for c in json.loads(out)[0]["config"]}
    assert short["tp_size"] == "8" and short["mem_fraction_static"]  # set, or chosen for this GPU
    assert "tokenizer_mode" not in short and full["tokenizer_mode"] == "auto"  # the default
    assert "schedule_policy" not in short and full["schedule_policy"] == "fcfs"
    assert len(short) < len(full) / 3
    code, out, _ = run("show", "2")
    assert "differ from the engine's defaults; --all for every one" in out and "(set values)" not in out


def test_a_vllm_run_shows_its_own_non_default_list(run):
    code, out, _ = run("show", "eagle", "--format", "json")
    origins = {c["origin"] for c in json.loads(out)[0]["config"]}
    assert "cli_args" in origins and "engine_config" not in origins


def test_summaries_print_what_is_known_and_name_a_source_only_with_its_fact():
    bench = {"run_id": 4, "source_name": "bench.txt", "first_line": 1, "last_line": 44, "engine": "bench",
             "gpu_source": "unknown", "n_lines": 44, "parse_coverage": 0.97, "cuda_graph": None}
    text = run_summary_panel(bench)
    assert "model -" not in text and "(-)" not in text and "GPU" not in text and " - s" not in text
    assert "from unknown" not in text and "end:" not in text
    hinted = {**bench, "engine": "sglang", "gpu_source": "log_hint:total_capacity", "tp_size": 2}
    assert "log_hint" not in run_summary_panel(hinted) and "TP 2" in run_summary_panel(hinted)
    found = {**hinted, "gpu_name": "NVIDIA H100", "gpu_sm": "SM90"}
    assert "GPU NVIDIA H100 SM90 (from log_hint:total_capacity)" in run_summary_panel(found)


def test_the_version_column_is_the_same_in_runs_and_run_summary(run):
    code, out, _ = run("runs", "--format", "json")
    listed = {r["run_id"]: r["version"] for r in json.loads(out)}
    code, out, _ = run("sql", "SELECT run_id, version, engine_version, format_era FROM run_summary", "--format", "json")
    rows = json.loads(out)
    assert {r["run_id"]: r["version"] for r in rows} == listed
    for r in rows:  # exact when printed, else the era, said as such
        assert r["version"] == (r["engine_version"] or f"era {r['format_era']}")
    assert any(v.startswith("era ") for v in listed.values()) and "0.13.0" in listed.values()


def test_reingest_says_it_once(run):
    code, out, err = run("ingest", str(SGLANG))
    assert code == 0
    assert out.strip() == f"{SGLANG}: skipped (source 1, unchanged)"
    assert err.count("already ingested") == 1 and "--replace" in err and "()" not in out + err


def test_an_empty_result_says_0_rows(run):
    code, out, _ = run("sql", "SELECT run_id FROM runs WHERE run_id < 0")
    assert code == 0 and "0 rows" in out
    code, out, _ = run("sql", "SELECT run_id FROM runs WHERE run_id < 0", "--format", "csv")
    assert out == "run_id\n"  # machine formats stay bare


def test_sparkline_of_flat_values():
    assert sparkline([0.0] * 10) == "▁" * 10
    assert sparkline([0.0, 0.001, 0.004, 0.002], resolution=0.05) == "▁" * 4  # prints as 0.0-0.0
    assert sparkline([5.0] * 3) == "▄" * 3
    assert sparkline([0.0, 1.0]) == "▁█"


def test_unparsed_shows_the_example_lines_text(run):
    code, out, _ = run("unparsed", "--format", "json")
    rows = json.loads(out)
    assert rows and all(r["example"] and ":" in r["at"] for r in rows)
    first = rows[0]
    name, line_no = first["at"].rsplit(":", 1)
    assert int(line_no) > 0
    plain = re.compile(r"\x1b\[[0-9;]*m")  # colour codes aside
    lines = {plain.sub("", ln).strip() for ln in re.split(r"\r\n|\n|\r", (SAMPLES / name).read_text(encoding="utf-8"))}
    assert plain.sub("", first["example"]).strip() in lines  # a line of the file, not its template


def test_ctrl_c_in_watch_says_it_once(tmp_path):
    log = tmp_path / "server.log"
    log.write_text((SAMPLES / "eras" / "vllm_kv_too_small.log").read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth.cli.app", "--db", str(tmp_path / "w.duckdb"), "watch",
                             "--plain", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    assert b"watching" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    lines = [ln for ln in err.decode().splitlines() if ln.strip()]
    assert lines == ["stopped; everything read so far is stored"]
    con = logsleuth.open_db(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] >= 1  # what was read is stored
    finally:
        con.close()
