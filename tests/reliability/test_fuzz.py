"""Property tests: documents mixing real log lines (the grammars' sample lines and blocks of the
bundled samples), garbage text and bytes, truncated lines, CRLF, NULs and interleavings of two
engines' logs. Properties: no crash (only a clean BadInputError, with nothing written), every
physical line stored exactly once with its number, every derived row pointing at a stored line,
and idempotent re-ingest.

Example counts come from the hypothesis profile registered in tests/conftest.py: 30 in CI,
more on demand with ``LOGSLEUTH_FUZZ_EXAMPLES=2000 pytest tests/reliability/test_fuzz.py``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import logsleuth
from logsleuth.errors import BadInputError
from logsleuth.formats.grammar import load_grammars
from logsleuth.ingest.pipeline import IngestOptions
from logsleuth.ingest.read import iter_chunks, open_source

from support.paths import SAMPLES

pytestmark = pytest.mark.slow  # fuzz

SAMPLE_LINES = sorted({s for g in load_grammars() for p in g.patterns for s in p.samples})
_FILES = [SAMPLES / "sglang_tuned_v1.log", SAMPLES / "vllm_eagle3.log", SAMPLES / "eras" / "sglang_capture_oom.log",
          SAMPLES / "eras" / "vllm_v1_0.8.5_spec.log", SAMPLES / "bench_sglang_tuned_v1_c1.txt"]
FILE_LINES = [f.read_bytes().split(b"\n") for f in _FILES if f.exists()]
DERIVED = ["events", "decode_stats", "prefill_stats", "spec_stats", "errors", "config", "bench_results"]


line_text = st.sampled_from(SAMPLE_LINES).map(lambda s: s.encode("utf-8"))
truncated = st.tuples(st.sampled_from(SAMPLE_LINES), st.floats(0, 1)).map(
    lambda t: t[0].encode("utf-8")[: int(len(t[0].encode("utf-8")) * t[1])])  # may cut a UTF-8 sequence
garbage_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120).map(lambda s: s.encode("utf-8"))
garbage_bytes = st.binary(max_size=40)
specials = st.sampled_from([b"", b"\r", b"\x00", b"\x1b[31mERROR\x1b[0m colour", b"\t  ", b"Traceback (most recent call last):",
                            b"  File \"x.py\", line 1, in <module>", b"ValueError: boom", b"\xef\xbb\xbfBOM line"])


@st.composite
def real_block(draw) -> list[bytes]:
    lines = draw(st.sampled_from(FILE_LINES))
    start = draw(st.integers(0, max(0, len(lines) - 1)))
    return lines[start:start + draw(st.integers(1, 30))]


@st.composite
def interleaved(draw) -> list[bytes]:
    a, b = draw(real_block()), draw(real_block())
    out = []
    for i in range(max(len(a), len(b))):
        out += ([a[i]] if i < len(a) else []) + ([b[i]] if i < len(b) else [])
    return out


piece = st.one_of(line_text.map(lambda x: [x]), truncated.map(lambda x: [x]), garbage_text.map(lambda x: [x]),
                  garbage_bytes.map(lambda x: [x]), specials.map(lambda x: [x]), real_block(), interleaved())


@st.composite
def documents(draw) -> bytes:
    lines = [ln for part in draw(st.lists(piece, min_size=1, max_size=15)) for ln in part]
    sep = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = sep.join(ln.replace(b"\n", b" ") for ln in lines)
    return body + (sep if draw(st.booleans()) else b"")


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


@pytest.fixture(scope="module")
def con():
    c = logsleuth.open_db(":memory:")
    yield c
    c.close()


def _count(con, table: str, source_id: int) -> int:
    return con.execute(f"SELECT count(*) FROM {table} WHERE source_id = ?", [source_id]).fetchone()[0]


def _write(data: bytes) -> str:
    fd, path = tempfile.mkstemp(prefix="fuzz-", suffix=".log")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


@given(data=documents(), chunk=st.integers(16, 4096))
def test_reader_numbers_every_line_once(data, chunk):
    """Whatever the chunk size, the reader yields each physical line once, in order."""
    path = _write(data)
    try:
        try:
            src = open_source(path)
        except BadInputError:
            return
        try:
            frames = [c.frame for c in iter_chunks(src, chunk)]
        finally:
            src.close()
        nos = [n for f in frames for n in f["line_no"].to_list()]
        assert nos == list(range(1, physical_lines(data) + 1))
        expected = data[:-1].split(b"\n") if data.endswith(b"\n") else data.split(b"\n")
        raws = [r for f in frames for r in f["raw"].to_list()]
        for want, got in zip(expected, raws):
            if len(want) < chunk:  # longer lines may be cut at a chunk (flagged truncated)
                want_text = want.decode("utf-8", "replace").replace("\x00", "\ufffd")
                assert got == want_text.removesuffix("\r")
    finally:
        os.unlink(path)


@given(data=documents(), check_replace=st.booleans())
def test_ingest_accounts_for_every_line_and_is_idempotent(con, data, check_replace):
    path = _write(data)
    n_sources = con.execute("SELECT count(*) FROM sources").fetchone()[0]
    try:
        try:  # --replace: the same bytes may have come up in an earlier example (or a replay)
            (res,) = logsleuth.ingest_files(con, [path], IngestOptions(replace=True))
        except BadInputError:
            assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == n_sources  # nothing written
            return
        sid = res.source_id
        if res.status == "replaced":
            n_sources -= 1
        n = physical_lines(data)
        assert res.n_lines == n
        row = con.execute("""SELECT count(*), count(DISTINCT line_no), min(line_no), max(line_no),
                                    count(*) FILTER (WHERE kind IS NULL)
                             FROM lines WHERE source_id = ?""", [sid]).fetchone()
        assert row == (n, n, 1, n, 0)
        # a line's run belongs to its source (environment reports have no runs: run_id NULL)
        assert con.execute("""SELECT count(*) FROM lines l WHERE l.source_id = ? AND l.run_id IS NOT NULL
                              AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = l.run_id
                                              AND r.source_id = l.source_id)""", [sid]).fetchone()[0] == 0
        for table in DERIVED:  # derived rows point at stored lines of their source
            orphans = con.execute(f"""SELECT count(*) FROM {table} t WHERE t.source_id = ? AND NOT EXISTS
                                      (SELECT 1 FROM lines l WHERE l.source_id = t.source_id
                                       AND l.line_no = t.line_no)""", [sid]).fetchone()[0]
            assert orphans == 0, table
        before = {t: _count(con, t, sid) for t in DERIVED + ["lines", "runs", "templates"]}
        (again,) = logsleuth.ingest_files(con, [path])
        assert again.status == "skipped" and again.source_id == sid
        assert {t: _count(con, t, sid) for t in before} == before
        if check_replace:  # a full second pipeline run: half of the examples
            (replaced,) = logsleuth.ingest_files(con, [path], IngestOptions(replace=True))
            assert replaced.status == "replaced" and replaced.source_id == sid and replaced.n_lines == n
            assert {t: _count(con, t, sid) for t in before} == before
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == n_sources + 1
    finally:
        os.unlink(path)
