"""Every stored line rebuilds its input line byte for byte (issue 11, the compact line store).

The ``lines`` view over ``lines_other`` and ``lines_bulk`` (text stored zstd-compressed)
must give back each physical line of each file: the file's bytes split on newlines, decoded
as UTF-8 (invalid bytes and NUL replaced by U+FFFD, counted in sources.bad_bytes/nul_bytes),
a trailing CR dropped (sources.crlf_lines), cut at MAX_LINE_BYTES (lines.truncated), and with
secrets and prompts masked by the redaction policy (the one transformation that is meant to
lose text). Checked on every authored sample, every real corpus file, a generated log of
each engine, and a file of awkward lines (CRLF, invalid UTF-8, a line over the cut, NUL,
tabs, no final newline).
"""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

import polars as pl
import pytest

import logsleuth
from logsleuth.ingest.pipeline import IngestOptions
from logsleuth.ingest.read import MAX_LINE_BYTES
from logsleuth.ingest.redact import RedactState, redact_frame
from support.ingested import CORPUS, files_of, ingested
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402


def expected_lines(path: Path) -> list[str]:
    """The input lines as ``lines.raw`` must give them back (see the module docstring)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    text = [line.decode("utf-8", "replace") for line in lines]
    frame = pl.DataFrame({"raw": text}, schema={"raw": pl.Utf8}).with_columns(
        pl.col("raw").str.strip_suffix("\r").str.replace_all("\x00", "\ufffd", literal=True)
        .str.slice(0, MAX_LINE_BYTES))
    return redact_frame(frame, "raw", False, RedactState())["raw"].to_list()


def stored_lines(con, name: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT l.raw FROM lines l JOIN sources s USING (source_id) WHERE s.name = ? ORDER BY l.line_no",
        [name]).fetchall()]


def _assert_round_trip(con, path: Path) -> None:
    want, got = expected_lines(path), stored_lines(con, path.name)
    assert len(got) == len(want), f"{path.name}: {len(got)} lines stored, {len(want)} in the file"
    for i, (g, w) in enumerate(zip(got, want), start=1):
        assert g == w, f"{path.name} line {i} differs:\n  stored {g!r}\n  input  {w!r}"


def _line_files(which: str) -> list[Path]:
    """The files of ``which`` that are stored as lines (telemetry files are stored as samples)."""
    con = logsleuth.open_db(ingested(which), read_only=True)
    try:
        with_lines = {n for (n,) in con.execute(
            "SELECT DISTINCT s.name FROM sources s JOIN lines l USING (source_id)").fetchall()}
    finally:
        con.close()
    return [p for p in files_of(which) if p.name in with_lines]


@pytest.mark.parametrize("which", ["samples", "corpus"])
def test_every_line_of_every_file_round_trips(which):
    if which == "corpus" and not CORPUS.is_dir():
        pytest.skip("no corpus beside the checkout")
    files = _line_files(which)
    assert len(files) >= (10 if which == "samples" else 5)
    con = logsleuth.open_db(ingested(which), read_only=True)
    try:
        for path in files:
            _assert_round_trip(con, path)
    finally:
        con.close()


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_generated_log_round_trips(tmp_path, engine):
    path = generate(tmp_path / f"gen_{engine}.log", engine, 600_000, seed=11)
    con = logsleuth.open_db(str(tmp_path / "gen.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(path)], IngestOptions(chunk_bytes=96 * 1024, jobs=2, year=2026))
        bulk = con.execute("SELECT count(*) FROM lines_bulk").fetchone()[0]
        assert bulk > 1000  # the high-volume lines are in the bulk store
        _assert_round_trip(con, path)
    finally:
        con.close()


def test_awkward_lines_round_trip(tmp_path):
    path = tmp_path / "awkward.log"
    long = "[2026-05-01 10:00:00] " + "x" * (MAX_LINE_BYTES + 500)
    path.write_bytes(b"".join([
        b"[2026-05-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, "
        b"gen throughput (token/s): 61.20, #queue-req: 0\r\n",
        b"caf\xc3\xa9 \xff\xfe broken utf-8\n",
        long.encode() + b"\n",
        b"\ttabbed\x00nul\n",
        b"\n",
        b"last line without newline",
    ]))
    con = logsleuth.open_db(str(tmp_path / "awk.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(path)], IngestOptions())
        _assert_round_trip(con, path)
    finally:
        con.close()
