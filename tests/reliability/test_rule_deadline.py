"""A rule that never ends is stopped: by its deadline (``-- timeout:`` in its header, a
default for user rules) with exit 4 naming it, and by Ctrl-C or SIGTERM within a second
with exit 130, never 70, whether it runs alone or among the other rules."""
from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from support.bounded import run_bounded
from support.cli import run_in_process
from support.paths import SAMPLES

#: a three-way cross join DuckDB would grind through for hours
ENDLESS = ("SELECT 1 AS run_id, 1 AS line_no FROM range(100000000) a, range(100000000) b, range(1000) c "
           "WHERE a.range * b.range + c.range = -1")


def _rules(tmp_path: Path, timeout: str | None = None) -> Path:
    d = tmp_path / "rules"
    d.mkdir()
    head = "-- id: slow_cartesian\n-- severity: warning\n-- title: never {run_id}\n-- fix: none\n"
    head += f"-- timeout: {timeout}\n" if timeout else ""
    (d / "slow_cartesian.sql").write_text(head + ENDLESS + "\n")
    return d


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("rd") / "r.duckdb")
    log = tmp_path_factory.getbasetemp() / "rd.log"
    log.write_bytes((SAMPLES / "sglang_baseline.log").read_bytes()[:40000])
    code, _, err = run_in_process("ingest", str(log), db=path)
    assert code == 0, err
    return path


def test_a_rule_past_its_timeout_is_stopped(db, tmp_path):
    t = time.monotonic()
    code, out, err = run_in_process("diagnose", "--rules-dir", str(_rules(tmp_path, "1.5s")),
                                    "--rule", "slow_cartesian", db=db)
    elapsed = time.monotonic() - t
    assert code == 4, (code, out, err)
    assert "slow_cartesian" in err and "timeout" in err and "Traceback" not in err, err
    assert elapsed < 1.5 + 1.5, elapsed


def test_a_user_rule_has_a_default_timeout(db, tmp_path, monkeypatch):
    from logsleuth.analysis import rule_files

    monkeypatch.setattr(rule_files, "USER_RULE_TIMEOUT_S", 1.0)
    t = time.monotonic()
    code, out, err = run_in_process("diagnose", "--rules-dir", str(_rules(tmp_path)), db=db)
    assert code == 4 and "slow_cartesian" in err and "timeout" in err, (code, err)
    assert time.monotonic() - t < 1.0 + 3


@pytest.mark.parametrize("timeout", ["soon", "-1", "0"])
def test_a_bad_timeout_header_is_a_rule_error(db, tmp_path, timeout):
    code, out, err = run_in_process("diagnose", "--rules-dir", str(_rules(tmp_path, timeout)), db=db)
    assert code == 3 and "timeout" in err and "slow_cartesian.sql" in err, (code, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "among-all"])
def test_ctrl_c_and_sigterm_stop_running_rules_within_a_second(db, tmp_path, sig, alone):
    args = ["diagnose", "--rules-dir", str(_rules(tmp_path))] + (["--rule", "slow_cartesian"] if alone else [])
    r = run_bounded(*args, db=db, timeout=90, send=(sig, 8.0))
    assert r.code == 130, (r.code, r.seconds, r.err[-600:])
    assert "interrupted" in r.err and "internal error" not in r.err, r.err
    assert r.seconds - r.signalled_at < 1.0 + 0.5, (r.seconds, r.signalled_at)
