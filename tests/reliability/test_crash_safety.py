"""Crash safety: an ingest is one transaction, so a process killed (-9) or interrupted (SIGINT)
in the middle of a file leaves the database exactly as it was before that file.

The child is the real CLI entry point; tests/_robust.py patches its chunk reader (256 KiB
chunks) so that it prints MIDWAY once a few chunks are stored inside the open transaction.
"""
from __future__ import annotations

import shutil
import signal

import pytest

import logsleuth
from support.robust import SAMPLES, counts, finish, make_big_log, sources, spawn, wait_for


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    return make_big_log(tmp_path_factory.mktemp("big") / "big.log", 12_000)  # ~1.8 MB, ~7 chunks


@pytest.fixture(scope="module")
def seeded_template(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("seed") / "seed.duckdb")
    con = logsleuth.open_db(path)
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "eras" / "sglang_v0.3_hms.log"), str(SAMPLES / "vllm_eagle3.log")])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture
def seeded_db(seeded_template, tmp_path) -> str:
    """A database that already holds two earlier sources."""
    path = str(tmp_path / "crash.duckdb")
    shutil.copy(seeded_template, path)
    return path


def test_kill_9_mid_ingest_leaves_the_earlier_sources(seeded_db, big_log):
    before_sources, before_counts = sources(seeded_db), counts(seeded_db)
    proc = spawn("ingest", str(big_log), db=seeded_db, stop_at=3, hold_s=60)
    wait_for(proc)
    proc.kill()  # SIGKILL: no handler, no rollback code runs
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert sources(seeded_db) == before_sources
    assert counts(seeded_db) == before_counts
    # the database is still writable, and the file ingests completely afterwards
    con = logsleuth.open_db(seeded_db)
    try:
        (res,) = logsleuth.ingest_files(con, [str(big_log)])
        assert res.status == "ingested" and res.n_lines == 365 + 12_000
        assert con.execute("SELECT count(*) FROM lines WHERE source_id = ?", [res.source_id]).fetchone()[0] == res.n_lines
    finally:
        con.close()
    assert [s[1] for s in sources(seeded_db)] == ["sglang_v0.3_hms.log", "vllm_eagle3.log", "big.log"]


@pytest.mark.parametrize("sig, hold_s", [(signal.SIGINT, 60.0), (signal.SIGINT, 0.0), (signal.SIGTERM, 60.0)],
                         ids=["ctrl-c-while-holding", "ctrl-c-while-working", "sigterm-while-holding"])
def test_interrupt_exits_130_and_rolls_back(seeded_db, big_log, sig, hold_s):
    """Ctrl-C mid-ingest, and SIGTERM treated like it."""
    before_sources, before_counts = sources(seeded_db), counts(seeded_db)
    proc = spawn("ingest", str(big_log), db=seeded_db, stop_at=3, hold_s=hold_s)
    head = wait_for(proc)
    proc.send_signal(sig)
    code, err = finish(proc, head)
    assert code == 130, err
    errors = [ln for ln in err.splitlines() if ln.startswith("Error:")]
    assert errors == ["Error: interrupted; any ingest in progress was rolled back"], err
    assert "Traceback" not in err
    assert sources(seeded_db) == before_sources
    assert counts(seeded_db) == before_counts


def test_killed_replace_keeps_the_old_copy(seeded_db, big_log):
    """--replace deletes and re-inserts in the same transaction: a kill keeps the old rows."""
    con = logsleuth.open_db(seeded_db)
    try:
        logsleuth.ingest_files(con, [str(big_log)])
    finally:
        con.close()
    before_sources, before_counts = sources(seeded_db), counts(seeded_db)
    proc = spawn("ingest", "--replace", str(big_log), db=seeded_db, stop_at=3, hold_s=60)
    wait_for(proc)
    proc.kill()
    proc.wait(timeout=30)
    assert sources(seeded_db) == before_sources
    assert counts(seeded_db) == before_counts
