"""Bad input: one test per kind, asserting the one-line message, the exit code, and that the
database is unchanged (or, for the inputs that are tolerated, what was stored and said).

Most cases run the real entry point ``logsleuth.cli.app.main`` in-process (fast); a few run it in a
subprocess (``cli`` fixture) where that matters: a FIFO must not hang the process, stdin, and
the memory bound of a 50 MB line.
"""
from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

from support.cli import run_in_process
from support.paths import ROOT

SAMPLE = ROOT / "tests" / "samples" / "sglang_baseline.log"
COUNTED = ["sources", "runs", "lines", "config", "events", "errors", "templates", "decode_stats",
           "prefill_stats"]


# --- helpers ---------------------------------------------------------------------------------

def snapshot(db: str) -> dict:
    """What the database holds: row counts and the sources (path, sha256, n_lines)."""
    con = duckdb.connect(db, read_only=True)
    try:
        out = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED}
        out["_sources"] = con.execute("SELECT source_id, name, sha256, n_lines FROM sources ORDER BY 1").fetchall()
        out["_meta"] = con.execute("SELECT * FROM meta ORDER BY 1").fetchall()
        return out
    finally:
        con.close()


run = run_in_process  # (exit code, stdout, stderr) of the CLI, in-process


def assert_refused(code: int, err: str, db: str, before: dict, *phrases: str, exit_code: int = 3) -> None:
    assert code == exit_code, err
    # one Error line, no traceback; a folder walk may first say what it skipped and why ("note: ...")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("note: skipped ")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    for phrase in phrases:
        assert phrase in lines[0], err
    assert snapshot(db) == before


@pytest.fixture(scope="module")
def base_db(tmp_path_factory) -> str:
    """A database holding one ingested sample (built once, copied per test)."""
    path = str(tmp_path_factory.mktemp("base") / "base.duckdb")
    code, _, err = run("ingest", str(SAMPLE), db=path)
    assert code == 0, err
    con = duckdb.connect(path)
    con.execute("CHECKPOINT")
    con.close()
    return path


@pytest.fixture
def db(base_db, tmp_path) -> tuple[str, dict]:
    path = str(tmp_path / "db.duckdb")
    shutil.copy(base_db, path)
    return path, snapshot(path)


def good_lines() -> list[bytes]:
    return SAMPLE.read_bytes().rstrip(b"\n").split(b"\n")


# --- refused inputs: exit 3, one line, nothing written ---------------------------------------

def test_missing_path(cli, db, tmp_path):
    path, before = db
    r = cli("ingest", str(tmp_path / "nope.log"), db=path)
    assert_refused(r.returncode, r.stderr.decode(), path, before, "nope.log: no such file")


def test_bad_input_among_several_writes_nothing(cli, db, tmp_path):
    """Every input is checked before the database is opened: a missing or empty file after a
    good one refuses the whole command, and the good one is not ingested either."""
    path, before = db
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    for bad in (tmp_path / "nope.log", empty):
        r = cli("ingest", str(SAMPLE), str(bad), db=path)
        assert_refused(r.returncode, r.stderr.decode(), path, before, bad.name)


def test_refused_input_creates_no_database(cli, tmp_path):
    fresh = tmp_path / "fresh.duckdb"
    for cmd in ("ingest", "diagnose"):
        r = cli(cmd, str(tmp_path / "nope.log"), db=str(fresh))
        assert r.returncode == 3, r.stderr.decode()
        assert "nope.log: no such file" in r.stderr.decode()
        assert not fresh.exists(), f"{cmd} created {fresh.name} for a refused input"


def test_broken_symlink(db, tmp_path):
    path, before = db
    link = tmp_path / "gone.log"
    link.symlink_to(tmp_path / "missing-target.log")
    assert_refused(*run("ingest", str(link), db=path)[::2], path, before, "broken symbolic link")


def test_directory_without_logs(db, tmp_path):
    path, before = db
    d = tmp_path / "pictures"
    d.mkdir()
    (d / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(100))
    (d / ".hidden.log").write_text("INFO hidden\n")
    assert_refused(*run("ingest", str(d), db=path)[::2], path, before, "is a directory with no log files")


