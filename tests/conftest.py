"""Shared fixtures (the corpus and samples folders, fresh databases, the CLI runner); the helpers
themselves live in tests/support/."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.cli import run_cli, run_in_process  # noqa: F401  (re-exported for older imports)
from support.db import source_id, typed_row_counts  # noqa: F401
from support.paths import CORPUS, ROOT, SAMPLES, corpus_files  # noqa: F401


@pytest.fixture
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("real corpus not available (../shared/corpus/real)")
    return CORPUS


@pytest.fixture
def samples_dir() -> Path:
    return SAMPLES


@pytest.fixture
def db(tmp_path):
    """A fresh on-disk database connection (closed after the test)."""
    import logsleuth

    con = logsleuth.open_db(str(tmp_path / "test.duckdb"))
    yield con
    con.close()


@pytest.fixture
def db_path(tmp_path) -> str:
    return str(tmp_path / "cli.duckdb")


@pytest.fixture
def cli():
    return run_cli


# hypothesis: bounded in CI ("ci", the default), longer on demand:
#   LOGSLEUTH_FUZZ_EXAMPLES=2000 pytest tests/reliability/test_fuzz.py
try:
    from hypothesis import HealthCheck, settings as _hyp_settings

    _hyp_settings.register_profile(
        "ci", max_examples=int(os.environ.get("LOGSLEUTH_FUZZ_EXAMPLES", "30")), deadline=None,
        derandomize=not os.environ.get("LOGSLEUTH_FUZZ_EXAMPLES"), print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large])
    _hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is a test extra; tests that need it import it themselves
    pass


def _corpus_skip(report) -> bool:
    """A skip whose reason says the real corpus is absent (the fixtures and markers above and
    in the folders all say "corpus" in their reason)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return "corpus" in reason.lower()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say at the end how many tests skipped because the real corpus is absent, and how to
    get it, so that a green run without it is not mistaken for a full one."""
    if CORPUS.is_dir():
        return
    n = sum(1 for r in terminalreporter.stats.get("skipped", []) if _corpus_skip(r))
    if n:
        terminalreporter.write_sep("-", "real corpus absent")
        terminalreporter.write_line(
            f"{n} test(s) skipped because the corpus of real server logs is absent. To run them, "
            f"put the corpus (public logs, each fetched byte for byte from the repository and commit "
            f"its MANIFEST.md names) in {CORPUS} or point LOGSLEUTH_CORPUS at it; see docs/testing.md.")


@pytest.fixture(autouse=True)
def _natural_width(monkeypatch):
    """Output at its natural width unless a test sets COLUMNS itself: pytest-xdist workers
    inherit a COLUMNS of the controller's terminal, which would wrap the tables that the
    rendering tests read."""
    monkeypatch.delenv("COLUMNS", raising=False)
