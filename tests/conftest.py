"""Shared fixtures: paths to the bundled samples and the real corpus, fresh databases."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "samples"
# the real corpus sits beside the checkout (../shared/corpus/real); CI lays it there too
CORPUS = Path(os.environ.get("LOGSLEUTH_CORPUS", ROOT.parent / "shared" / "corpus" / "real"))


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "MANIFEST.md")


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


def run_cli(*args: str, db: str | None = None, input: bytes | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real `logsleuth` entry point in a subprocess (stdout/stderr captured)."""
    cmd = [sys.executable, "-m", "logsleuth.cli.app"]
    if db:
        cmd += ["--db", db]
    full_env = dict(os.environ)
    full_env.pop("LOGSLEUTH_DB", None)
    full_env.update(env or {})
    return subprocess.run(cmd + list(args), capture_output=True, input=input, env=full_env, timeout=timeout,
                          cwd=str(ROOT))


@pytest.fixture
def cli():
    return run_cli


def run_in_process(*args: str, db: str) -> tuple[int, str, str]:
    """The CLI entry point in-process (a subprocess per command costs about a second);
    returns (exit code, stdout, stderr)."""
    import io

    from logsleuth.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = ["logsleuth", "--db", db, *args], out, err
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def source_id(con, name: str, label: str | None = None) -> int:
    """source_id of the ingested file called ``name`` (the last part of its path)."""
    row = con.execute("SELECT source_id FROM sources WHERE name = ?", [name]).fetchone()
    assert row, label or f"{name} not ingested"
    return row[0]


def typed_row_counts(con, sid: int) -> tuple:
    """(decode, prefill, spec, bench, errors, fatal errors) rows of one source."""
    return con.execute("""SELECT
        (SELECT count(*) FROM decode_stats WHERE source_id = $1),
        (SELECT count(*) FROM prefill_stats WHERE source_id = $1),
        (SELECT count(*) FROM spec_stats WHERE source_id = $1),
        (SELECT count(*) FROM bench_results WHERE source_id = $1),
        (SELECT count(*) FROM errors WHERE source_id = $1),
        (SELECT count(*) FROM errors WHERE source_id = $1 AND fatal)""", [sid]).fetchone()


# hypothesis: bounded in CI ("ci", the default), longer on demand:
#   LOGSLEUTH_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py
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