def test_empty_directory(db, tmp_path):
    path, before = db
    d = tmp_path / "empty"
    d.mkdir()
    assert_refused(*run("ingest", str(d), db=path)[::2], path, before, "is a directory with no log files")


def test_png_image(cli, db, tmp_path):
    path, before = db
    img = tmp_path / "screenshot.log"  # a log name does not fool the content check
    img.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4000))
    r = cli("ingest", str(img), db=path)
    assert_refused(r.returncode, r.stderr.decode(), path, before, "a PNG image, not a text log")


def test_random_bytes(db, tmp_path):
    path, before = db
    f = tmp_path / "noise.log"
    f.write_bytes(os.urandom(20000))
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "binary data, not a text log")


def test_empty_file(db, tmp_path):
    path, before = db
    f = tmp_path / "empty.log"
    f.write_bytes(b"")
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "empty file, nothing to ingest")


def test_whitespace_only(db, tmp_path):
    path, before = db
    f = tmp_path / "blank.log"
    f.write_bytes(b"  \n\n\t\r\n")
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "only whitespace")


def test_only_nul_bytes(db, tmp_path):
    path, before = db
    f = tmp_path / "zeros.log"
    f.write_bytes(b"\x00" * 300_000)  # longer than the head that is sniffed
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "only NUL bytes")


def test_utf16_log(db, tmp_path):
    path, before = db
    f = tmp_path / "powershell.log"
    f.write_bytes(SAMPLE.read_text(encoding="utf-8")[:5000].encode("utf-16"))
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "UTF-16", "iconv")


def test_other_compression(db, tmp_path):
    import lzma

    path, before = db
    f = tmp_path / "server.log.xz"
    f.write_bytes(lzma.compress(SAMPLE.read_bytes()))
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "xz-compressed", "decompress it first")


def test_truncated_gzip_small(db, tmp_path):
    path, before = db
    data = gzip.compress(SAMPLE.read_bytes())
    f = tmp_path / "cut.log.gz"
    f.write_bytes(data[: len(data) // 2])
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "cut.log.gz", "corrupt")


def test_truncated_gzip_large(db, tmp_path):
    """The damage lies past the sniffed head: found mid-ingest, the whole file is rolled back."""
    path, before = db
    text = SAMPLE.read_bytes() * 40  # ~10 MB of text
    data = gzip.compress(text, compresslevel=1)
    f = tmp_path / "cut-late.log.gz"
    f.write_bytes(data[: int(len(data) * 0.9)])
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "cut-late.log.gz", "truncated")


def test_corrupt_gzip(db, tmp_path):
    path, before = db
    data = bytearray(gzip.compress(SAMPLE.read_bytes()))
    data[40:240] = os.urandom(200)
    f = tmp_path / "bad.log.gz"
    f.write_bytes(bytes(data))
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "bad.log.gz", "corrupt")


def test_fifo_does_not_hang(cli, db, tmp_path):
    path, before = db
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    r = cli("ingest", str(fifo), db=path, timeout=60)  # opening a FIFO for reading would block
    assert_refused(r.returncode, r.stderr.decode(), path, before, "not a regular file (a FIFO)", "ingest -")


def test_unreadable_file_access_check(db, tmp_path, monkeypatch):
    path, before = db
    f = tmp_path / "secret.log"
    f.write_bytes(SAMPLE.read_bytes())
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(f) else real_access(p, mode, **kw))
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "secret.log: permission denied")


