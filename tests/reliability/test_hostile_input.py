"""Inputs that used to crash (exit 70), hang or answer wrong: a year-0000 timestamp, infinite and
huge numbers, `--year` out of range, symlink loops (as an input and under a `**` glob), and the
stdin spool that a kill left behind.
"""
from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from logsleuth.walk import glob_paths
from support.cli import run_cli, run_in_process
from support.paths import ROOT, SAMPLES

HEAD = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8").splitlines()[:300]
DECODE = ("[2026-02-03 11:00:{s:02d} TP0] Decode batch, #running-req: 1, #token: 766, token usage: 0.00, "
          "cuda graph: True, gen throughput (token/s): {v}, #queue-req: 0, ")


def _write(path, extra: list[str]):
    path.write_text("\n".join(HEAD + extra) + "\n", encoding="utf-8")
    return path


def _ok(db: str, *args: str) -> str:
    code, out, err = run_in_process(*args, db=db)
    assert code == 0, (args, code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    return out


def test_year_zero_timestamps_are_no_time(tmp_path):
    log = _write(tmp_path / "y0.log", ["[0000-01-01 00:00:00 TP0] " + DECODE.format(s=1, v=12.5).split("] ", 1)[1],
                                       "[0000-01-01 00:00:01] ERROR something failed",
                                       "[9999-12-31 23:59:59] something late"])
    db = str(tmp_path / "y0.duckdb")
    _ok(db, "ingest", str(log))
    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM lines_other l JOIN decode_stats d USING (source_id, line_no) "
                           "WHERE d.ts IS NOT NULL AND year(d.ts) < 1970").fetchone()[0] == 0
        years = [r[0] for r in con.execute("SELECT DISTINCT year(ts) FROM decode_stats WHERE ts IS NOT NULL"
                                           ).fetchall()]
    finally:
        con.close()
    assert all(1970 <= y <= 2199 for y in years)
    for args in (("runs",), ("show", "1"), ("sql", "SELECT * FROM decode_stats"), ("diagnose",),
                 ("report", "-o", "-"), ("sql", "--format", "json", "SELECT ts FROM events")):
        code, out, err = run_in_process(*args, db=db)
        assert code in (0, 2), (args, err)
        assert "internal error" not in err and "Traceback" not in err, (args, err)


def test_infinite_and_huge_numbers(tmp_path):
    values = ["1e309", "9" * 400, "1.797e308", "1.5e+3", "12.5"]
    log = _write(tmp_path / "nums.log", [DECODE.format(s=i, v=v) for i, v in enumerate(values)])
    db = str(tmp_path / "nums.duckdb")
    _ok(db, "ingest", str(log))
    con = duckdb.connect(db, read_only=True)
    try:
        got = [r[0] for r in con.execute("SELECT gen_tok_s FROM decode_stats WHERE line_no > 300 ORDER BY line_no"
                                         ).fetchall()]
    finally:
        con.close()
    # not a measurement -> no value; a number with an exponent whole, never its mantissa alone
    assert got == [None, None, 1.797e308, 1500.0, 12.5]
    run_id = json.loads(_ok(db, "runs", "--format", "json"))[-1]["run_id"]
    _ok(db, "show", str(run_id))
    out = _ok(db, "sql", "--format", "json", "SELECT gen_tok_s, gen_tok_s * 10 AS x FROM decode_stats")
    assert "Infinity" not in out and "NaN" not in out
    json.loads(out)
    out = _ok(db, "runs", "--format", "json")
    json.loads(out)


@pytest.mark.parametrize("year", ["0", "99999999999999999999", "1969", "2200", "-5"])
def test_year_out_of_range_is_refused(tmp_path, year):
    db = str(tmp_path / "yr.duckdb")
    code, out, err = run_in_process("ingest", f"--year={year}", str(SAMPLES / "vllm_eagle3.log"), db=db)
    assert code == 2, err
    assert "--year" in err and "1970" in err and "Traceback" not in err
    assert not os.path.exists(db)  # refused before anything was opened


