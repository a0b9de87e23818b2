"""Parse workers: the default count, and a pool that cannot start falls back to inline parsing.

``spawn`` starts each worker by importing the caller's main module again; a script that calls
the API at top level (no ``if __name__ == "__main__":``) makes every worker fail. The ingest
must still finish, with the tables a serial ingest gives.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from logsleuth.ingest import workers
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402


def test_default_jobs_leaves_one_core_to_fold_and_store(monkeypatch):
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert workers.default_jobs() == 3
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert workers.default_jobs() == 1


def test_spawn_safe_reads_the_main_guard(tmp_path, monkeypatch):
    import types

    main = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert workers.spawn_safe()  # interactive: no main file
    for text, safe in (("import logsleuth\nlogsleuth.ingest_files(con, paths)\n", False),
                       ("def run(): ...\nif __name__ == '__main__':\n    run()\n", True)):
        path = tmp_path / "script.py"
        path.write_text(text)
        main.__file__ = str(path)
        assert workers.spawn_safe() is safe


SCRIPT = """
import sys
sys.path[:0] = [{src!r}]
import logsleuth
from logsleuth.ingest.pipeline import IngestOptions
con = logsleuth.open_db({db!r})
res = logsleuth.ingest_files(con, [{log!r}], IngestOptions(jobs={jobs}, chunk_bytes=64 * 1024))
rows = con.execute("SELECT count(*), count(DISTINCT run_id), sum(length(raw)) FROM lines").fetchone()
print("RESULT", res[0].status, *rows)
con.close()
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_script_without_main_guard_ingests_once(tmp_path, jobs):
    """Such a script parses inline (``spawn_safe``) instead of starting workers that would
    run it again: it ends quickly, with every line once."""
    log = generate(tmp_path / "gen.log", "sglang", 300_000, seed=5)
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent(SCRIPT.format(src=str(ROOT / "src"), db=str(tmp_path / f"j{jobs}.duckdb"),
                                                    log=str(log), jobs=jobs)))
    before = _spools()
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = [line for line in out.stdout.splitlines() if line.startswith("RESULT")]
    assert result and result[-1].split()[1] == "ingested"
    n_lines = log.read_bytes().count(b"\n")
    assert int(result[-1].split()[2]) == n_lines
    assert _spools() <= before  # no spool folder is left behind


def _spools() -> set:
    import tempfile
    from pathlib import Path

    return {p for d in ("/dev/shm", tempfile.gettempdir()) for p in Path(d).glob("logsleuth-parse-*")}