def test_unreadable_file_open_raises(db, tmp_path, monkeypatch):
    """os.access says yes (root), but open() fails: the same clear error."""
    import builtins

    import logsleuth.ingest.read as read_mod

    path, before = db
    f = tmp_path / "locked.log"
    f.write_bytes(SAMPLE.read_bytes())

    def fake_open(file, *a, **kw):
        if str(file) == str(f):
            raise PermissionError(13, "Permission denied", str(file))
        return builtins.open(file, *a, **kw)

    monkeypatch.setattr(read_mod, "open", fake_open, raising=False)
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "locked.log: permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway; see the two tests above")
def test_unreadable_file_real_permissions(db, tmp_path):
    path, before = db
    f = tmp_path / "mode000.log"
    f.write_bytes(SAMPLE.read_bytes())
    f.chmod(0)
    assert_refused(*run("ingest", str(f), db=path)[::2], path, before, "permission denied")


def test_empty_stdin(cli, db):
    path, before = db
    r = cli("ingest", "-", db=path, input=b"")
    assert_refused(r.returncode, r.stderr.decode(), path, before, "<stdin>: empty file")


# --- refused databases ------------------------------------------------------------------------

def test_database_from_newer_schema(db):
    path, _ = db
    con = duckdb.connect(path)
    con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    con.close()
    before = snapshot(path)
    for args in (("ingest", str(SAMPLE.parent / "vllm_eagle3.log")), ("runs",), ("sql", "SELECT 1")):
        code, out, err = run(*args, db=path)
        assert_refused(code, err, path, before, "written by a newer logsleuth (schema 999 > ", "upgrade logsleuth")
        assert out == ""


def test_corrupt_database_random_bytes(db, tmp_path):
    path = str(tmp_path / "junk.duckdb")
    Path(path).write_bytes(os.urandom(50_000))
    before = Path(path).read_bytes()
    code, _, err = run("ingest", str(SAMPLE), db=path)
    assert code == 3 and err.startswith("Error: ") and "not a DuckDB database file" in err, err
    assert Path(path).read_bytes() == before


