"""One ingest of the real corpus and one of the authored samples per test session.

Ingesting is the slow part of the corpus/sample tests, so the databases are built once in a
temporary folder and shared by the corpus, sample and lossless tests; each test module
opens its own read-only connection. The first request starts both builds in background
processes (they run in parallel on separate cores) and waits for the one it needs. Tests that
need a database they can change build their own.
"""
from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from support.paths import CORPUS, ROOT, SAMPLES, corpus_files, sample_files

_TMP = Path(tempfile.mkdtemp(prefix="logsleuth-tests-"))
_BUILDS: dict[str, subprocess.Popen] = {}
_READY: dict[str, str] = {}


def files_of(which: str) -> list[Path]:
    return corpus_files() if which == "corpus" else sample_files()


def build(which: str, path: str) -> None:
    """Ingest every file of ``which`` into ``path`` (run in a child process)."""
    import logsleuth
    from logsleuth.ingest.pipeline import IngestOptions

    con = logsleuth.open_db(path)
    try:
        # vLLM prints no year: pin it for the corpus (its files are dated 2024-2026)
        logsleuth.ingest_files(con, [str(p) for p in files_of(which)],
                         IngestOptions(year=2026 if which == "corpus" else None))
    finally:
        con.close()


def _start(which: str) -> None:
    if which in _BUILDS or which == "corpus" and not CORPUS.is_dir():
        return
    path = str(_TMP / f"{which}.duckdb")
    code = (f"import sys; sys.path[:0] = [{str(ROOT / 'tests')!r}, {str(ROOT / 'src')!r}]; "
            f"from support import ingested; ingested.build({which!r}, {path!r})")
    _BUILDS[which] = subprocess.Popen([sys.executable, "-c", code], cwd=str(ROOT),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def ingested(which: str) -> str:
    """Path of a database holding every corpus file ("corpus") or every sample ("samples")."""
    if which not in _READY:
        for w in ("corpus", "samples"):
            _start(w)
        proc = _BUILDS[which]
        out, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"ingest of the {which} failed:\n{err.decode(errors='replace')[-4000:]}")
        _READY[which] = str(_TMP / f"{which}.duckdb")
    return _READY[which]


def connect(which: str):
    import logsleuth

    return logsleuth.open_db(ingested(which), read_only=True)


def _cleanup() -> None:
    for proc in _BUILDS.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    shutil.rmtree(_TMP, ignore_errors=True)


atexit.register(_cleanup)

__all__ = ["CORPUS", "SAMPLES", "connect", "files_of", "ingested", "sample_files"]
