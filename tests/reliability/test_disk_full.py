"""A full disk: the ingest exits 3 with one line, the database is left as it was and its file
shrunk back (the next small ingest works), `report -o` exits 3 and leaves no partial file.

A small tmpfs is the full disk (needs root to mount; skipped otherwise); the unit tests inject
the error instead.
"""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import uuid

import duckdb
import pytest

from logsleuth.db import diskfull
from logsleuth.report.safe_write import write_atomic
from support.cli import run_in_process
from support.paths import SAMPLES

SMALL = SAMPLES / "sglang_baseline.log"


@pytest.fixture
def tiny_disk(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)],
                              capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("cannot mount a tmpfs here")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=20)


def _big_log(path, copies: int = 40):
    text = SMALL.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(copies):  # distinct numbers: the data does not compress away
            fh.write(text.replace("Decode batch", f"Decode batch {i}").replace("#token: ", f"#token: {i}") + "\n")
    return path


def _fill(path, leave: int = 0) -> None:
    """Write zeros to ``path`` until ``leave`` bytes are free on its disk (0: until full)."""
    st = os.statvfs(path.parent)
    want = max(0, st.f_bavail * st.f_frsize - leave)
    with open(path, "wb") as fh:
        try:
            while want > 0:
                n = min(want, 1 << 20)
                fh.write(b"\0" * n)
                want -= n
            fh.flush()
        except OSError:
            pass


def _runs(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT run_id, source_id FROM runs ORDER BY run_id").fetchall()
    finally:
        con.close()


def test_full_disk_puts_the_database_back(tiny_disk, tmp_path):
    db = str(tiny_disk / "d.duckdb")
    code, _, err = run_in_process("ingest", str(SMALL), db=db)
    assert code == 0, err
    size, before = os.path.getsize(db), _runs(db)
    big = _big_log(tmp_path / "big.log")
    _fill(tiny_disk / "filler", leave=3 << 20)  # 3 MiB left: the big file cannot fit
    code, out, err = run_in_process("ingest", str(big), db=db)
    assert code == 3, (code, err)
    lines = [ln for ln in err.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and "no space left" in lines[0] and "as it was" in lines[0], err
    assert "cannot rollback" not in err and "Traceback" not in err
    assert os.path.getsize(db) == size  # shrunk back
    assert not os.path.exists(db + ".wal")
    assert _runs(db) == before
    # nothing of the failed ingest holds space: with the filler gone a small ingest works
    os.unlink(tiny_disk / "filler")
    small2 = tmp_path / "small2.log"
    small2.write_text(SMALL.read_text(encoding="utf-8").replace("Decode batch", "Decode batch 2"), encoding="utf-8")
    code, _, err = run_in_process("ingest", str(small2), db=db)
    assert code == 0, err
    assert len(_runs(db)) > len(before)


def test_report_into_a_full_disk_leaves_no_file(tiny_disk, tmp_path):
    db = str(tmp_path / "r.duckdb")
    code, _, err = run_in_process("ingest", str(SMALL), db=db)
    assert code == 0, err
    _fill(tiny_disk / "filler")
    out = tiny_disk / "report.html"
    code, _, err = run_in_process("report", "-o", str(out), db=db)
    assert code == 3, (code, err)
    assert "no space left" in err and "Traceback" not in err
    assert sorted(os.listdir(tiny_disk)) == ["filler"]  # no report, no temporary file


# --- the same, injected -------------------------------------------------------------------------

def test_disk_full_is_recognised_in_every_form():
    assert diskfull.is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert diskfull.is_disk_full(duckdb.IOException('Could not write file "x": No space left on device'))
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as outer:
        assert diskfull.is_disk_full(outer)
    assert not diskfull.is_disk_full(duckdb.IOException("Could not read file: permission denied"))


def test_recover_truncates_back_and_drops_the_log(tmp_path):
    db = str(tmp_path / "x.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE t AS SELECT range AS a FROM range(1000)")
    snap = diskfull.snapshot(con)
    assert snap is not None and snap.wal_size in (None, 0)
    with open(db, "ab") as fh:  # what a failed transaction leaves: blocks past the end, a log
        fh.write(b"\xff" * (1 << 20))
    with open(db + ".wal", "wb") as fh:
        fh.write(b"partial")
    err = diskfull.recover(con, snap, "big.log")
    assert isinstance(err, diskfull.DiskFullError) and err.exit_code == 3
    assert os.path.getsize(db) == snap.size and not os.path.exists(db + ".wal")
    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 1000
    finally:
        con.close()


def test_write_atomic_keeps_the_old_file_and_no_temp_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "out.html"
    target.write_text("old")
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(diskfull.DiskFullError):
        write_atomic(target, b"new" * 1000)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.html"]
    write_atomic(target, b"new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["out.html"]


def test_ingest_into_a_full_disk_injected(tmp_path, monkeypatch):
    """The API path without a tmpfs: an ENOSPC raised inside the ingest transaction."""
    import logsleuth
    from logsleuth.ingest import pipeline

    db = str(tmp_path / "inj.duckdb")
    con = logsleuth.open_db(db)
    logsleuth.ingest_files(con, [str(SMALL)])
    n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    size = os.path.getsize(db)

    other = tmp_path / f"other-{uuid.uuid4().hex[:6]}.log"
    shutil.copy(SMALL, other)
    with open(other, "a", encoding="utf-8") as fh:
        fh.write("[2026-02-03 12:00:00] one more line\n")

    def exploding(*args, **kwargs):
        raise duckdb.IOException('Could not write file "x.duckdb": No space left on device')

    monkeypatch.setattr(pipeline, "_ingest_new", exploding)
    con = logsleuth.open_db(db)
    with pytest.raises(diskfull.DiskFullError):
        logsleuth.ingest_files(con, [str(other)])
    assert os.path.getsize(db) == size
    con = logsleuth.open_db(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == n_runs
    finally:
        con.close()