def test_year_in_range_is_used(tmp_path):
    db = str(tmp_path / "yr.duckdb")
    _ok(db, "ingest", "--year", "2024", str(SAMPLES / "vllm_eagle3.log"))
    con = duckdb.connect(db, read_only=True)
    try:
        assert {r[0] for r in con.execute("SELECT DISTINCT year(ts) FROM decode_stats WHERE ts IS NOT NULL"
                                          ).fetchall()} <= {2024, 2025}
    finally:
        con.close()


# --- symbolic links -----------------------------------------------------------------------------

@pytest.fixture
def looped(tmp_path):
    root = tmp_path / "logs"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "server.log").write_text((SAMPLES / "vllm_eagle3.log").read_text(encoding="utf-8"))
    # two loops that branch: Python's glob multiplies paths (2^40 before the kernel stops it)
    os.symlink("..", root / "a" / "b" / "up1")
    os.symlink("..", root / "a" / "b" / "up2")
    os.symlink("../..", root / "a" / "b" / "top")
    os.symlink("self", root / "self")
    return root


def test_a_symlink_loop_is_called_a_loop(looped, tmp_path):
    code, out, err = run_in_process("ingest", str(looped / "self"), db=str(tmp_path / "l.duckdb"))
    assert code == 3 and "symbolic link loop" in err and "broken" not in err, err


def test_double_star_over_symlink_loops_returns(looped, tmp_path):
    t0 = time.monotonic()
    hits = glob_paths(str(looped / "**" / "*.log"))
    assert time.monotonic() - t0 < 10
    assert hits == [str(looped / "a" / "b" / "server.log")]
    code, out, err = run_in_process("ingest", str(looped / "**" / "*.log"), db=str(tmp_path / "l.duckdb"))
    assert code == 0, err
    assert out.count("ingested") == 1


def test_glob_paths_matches_glob_on_a_tree_without_links(tmp_path):
    for rel in ["a/x.log", "a/b/y.log", "a/b/c/z.log", "d/w.txt", "top.log", ".hid/h.log", "a/.dot.log",
                "e f/[x].log"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    base = str(tmp_path)
    for pattern in ["**/*.log", "*", "**", "a/**/c/*.log", "*/*.log", "**/.*", "?/x.log", "[ad]/*", "**/b/**/*.log",
                    "e f/*.log", "a/**"]:
        full = os.path.join(base, pattern)
        # (glob spells the directory a final '**' starts from with a trailing '/')
        assert glob_paths(full) == sorted(p.rstrip(os.sep) for p in glob.glob(full, recursive=True)), pattern


# --- stdin ----------------------------------------------------------------------------------------

def test_stdin_spool_leaves_no_file(tmp_path):
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    data = (SAMPLES / "vllm_eagle3.log").read_bytes()
    r = run_cli("ingest", "-", db=str(tmp_path / "s.duckdb"), input=data, env={"TMPDIR": str(spool_dir)})
    assert r.returncode == 0, r.stderr
    assert os.listdir(spool_dir) == []


def test_stdin_spool_leaves_no_file_even_when_killed(tmp_path):
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    child = ("import os, sys, signal\n"
             "from logsleuth.ingest.read import open_source\n"
             "src = open_source('-')\n"
             "sys.stdout.write(f'{src.size} {len(os.listdir(os.environ[\"TMPDIR\"]))}\\n'); sys.stdout.flush()\n"
             "os.kill(os.getpid(), signal.SIGKILL)\n")
    data = (SAMPLES / "vllm_eagle3.log").read_bytes()
    env = dict(os.environ, TMPDIR=str(spool_dir))
    proc = subprocess.run([sys.executable, "-c", child], input=data, capture_output=True, env=env, cwd=str(ROOT),
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    size, named = proc.stdout.decode().split()
    assert int(size) == len(data) and named == "0"  # spooled, and without a name even while alive
    assert os.listdir(spool_dir) == []