def test_corrupt_database_damaged_blocks(db):
    path, _ = db
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:  # keep the header, damage the data blocks
        fh.seek(min(8192, size // 2))
        fh.write(os.urandom(min(40_000, size // 3)))
    damaged = Path(path).read_bytes()
    for args in (("ingest", str(SAMPLE.parent / "vllm_eagle3.log")), ("runs",)):
        code, _, err = run(*args, db=path)
        assert code == 3, err
        assert err.count("\n") == 1 and "Error: " in err and "database" in err, err
    assert Path(path).read_bytes() == damaged


def test_sqlite_file_as_database(tmp_path):
    import sqlite3

    path = str(tmp_path / "other.db")
    sqlite3.connect(path).execute("CREATE TABLE t (a)").connection.commit()
    before = Path(path).read_bytes()
    code, _, err = run("runs", db=path)
    assert code == 3 and "is an SQLite database, not a DuckDB database" in err, err
    assert Path(path).read_bytes() == before


def test_empty_database_file(tmp_path):
    path = tmp_path / "touched.duckdb"
    path.write_bytes(b"")
    code, _, err = run("ingest", str(SAMPLE), db=str(path))
    assert code == 3 and "empty file, not a DuckDB database" in err, err
    assert path.read_bytes() == b""


def test_plain_duckdb_database_is_left_alone(tmp_path):
    path = str(tmp_path / "mine.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE important (x INTEGER)")
    con.close()
    code, _, err = run("ingest", str(SAMPLE), db=path)
    assert code == 3 and "not a logsleuth database" in err, err
    con = duckdb.connect(path, read_only=True)
    assert [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()] == ["important"]
    con.close()


# --- tolerated inputs: ingested, counted, and said on stderr ---------------------------------

def _source(db: str, name: str) -> dict:
    con = duckdb.connect(db, read_only=True)
    try:
        cur = con.execute("SELECT * FROM sources WHERE name = ?", [name])
        cols = [d[0] for d in cur.description]
        row = cur.fetchone()
        return dict(zip(cols, row)) if row else {}
    finally:
        con.close()


def _q(db: str, sql: str, params=None):
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_nul_bytes_inside_a_text_log(db, tmp_path):
    path, before = db
    lines = good_lines()
    f = tmp_path / "nuls.log"
    f.write_bytes(b"\n".join(lines[:30]) + b"\n\x00\x00junk\x00\n" + b"\n".join(lines[30:]))
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    assert "3 NUL byte(s) replaced" in err
    src = _source(path, "nuls.log")
    assert src["nul_bytes"] == 3 and src["n_lines"] == len(lines) + 1
    assert _q(path, "SELECT raw FROM lines WHERE source_id = ? AND line_no = 31", [src["source_id"]]) == [
        ("\ufffd\ufffdjunk\ufffd",)]


@pytest.mark.parametrize("hole", [60_000, 200_000])  # inside / beyond the sniffed head
def test_zero_filled_head_of_a_rotated_log(db, tmp_path, hole):
    """copytruncate leaves a hole of NUL bytes before the text: the text is still read."""
    path, before = db
    f = tmp_path / "rotated.log"
    f.write_bytes(b"\x00" * hole + SAMPLE.read_bytes())
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    assert f"{hole} NUL byte(s) replaced" in err
    src = _source(path, "rotated.log")
    assert src["nul_bytes"] == hole
    base = _source(path, SAMPLE.name)
    assert _q(path, "SELECT count(*) FROM decode_stats WHERE source_id = ?", [src["source_id"]]) == \
        _q(path, "SELECT count(*) FROM decode_stats WHERE source_id = ?", [base["source_id"]])


def test_invalid_utf8_mixed_into_good_lines(db, tmp_path):
    path, before = db
    lines = good_lines()
    f = tmp_path / "mojibake.log"
    f.write_bytes(b"\n".join(lines[:50]) + b"\nbad \xff\xfe\xc3( bytes\n" + b"\n".join(lines[50:]))
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    assert "invalid UTF-8 byte(s) replaced" in err
    src, base = _source(path, "mojibake.log"), _source(path, SAMPLE.name)
    assert src["bad_bytes"] == 3 and src["n_lines"] == base["n_lines"] + 1
    raw = _q(path, "SELECT raw FROM lines WHERE source_id = ? AND line_no = 51", [src["source_id"]])[0][0]
    assert raw == "bad \ufffd\ufffd\ufffd( bytes"
    # the good lines around it are parsed exactly as in the clean file
    for table in ("decode_stats", "prefill_stats", "events"):
        n = _q(path, f"SELECT count(*) FROM {table} WHERE source_id = ?", [src["source_id"]])
        assert n == _q(path, f"SELECT count(*) FROM {table} WHERE source_id = ?", [base["source_id"]]), table


def test_crlf_line_endings(db, tmp_path):
    path, before = db
    f = tmp_path / "windows.log"
    f.write_bytes(SAMPLE.read_bytes().replace(b"\n", b"\r\n"))
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    src, base = _source(path, "windows.log"), _source(path, SAMPLE.name)
    assert src["n_lines"] == base["n_lines"] and src["crlf_lines"] >= base["n_lines"] - 1
    has_cr = "SELECT count(*) FROM lines WHERE source_id = ? AND raw LIKE '%' || chr(13) || '%'"
    # only the carriage returns inside lines (tqdm progress bars) are kept, as in the LF file
    assert _q(path, has_cr, [src["source_id"]]) == _q(path, has_cr, [base["source_id"]])
    assert _q(path, "SELECT count(*) FROM lines WHERE source_id = ? AND raw LIKE '%' || chr(13)",
              [src["source_id"]]) == [(0,)]
    for table in ("decode_stats", "prefill_stats", "events", "config", "runs"):
        n = _q(path, f"SELECT count(*) FROM {table} WHERE source_id = ?", [src["source_id"]])
        assert n == _q(path, f"SELECT count(*) FROM {table} WHERE source_id = ?", [base["source_id"]]), table


def test_unknown_format(db, tmp_path):
    path, before = db
    f = tmp_path / "app.log"
    f.write_text("".join(f"worker {i % 3} handled job {i} in {i * 7 % 100} ms\n" for i in range(200)))
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    assert "unknown format: stored as raw lines with mined templates" in err
    src = _source(path, "app.log")
    assert src["n_lines"] == 200 and src["kind"] == "unknown"
    assert _q(path, "SELECT count(*) FROM lines WHERE source_id = ? AND kind = 'unparsed'", [src["source_id"]]) == [(200,)]
    assert _q(path, "SELECT count(*) > 0 FROM templates WHERE source_id = ?", [src["source_id"]]) == [(True,)]


@pytest.mark.parametrize("how", ["alone", "batched"])
def test_file_growing_while_ingested(db, tmp_path, monkeypatch, how):
    """Only the bytes there at the start are read, and stderr says so: by the chunk pipeline
    of a file in a transaction of its own, and by the batch of small files (batch_frame)."""
    from logsleuth.ingest import batch as batch_mod
    from logsleuth.ingest import batch_frame

    ingest_mod = sys.modules["logsleuth.ingest.pipeline"]

    path, before = db
    f = tmp_path / "live.log"
    other = SAMPLE.parent / "vllm_eagle3.log"  # not the content already in the database
    f.write_bytes(other.read_bytes())
    n_start = len(other.read_bytes().rstrip(b"\n").split(b"\n"))

    def grow():
        with open(f, "ab") as fh:
            fh.write(b"INFO 02-04 15:00:00 appended while ingesting\n" * 500)

    if how == "alone":
        monkeypatch.setattr(batch_mod, "SMALL_FILE_BYTES", 0)  # no batch: the chunk pipeline
        real_iter = ingest_mod.iter_chunks

        def appending(src, chunk_bytes=None):
            for i, chunk in enumerate(real_iter(src, 16384)):
                if i == 1:
                    grow()
                yield chunk

        monkeypatch.setattr(ingest_mod, "iter_chunks", appending)
    else:
        real_open = batch_frame.open_source

        def opened_then_grown(p):
            src = real_open(p)
            grow()
            return src

        monkeypatch.setattr(batch_frame, "open_source", opened_then_grown)
    code, _, err = run("ingest", str(f), db=path)
    assert code == 0, err
    assert "file grew while ingesting: only the bytes present at start were read" in err
    src = _source(path, "live.log")
    assert src["grew_during_ingest"] is True and src["n_lines"] == n_start
    assert _q(path, "SELECT count(*) FROM lines WHERE source_id = ? AND raw LIKE '%appended%'",
              [src["source_id"]]) == [(0,)]


def test_fifty_megabyte_line(cli, tmp_path):
    """A single 50 MB line: stored cut (lines.truncated), the lines after it intact, memory bounded."""
    from logsleuth.ingest.read import MAX_LINE_BYTES

    lines = good_lines()
    f = tmp_path / "huge.log"
    with open(f, "wb") as fh:
        fh.write(b"\n".join(lines[:10]) + b"\n")
        fh.write(b"[2026-02-04 14:10:00] " + b"x" * (50 * 1024 * 1024) + b"\n")
        fh.write(b"\n".join(lines[10:40]) + b"\n")
    path = str(tmp_path / "huge.duckdb")
    code = (
        "import resource, sys; from logsleuth.cli.app import main; sys.argv = ['logsleuth', '--db', sys.argv[1], "
        "'ingest', sys.argv[2]]\n"
        "try:\n    main()\nexcept SystemExit as e:\n"
        "    print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); raise\n")
    import subprocess

    r = subprocess.run([sys.executable, "-c", code, path, str(f)], capture_output=True, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert "1 over-long line(s) stored truncated" in err
    rss_mb = int(err.split("MAXRSS_KB")[1].split()[0]) / 1024
    assert rss_mb < 1500, f"peak memory {rss_mb:.0f} MB for a 50 MB line"
    rows = _q(path, "SELECT line_no, truncated, strlen(raw) FROM lines ORDER BY line_no")
    assert len(rows) == 10 + 1 + 30
    assert rows[10] == (11, True, MAX_LINE_BYTES)
    assert all(not t for n, t, _ in rows if n != 11)
    assert _source(path, "huge.log")["truncated_lines"] == 1
