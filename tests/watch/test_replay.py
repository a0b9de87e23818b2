"""`logsleuth watch --plain --format jsonl` against logs replayed at 100x their own pace.

Each test starts the watcher first (it says "watching"), then the replayer writes the log
the way the server did; assertions are on the notices (phases in order, ETA and GB/s
within generous tolerances, stalls, findings with their lines) and on what ended up in the
database. Timing tolerances are wide on purpose: the machine is shared."""
from __future__ import annotations

import signal
import subprocess

import pytest

import logsleuth
from replayer import Replayer

from conftest import SEED
from support.cli import run_cli
from support.paths import SAMPLES

pytestmark = pytest.mark.slow  # replays logs through `logsleuth watch` in (sped-up) real time: 20-35 s a test

SPEED = 100.0


def _phases(w) -> list[str]:
    return [n["phase"] for n in w.events("phase")]


def test_seed_story_killed_at_minute_four_was_not_a_hang(history_db, tmp_path, watch_process):
    """The seed story: Kimi-K2.5 INT4 (512 GB on 8 GPUs) loading at ~6.3 s per shard, killed
    at 41/64. At the 4-minute mark the watch says ~1.1-1.3 GB/s, ~3 minutes left, not a hang;
    after the kill the silence is reported as a stall naming the phase and the last line."""
    log = tmp_path / "server.log"
    w = watch_process(history_db, [str(log)], "--speed", str(SPEED), "--store-every", "2", "--timeout", "60")
    rep = Replayer(str(SEED), str(log), SPEED, stop_after=101).start()
    rep.wait(60)
    w.wait_for(lambda n: n.get("event") == "stalled", timeout=30)
    w.wait_for(lambda n: n.get("rule_id") == "long_weight_loading", timeout=30)
    # readers are not blocked by the watcher: a diagnose on the same database, meanwhile
    other = run_cli("diagnose", "--format", "json", db=history_db)
    assert other.returncode == 0, other.stderr.decode()
    assert b"custom_allreduce_disabled" in other.stdout
    w.proc.send_signal(signal.SIGINT)  # Ctrl-C: stops cleanly, everything read is stored
    rc = w.finish()
    assert rc == 130
    run = w.events("run")[0]
    assert run["model"] == "moonshotai/Kimi-K2.5" and run["tp_size"] == 8 and run["line"] == 5
    assert _phases(w)[0] == "loading_weights"
    # what the watch said at the 4-minute mark (the status notice for minute 4)
    four = next(n for n in w.events("status") if n["since_launch_s"] >= 240)
    assert four["since_launch_s"] < 300
    assert four["phase"] == "loading_weights" and 30 <= four["done"] <= 41 and four["total"] == 64
    assert 1.0 <= four["gb_per_s"] <= 1.5
    assert 120 <= four["eta_s"] <= 240  # "about 3 minutes left"
    assert four["moving"] is True and "not a hang" in four["text"]
    assert four["previous_s"] == pytest.approx(447, abs=1)  # the healthy start's weight phase
    # while the bar moved: no stall. After the kill: one, naming the phase and the last line
    stalled = w.events("stalled")
    assert len(stalled) == 1
    assert stalled[0]["phase"] == "loading_weights" and stalled[0]["line"] == 101
    assert "41/64" in stalled[0]["message"] and "Loading safetensors checkpoint shards" in stalled[0]["text"]
    first_stall = w.notices.index(stalled[0])
    assert all(n["event"] != "stalled" for n in w.notices[:first_stall])
    # findings with their evidence lines; the end-of-log rule waited for the stall
    findings = {n["rule_id"]: n for n in w.events("finding")}
    assert "custom_allreduce_disabled" in findings
    assert "Custom allreduce is disabled" in findings["custom_allreduce_disabled"]["evidence"]
    slow = findings.get("long_weight_loading")
    assert slow is not None and "not a hang" in slow["title"]
    assert w.notices.index(slow) > first_stall
    # everything read is in the database, once
    con = logsleuth.open_db(history_db, read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM lines l JOIN sources s USING (source_id) WHERE s.path = ?",
                        [str(log)]).fetchone()[0]
        n_sources = con.execute("SELECT count(*) FROM sources WHERE path = ?", [str(log)]).fetchone()[0]
    finally:
        con.close()
    assert n_sources == 1 and n == 101


