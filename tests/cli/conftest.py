"""Fixtures of the CLI tests: one database with two sample logs ingested through the CLI
(shared by the module's tests, read-only afterwards) and an in-process runner."""
from __future__ import annotations

import pytest

from support.cli import run_in_process
from support.paths import SAMPLES

#: the samples behind the CLI tests: an SGLang log with two launches (one killed while
#: loading) and a vLLM log with EAGLE-3 speculative decoding, labelled "eagle"
SGLANG = SAMPLES / "sglang_baseline.log"
VLLM = SAMPLES / "vllm_eagle3.log"


@pytest.fixture(scope="session")
def story_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("cli") / "story.duckdb")
    code, _, err = run_in_process("ingest", str(SGLANG), db=db)
    assert code == 0, err
    code, _, err = run_in_process("ingest", str(VLLM), "--label", "eagle", db=db)
    assert code == 0, err
    return db


@pytest.fixture
def run(story_db, monkeypatch):
    """``run(*args)``: ``logsleuth --db <story db> ARGS`` in-process -> (exit code, stdout, stderr).
    COLUMNS is unset so that output goes at its natural width (stdout is not a terminal)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LOGSLEUTH_DB", raising=False)

    def _run(*args: str, db: str = story_db):
        return run_in_process(*args, db=db)

    return _run


@pytest.fixture
def invoke(monkeypatch):
    """``invoke(*argv, stdin=None, env=None)``: the entry point in-process with exactly
    ``argv`` (no --db added) -> (exit code, stdout, stderr)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LOGSLEUTH_DB", raising=False)

    def _invoke(*argv: str, stdin: str | None = None, env: dict | None = None):
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        return run_in_process(*argv, db=None, stdin=stdin)

    return _invoke
