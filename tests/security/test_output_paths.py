"""An output never replaces an input: `report -o` refuses the database it reads (by any
spelling: relative, through a link, a hard link), an ingested source and any file of the
dataset it reads, with exit 2 and the file unchanged.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from support.cli import run_in_process
from support.paths import SAMPLES


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("out")
    log = d / "a.log"
    log.write_bytes((SAMPLES / "sglang_baseline.log").read_bytes()[:20000])
    db = d / "r.duckdb"
    code, _, err = run_in_process("ingest", str(log), db=str(db))
    assert code == 0, err
    return db, log


@pytest.fixture
def work(ingested, tmp_path) -> tuple[Path, Path]:
    db, log = ingested
    shutil.copy(db, tmp_path / "r.duckdb")
    return tmp_path / "r.duckdb", log


def _refused(db: Path, out: str, protected: Path) -> None:
    before = _digest(protected)
    code, stdout, err = run_in_process("report", "-o", out, db=str(db))
    assert code == 2, (code, stdout, err)
    assert "input" in err and "Traceback" not in err, err
    assert _digest(protected) == before


def test_report_refuses_the_database(work, monkeypatch):
    db, _ = work
    _refused(db, str(db), db)
    monkeypatch.chdir(db.parent)
    _refused(db, "./sub/../r.duckdb", db)
    code, out, err = run_in_process("runs", db=str(db))
    assert code == 0, err  # still a database


def test_report_refuses_the_database_through_links(work):
    db, _ = work
    (db.parent / "soft.html").symlink_to(db)
    os.link(db, db.parent / "hard.html")
    _refused(db, str(db.parent / "soft.html"), db)
    _refused(db, str(db.parent / "hard.html"), db)


def test_report_refuses_an_ingested_source(work):
    db, log = work
    _refused(db, str(log), log)


def test_report_refuses_a_file_of_the_dataset(tmp_path, ingested):
    _, log = ingested
    ds = tmp_path / "ds"
    code, _, err = run_in_process("ingest", "--dataset", str(ds), str(log), db=None)
    assert code == 0, err
    manifest = ds / "_logsleuth_manifest.json"
    before = _digest(manifest)
    code, out, err = run_in_process("--dataset", str(ds), "report", "-o", str(manifest), db=None)
    assert code == 2 and "input" in err, (code, err)
    assert _digest(manifest) == before
    code, out, err = run_in_process("--dataset", str(ds), "report", "-o", str(ds / "new.html"), db=None)
    assert code == 2 and not (ds / "new.html").exists(), (code, err)


def test_report_elsewhere_is_written(work):
    db, _ = work
    out = db.parent / "report.html"
    code, _, err = run_in_process("report", "-o", str(out), db=str(db))
    assert code == 0 and out.read_text().lstrip().lower().startswith("<!doctype html"), err
