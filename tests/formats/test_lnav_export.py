"""lnav formats generated from the grammars: what they hold, and what the real lnav reads with them.

The lnav tests run the Debian package's lnav (installed by .ci/run) with HOME in a temporary folder, so
the formats are installed there and nowhere else; they skip, saying so, when lnav is not installed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import regex

import logsleuth
from logsleuth import api
from logsleuth.formats.lnav import lnav_formats
from support.cli import run_cli
from support.paths import SAMPLES

LNAV = shutil.which("lnav")
needs_lnav = pytest.mark.skipif(LNAV is None, reason="lnav is not installed (apt-get install lnav; .ci/run does)")

#: era samples whose first stamped line is the engine's own (a wrapper's `date` line or a Ray driver's
#: stamped lines come first in the others: lnav then locks onto its generic formats, see docs/lnav.md)
ERA_SAMPLES = {
    "sglang_log": ["sglang_v0.4.8_dp.log", "sglang_2026_ms_hybrid.log", "sglang_v0.5.4_fwd_counter.log",
                   "sglang_v0.4.3_tp2.log", "sglang_capture_oom.log"],
    "vllm_log": ["vllm_v1_0.8.5_spec.log", "vllm_v0_0.5.4.log", "vllm_v1_0.10.1_workers.log",
                 "vllm_v1_0.12_color.log", "vllm_kv_too_small.log"],
}


def _format(name: str) -> dict:
    return lnav_formats()[f"{name}.json"][name]


@pytest.mark.parametrize("name", ["sglang_log", "vllm_log"])
def test_every_typed_regex_reads_a_sample_and_the_catch_all_refuses_typed_lines(name):
    fmt = _format(name)
    compiled = {k: regex.compile(v["pattern"]) for k, v in fmt["regex"].items()}
    assert len(compiled) >= 3 and "line" in compiled
    samples = [s["line"] for s in fmt["sample"]]
    for key, rx in compiled.items():
        hits = [s for s in samples if rx.match(s)]
        assert hits, f"{key} reads none of the samples"
        if key != "line":
            assert not any(compiled["line"].match(s) for s in hits), key
    assert {"timestamp", "level"} <= set(compiled["line"].groupindex)
    assert fmt["value"]["gen_tok_s"]["kind"] == "float"
    assert all(fmt["value"][i]["identifier"] for i in ("pid", "src_file"))


def test_typed_fields_match_logsleuths_reading_of_the_decode_samples():
    fmt = _format("sglang_log")
    rx = regex.compile(fmt["regex"]["sgl_decode"]["pattern"])
    line = "[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 108, token usage: 0.00, accept len: 2.17, accept rate: 0.54, cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0, "
    m = rx.match(line)
    assert m and m["timestamp"] == "2025-10-22 10:27:57" and m["tp"] == "0"
    assert (m["gen_tok_s"], m["accept_len"], m["running_reqs"], m["queued_reqs"]) == ("178.86", "2.17", "1", "0")
    assert m["body"].startswith("Decode batch")


def test_export_command_writes_one_file_per_engine(tmp_path):
    res = run_cli("formats", "export", "--lnav", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    written = res.stdout.decode().split()
    assert [os.path.basename(p) for p in written] == ["sglang_log.json", "vllm_log.json"]
    for path in written:
        doc = json.loads(open(path, encoding="utf-8").read())
        assert doc["$schema"].startswith("https://lnav.org/schemas/format-v1")
    assert b"lnav -i" in res.stderr


@pytest.fixture(scope="module")
def lnav_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("lnav_home")
    out = home / "formats_out"
    env = {**os.environ, "HOME": str(home)}
    for path in api.export_lnav_formats(out):
        subprocess.run([LNAV, "-i", str(path)], env=env, check=True, capture_output=True, timeout=60)
    return env


def lnav_sql(env: dict, sql: str, path) -> list[list[str]]:
    """Rows of an lnav SQL query over one file (lnav -n prints a blank-separated table)."""
    res = subprocess.run([LNAV, "-n", "-c", f";{sql}", str(path)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return [line.split() for line in res.stdout.splitlines()[1:] if line.strip()]


@needs_lnav
def test_lnav_accepts_the_formats(lnav_home):
    res = subprocess.run([LNAV, "-C"], env=lnav_home, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "error" not in (res.stdout + res.stderr).lower(), res.stderr


@needs_lnav
@pytest.mark.parametrize("fmt,name", [(f, n) for f, names in ERA_SAMPLES.items() for n in names])
def test_lnav_recognises_the_samples(lnav_home, fmt, name):
    rows = lnav_sql(lnav_home, "SELECT DISTINCT log_format FROM all_logs", SAMPLES / "eras" / name)
    assert rows == [[fmt]]


@needs_lnav
@pytest.mark.parametrize("fmt,name,table,column", [
    ("sglang_log", "sglang_v0.4.8_dp.log", "decode_stats", "gen_tok_s"),
    ("vllm_log", "vllm_v1_0.8.5_spec.log", "decode_stats", "gen_tok_s"),
    ("vllm_log", "vllm_v1_0.8.5_spec.log", "spec_stats", "accepted_tokens"),
])
def test_lnav_reads_the_values_logsleuth_reads(lnav_home, tmp_path, fmt, name, table, column):
    path = SAMPLES / "eras" / name
    con = logsleuth.open_db(str(tmp_path / "db.duckdb"))
    logsleuth.ingest_files(con, [str(path)])
    ours = {int(n): float(v) for n, v in con.execute(
        f"SELECT line_no, {column} FROM {table} WHERE {column} IS NOT NULL").fetchall()}
    con.close()
    theirs = {int(n) + 1: float(v) for n, v in lnav_sql(
        lnav_home, f"SELECT log_line, {column} FROM {fmt} WHERE {column} IS NOT NULL", path)}
    assert len(ours) >= 5 and theirs == ours