def test_launch_to_ready_with_graph_capture(history_db, tmp_path, watch_process):
    """Run 2 of the seed story to ready: weights, KV cache, a CUDA-graph capture whose bar is
    one physical line grown with \\r; --exit-on ready ends the watch with 0; no stall."""
    log = tmp_path / "server.log"
    w = watch_process(history_db, [str(log)], "--speed", str(SPEED), "--exit-on", "ready", "--timeout", "60",
                      "--no-findings")
    rep = Replayer(str(SEED), str(log), SPEED, start_line=104, stop_after=300).start()
    rc = w.finish()
    rep.wait(30)
    assert rc == 0
    assert _phases(w) == ["loading_weights", "kv_cache", "cuda_graphs", "ready"]
    ready = w.events("phase", phase="ready")[0]
    assert 500 <= ready["time_to_ready_s"] <= 620  # 555 s in the log
    graph = [n for n in w.events("progress") if n["what"] == "CUDA-graph capture"]
    assert graph and max(n["done"] for n in graph) >= 40 and all(n["total"] == 52 for n in graph)
    weights = [n for n in w.events("progress") if n["what"] == "loading weights" and n.get("eta_s")]
    assert weights and all(1.0 <= n["gb_per_s"] <= 1.6 for n in weights if n["done"] >= 8)
    assert not w.events("stalled")
    kv = w.events("phase", phase="kv_cache")[0]
    assert kv["previous"] == "loading_weights" and "compare" in kv  # vs the earlier healthy start


def test_crash_during_capture_exits_with_the_error(tmp_path, watch_process):
    log = tmp_path / "oom.log"
    db = str(tmp_path / "w.duckdb")
    w = watch_process(db, [str(log)], "--speed", str(SPEED), "--exit-on", "crash", "--timeout", "60",
                      "--store-every", "1")
    Replayer(str(SAMPLES / "eras" / "sglang_capture_oom.log"), str(log), SPEED).start()
    rc = w.finish()
    assert rc == 5
    end = w.events("end")[0]
    assert end["state"] == "crashed" and end["during"] == "CUDA-graph capture"
    err = next(n for n in w.events("error") if n["fatal"])
    assert err["line"] == end["line"] and err["text"]
    # stored before exiting: the crash is in the database with its end state
    con = logsleuth.open_db(db, read_only=True)
    try:
        states = [r[0] for r in con.execute("SELECT end_state FROM runs").fetchall()]
    finally:
        con.close()
    assert "crashed" in states or "startup_failed" in states


def test_rotation_truncation_and_a_paused_replay(history_db, tmp_path, watch_process):
    """The log is rotated during the weight load and truncated later: the watch follows the
    new files, the open run continues; a pause of the writer in the middle of the bar raises
    one stall that resumes; every line written ends up stored (old files included)."""
    log = tmp_path / "server.log"
    w = watch_process(history_db, [str(log)], "--speed", str(SPEED), "--store-every", "2",
                      "--no-findings", "--timeout", "40", "--exit-on", "ready")
    rep = Replayer(str(SEED), str(log), SPEED, start_line=104, stop_after=300,
                   rotate_before={180}, truncate_before={260}, pause_before={200: 2.0}, settle_s=1.0).start()
    rc = w.finish()
    rep.wait(30)
    assert rc == 0
    assert [n["event"] for n in w.notices if n["event"] in ("rotated", "truncated")] == ["rotated", "truncated"]
    assert _phases(w) == ["loading_weights", "kv_cache", "cuda_graphs", "ready"]
    stalled = w.events("stalled")
    assert len(stalled) == 1 and stalled[0]["phase"] == "loading_weights"
    # the last line before the pause: file line 199, line 20 of the file that replaced the rotated one
    assert stalled[0]["line"] == 20 and "Loading safetensors checkpoint shards" in stalled[0]["text"]
    assert w.events("resumed")
    assert len(w.events("run")) == 1  # one run across the three files
    # stored: the rotated file whole (lines 104-179 of the seed log) as one source, and every
    # line written after the truncation exactly once
    con = logsleuth.open_db(history_db, read_only=True)
    try:
        rows = con.execute("SELECT path, n_lines FROM sources WHERE path LIKE ? ORDER BY source_id",
                           [str(log) + "%"]).fetchall()
        raws = [r[0] for r in con.execute(
            "SELECT l.raw FROM lines l JOIN sources s USING (source_id) WHERE s.path = ?", [str(log)]).fetchall()]
    finally:
        con.close()
    assert [n for p, n in rows if p == str(log) + ".1"] == [76], rows
    seed = SEED.read_bytes().decode("utf-8", "replace").split("\n")
    # (up to the ready line 289: --exit-on ready stops the watch there, later lines may be unread)
    for line in {x for x in seed[259:289] if x.strip()}:
        assert raws.count(line) == seed[259:289].count(line), line[:80]


def test_pipe_input_is_watched_and_stored(tmp_path):
    db = str(tmp_path / "pipe.duckdb")
    data = (SAMPLES / "eras" / "sglang_capture_oom.log").read_bytes()
    proc = subprocess.run([__import__("sys").executable, "-m", "logsleuth", "--db", db, "watch", "-",
                           "--plain", "--format", "jsonl", "--poll", "0.05", "--timeout", "60"],
                          input=data, capture_output=True, timeout=120)
    import json

    notices = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert proc.returncode == 0, proc.stderr.decode()
    assert any(n["event"] == "input_ended" for n in notices)
    assert any(n["event"] == "end" and n["state"] == "crashed" for n in notices)
    con = logsleuth.open_db(db, read_only=True)
    try:
        n = con.execute("SELECT sum(n_lines) FROM sources").fetchone()[0]
    finally:
        con.close()
    assert n == data.count(b"\n")
