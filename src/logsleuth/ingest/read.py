"""Read a log source as chunks of lines, with bounded memory.

Contract: ``open_source`` validates a path (or ``-`` for stdin, spooled to a temporary
file so it can be hashed and re-read) and returns a ``Source``; ``iter_chunks`` yields
``LineChunk`` objects holding at most about ``chunk_bytes`` of text as a polars frame
with columns ``line_no`` (1-based physical line number) and ``raw`` (decoded with
replacement, trailing CR removed, lines longer than ``MAX_LINE_BYTES`` cut and flagged).
gzip is decompressed transparently. The file size is fixed at open time: bytes appended
while ingesting are not read (``Source.grew`` tells).
"""
from __future__ import annotations

import errno
import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

import polars as pl

from ..errors import BadInputError
from .redact import redact_name

CHUNK_BYTES = 16 * 1024 * 1024  # peak RSS ~0.6-0.8 GB whatever the file size (32 MiB: ~0.9 GB)
#: longer lines are stored cut to this many bytes, with lines.truncated = true
MAX_LINE_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
#: the columns of a chunk as read, in this order: line number, text, cut flag, stream offset of
#: the line's start, replaced invalid bytes, NUL bytes, whether a CR was dropped
READ_COLUMNS = ["line_no", "raw", "truncated", "_off", "_bad", "_nul", "_cr"]
_ANSI = r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07"


@dataclass
class Source:
    path: str  # as given by the user ("-" for stdin)
    display_name: str
    real_path: Path  # file actually read (temp spool for stdin)
    size: int  # bytes on disk at open time
    sha256: str
    compressed: bool
    mtime: float
    cleanup: bool = False
    stats: dict = field(default_factory=lambda: {
        "bad_bytes": 0, "nul_bytes": 0, "truncated_lines": 0, "crlf_lines": 0,
    })
    grew: bool = False
    # where reading starts (incremental append resumes after what an earlier ingest stored):
    # a byte offset in the (decompressed) stream, always at the start of a line, and its number
    start_offset: int = 0
    start_line: int = 1
    # set by iter_chunks: the (decompressed) offset after the last byte read, and the
    # (offset, line_no) of a last line that had no newline yet (None when the text ended
    # with one): the next append re-reads from there
    read_end: int = 0
    partial: tuple | None = None
    spool: BinaryIO | None = None  # the open anonymous file stdin was copied to (read via /proc)
    _head: bytes = b""  # the longest head read so far (decompressed): the head is read once
    _head_asked: int = 0  # how many bytes that read asked for
    detection: object = None  # what the source is (ingest/stages.detect_source), decided once

    def head(self, n: int = 256 * 1024) -> bytes:
        """The first ``n`` bytes of the (decompressed) text, read once: the telemetry sniff,
        detection and the stored head share one read."""
        if n > self._head_asked:
            self._head = _read_head(self.real_path, self.compressed, self.display_name, n)
            self._head_asked = n
        return self._head[:n]

    def remember_head(self, data: bytes, n: int) -> None:
        """The first ``n`` bytes are ``data[:n]`` (a caller that read the whole file)."""
        self._head, self._head_asked = data[:n], n

    def close(self) -> None:
        if self.spool is not None:  # an anonymous stdin spool: closing it frees the space
            self.spool.close()
            self.spool = None
            return
        if self.cleanup:
            try:
                os.unlink(self.real_path)
            except OSError:
                pass


@dataclass
class LineChunk:
    frame: pl.DataFrame  # line_no, raw, truncated
    final: bool


def _hash_and_size(path: Path, limit: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        remaining = limit
        while remaining > 0:
            block = fh.read(min(8 * 1024 * 1024, remaining))
            if not block:
                break
            h.update(block)
            remaining -= len(block)
    return h.hexdigest()


#: magic bytes of common non-log files, so the error can say what the file is
_KNOWN_BINARY = [
    (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"), (b"PK\x03\x04", "a zip archive"), (b"\x7fELF", "an executable (ELF)"),
    (b"\xfd7zXZ\x00", "xz-compressed data"), (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive"), (b"SQLite format 3\x00", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
]
_COMPRESSED_HINT = "decompress it first; only gzip is read directly"
_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")  # not \t \n \v \f \r ESC


def _binary_reason(head: bytes) -> str | None:
    """Why ``head`` is not the start of a text log, or None when it looks like text.

    Scattered NUL bytes (many separate runs) mean a binary structure; a few runs, such as
    the zero-filled hole a log rotated with copytruncate starts with, are tolerated: they
    are replaced and counted in ``sources.nul_bytes``.
    """
    if not head:
        return None
    for magic, what in _KNOWN_BINARY:
        if head.startswith(magic):
            return what
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
            len(head) >= 64 and (head[1::2].count(0) > len(head) * 0.45 or head[0::2].count(0) > len(head) * 0.45)):
        return "UTF-16 encoded"
    if head[:3] == b"BZh" and head[4:10] == b"1AY&SY":
        return "bzip2-compressed data"
    if head[8:12] == b"DUCK":
        return "a DuckDB database"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "a tar archive"
    runs = len(re.findall(rb"\x00+", head))
    body = head.replace(b"\x00", b"")
    if not body:
        return "only NUL bytes"
    if runs > max(8, len(head) // 1000):
        return "binary data"
    text = body.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") + len(_CONTROL.findall(body))
    return "binary data" if bad > max(16, len(text) // 10) else None


def _looks_binary(head: bytes) -> bool:
    """A NUL-heavy or mostly undecodable head means an image, archive or random bytes."""
    return _binary_reason(head) is not None


def _first_text(real: Path, compressed: bool, display: str, n: int = 65536) -> bytes:
    """The first ``n`` bytes after a leading run of NUL bytes (b"" when all are NUL)."""
    try:
        opener = gzip.open if compressed else open
        with opener(real, "rb") as fh:
            while True:
                block = fh.read(1 << 20)
                if not block:
                    return b""
                stripped = block.lstrip(b"\x00")
                if stripped:
                    return (stripped + fh.read(n))[:n]
    except (OSError, EOFError, zlib.error) as exc:
        raise BadInputError(f"{display}: corrupt gzip data ({exc})") from None


def _unreadable(path: str, exc: OSError) -> BadInputError:
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return BadInputError(f"{path}: permission denied", hint="check the file's permissions")
    return BadInputError(f"{path}: cannot read: {exc.strerror or exc}")


def open_source(path: str) -> Source:
    """Validate and open one input; raise BadInputError with a one-line reason.

    Refused (exit code 3, nothing written): a missing path or broken link, a FIFO, socket
    or device (they can block or never end: pipe them to ``-``), an unreadable file, an
    empty or whitespace-only file, a file of NUL bytes, binary data (images, archives,
    databases, random bytes, other compression formats), and corrupt gzip data.
    """
    spool = None
    if path == "-":
        real, spool = _spool_stdin()
        display, cleanup = "<stdin>", True
    else:
        real = _check_path(path)
        display, cleanup = redact_name(path), False  # a token in a file name is not stored or shown
    try:
        src = _validate(path, real, display, cleanup)
        src.spool = spool
        return src
    except BaseException:
        if spool is not None:
            spool.close()
        elif cleanup:
            try:
                os.unlink(real)
            except OSError:
                pass
        raise


def _spool_stdin() -> tuple[Path, BinaryIO | None]:
    """stdin copied to a temporary file that has no name (O_TMPFILE, or unlinked as soon as
    it is created), so that no copy of the input outlives the process, even after kill -9.
    It is read back through /proc/self/fd (the open file is returned with its path and kept
    by the Source); where that does not exist, a named file is used and removed by
    ``Source.close``."""
    fd_dir = Path("/proc/self/fd")
    if fd_dir.is_dir():
        fh = tempfile.TemporaryFile(prefix="logsleuth-stdin-")
        shutil.copyfileobj(sys.stdin.buffer, fh)
        fh.flush()
        return fd_dir / str(fh.fileno()), fh
    with tempfile.NamedTemporaryFile(prefix="logsleuth-stdin-", delete=False) as spool:
        shutil.copyfileobj(sys.stdin.buffer, spool)
    return Path(spool.name), None


def _check_path(path: str) -> Path:
    real = Path(path)
    if not real.exists():
        if os.path.lexists(real):
            try:
                os.stat(real)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise BadInputError(f"{path}: symbolic link loop (the link leads back to itself)") from None
            raise BadInputError(f"{path}: broken symbolic link")
        raise BadInputError(f"{path}: no such file")
    if real.is_dir():
        raise BadInputError(f"{path}: is a directory with no log files in it")
    try:
        mode = real.stat().st_mode
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise BadInputError(f"{path}: not a regular file ({kind})",
                            hint=f"to read a stream, pipe it: ... | logsleuth ingest -")
    if not os.access(real, os.R_OK):
        raise BadInputError(f"{path}: permission denied", hint="check the file's permissions")
    return real


def check_input(path: str) -> None:
    """Every check of ``open_source`` but the hash, for one file path (not ``-``): used to
    refuse a bad input among several before anything is written, a new database included."""
    _inspect(path, _check_path(path), path)


def _validate(path: str, real: Path, display: str, cleanup: bool) -> Source:
    st, compressed = _inspect(path, real, display)
    sha = _hash_and_size(real, st.st_size)
    return Source(path=path, display_name=display, real_path=real, size=st.st_size, sha256=sha,
                  compressed=compressed, mtime=st.st_mtime, cleanup=cleanup)


def read_head(src: Source, n: int) -> str:
    """The first ``n`` bytes of ``src`` as text (invalid UTF-8 replaced), read once per source."""
    return src.head(n).decode("utf-8", "replace")


def _inspect(path: str, real: Path, display: str):
    """(stat, gzip?) of a readable, non-empty text input; BadInputError otherwise."""
    try:
        st = real.stat()
        with open(real, "rb") as fh:
            magic = fh.read(2)
    except OSError as exc:
        raise _unreadable(display, exc) from None
    size = st.st_size
    if size == 0:
        raise BadInputError(f"{display}: empty file, nothing to ingest")
    compressed = magic == GZIP_MAGIC
    head = _read_head(real, compressed, display)
    if not head:
        raise BadInputError(f"{display}: empty after decompression, nothing to ingest")
    if head[:1] == b"\x00":  # a zero-filled hole first (copytruncate): judge the text after it
        head = _first_text(real, compressed, display)
        if not head:
            raise BadInputError(f"{display}: only NUL bytes (a zero-filled file), nothing to ingest")
    if not head.strip():
        raise BadInputError(f"{display}: only whitespace, nothing to ingest")
    why = _binary_reason(head)
    if why:
        hint = (_COMPRESSED_HINT if "compressed" in why or "archive" in why
                else "convert it to UTF-8 first: iconv -f UTF-16 -t UTF-8" if why == "UTF-16 encoded"
                else "logsleuth reads text logs, optionally gzip-compressed")
        raise BadInputError(f"{display}: {why}, not a {'UTF-8' if 'UTF-16' in why else 'text'} log", hint=hint)
    return st, compressed


def _read_head(real: Path, compressed: bool, display: str, n: int = 65536) -> bytes:
    try:
        if compressed:
            with gzip.open(real, "rb") as fh:
                return fh.read(n)
        with open(real, "rb") as fh:
            return fh.read(n)
    except (OSError, EOFError, zlib.error) as exc:
        raise BadInputError(f"{display}: corrupt gzip data ({exc})") from None


class _Limited(io.RawIOBase):
    """Read at most ``limit`` bytes of a file: what was there when ingest started."""

    def __init__(self, fh: BinaryIO, limit: int):
        self._fh, self._left = fh, limit

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(b)[: self._left]
        n = self._fh.readinto(view)
        self._left -= n or 0
        return n or 0


def _lines_frame(text: str, first_line_no: int, cut_flags: list[int], offsets, replaced: bool) -> pl.DataFrame:
    """Split decoded text into physical lines (slow path: text that needed replacement).

    ``offsets``: the byte offset of each line's start (from the undecoded bytes: decoding
    with replacement never adds or removes a newline). Per line, ``_bad`` counts the
    replacement characters when the block needed replacement, ``_nul`` the NUL bytes
    (shown as U+FFFD), so the stored lines carry their own counts."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lines = pc.split_pattern(pa.array([text], pa.large_string()), "\n").flatten()
    frame = pl.DataFrame({"raw": pl.from_arrow(lines)}).with_row_index("line_no", offset=first_line_no)
    frame = frame.with_columns(
        pl.Series("_off", offsets, dtype=pl.Int64),
        (pl.col("raw").str.count_matches("\ufffd", literal=True) if replaced else pl.lit(0))
        .cast(pl.Int32).alias("_bad"),
        pl.col("raw").str.count_matches("\x00", literal=True).cast(pl.Int32).alias("_nul"))
    frame = frame.with_columns(pl.col("raw").str.replace_all("\x00", "\ufffd", literal=True))
    return _finish_frame(frame, cut_flags)


def _finish_frame(frame: pl.DataFrame, cut_flags: list[int]) -> pl.DataFrame:
    frame = frame.with_columns(pl.col("line_no").cast(pl.Int64))
    too_long = pl.col("raw").str.len_bytes() > MAX_LINE_BYTES
    if not cut_flags and not frame.select(too_long.any()).item():
        return frame.with_columns(pl.lit(False).alias("truncated"))
    truncated = too_long
    if cut_flags:
        truncated = truncated | pl.col("line_no").is_in(cut_flags)
    return frame.with_columns(
        pl.when(too_long).then(pl.col("raw").str.slice(0, MAX_LINE_BYTES)).otherwise(pl.col("raw")).alias("raw"),
        truncated.alias("truncated"),
    )


def _fast_frame(buf, lo: int, hi: int, first_line_no: int, base: int = 0) -> pl.DataFrame | None:
    """Lines of ``buf[lo:hi]``, a block of whole lines each ending in ``\n``, without a Python
    loop and without copying the text through Python strings: newline offsets come from
    numpy, the bytes become an Arrow string array in place, Arrow validates the UTF-8.
    Returns None when the block needs the slow path (invalid UTF-8 or NUL bytes)."""
    import numpy as np
    import pyarrow as pa

    if buf.find(b"\x00", lo, hi) >= 0:
        return None
    arr8 = np.frombuffer(buf, dtype=np.uint8, count=hi - lo, offset=lo)
    ends = np.flatnonzero(arr8 == 10)
    offsets = np.empty(len(ends) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    arr = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets),
                                           pa.py_buffer(memoryview(buf)[lo:hi]))
    try:
        arr.validate(full=True)  # UTF-8 check
    except pa.ArrowInvalid:
        return None
    raw = pl.from_arrow(arr).str.strip_suffix("\n")
    frame = pl.DataFrame({"raw": raw}).with_row_index("line_no", offset=first_line_no)
    zero = pl.lit(0, dtype=pl.Int32)
    frame = frame.with_columns(pl.Series("_off", offsets[:-1] + base, dtype=pl.Int64),
                               zero.alias("_bad"), zero.alias("_nul"))
    return _finish_frame(frame, [])


def _block_frame(buf, lo: int, hi: int, src: Source, first_line_no: int, cut_flags: list[int],
                 has_nl: bool, base: int) -> pl.DataFrame:
    """Frame of the lines of ``buf[lo:hi]`` (which ends in the newline of its last line when
    ``has_nl``; that newline does not start another line); ``base`` is the stream offset of
    ``buf[lo]``."""
    import numpy as np

    if not cut_flags:
        if has_nl:
            frame = _fast_frame(buf, lo, hi, first_line_no, base)
        else:
            tmp = bytearray(buf[lo:hi]) + b"\n"
            frame = _fast_frame(tmp, 0, len(tmp), first_line_no, base)
        if frame is not None:
            return frame
    block = bytes(buf[lo:hi - 1] if has_nl else buf[lo:hi])
    nl = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
    offsets = np.concatenate([[0], nl + 1]).astype(np.int64) + base
    text, replaced = _decode(block)
    return _lines_frame(text, first_line_no, cut_flags, offsets, replaced)


def _decode(block: bytes) -> tuple[str, bool]:
    """(text, whether invalid UTF-8 was replaced); NUL bytes are left for _lines_frame."""
    try:
        return block.decode("utf-8"), False
    except UnicodeDecodeError:
        return block.decode("utf-8", errors="replace"), True


def _read_into(stream, view) -> int:
    got = 0
    while got < len(view):
        n = stream.readinto(view[got:])
        if not n:
            break
        got += n
    return got


def _byte_stream(src: Source) -> BinaryIO:
    """The source's bytes from ``src.start_offset`` on (decompressed for gzip), up to the
    size it had when it was opened."""
    raw = open(src.real_path, "rb")
    if src.compressed:
        stream = gzip.GzipFile(fileobj=raw, mode="rb")
        if src.start_offset:
            stream.seek(src.start_offset)  # forward seek: decompresses and drops the prefix
        return stream  # type: ignore[return-value]
    raw.seek(src.start_offset)
    return io.BufferedReader(_Limited(raw, max(0, src.size - src.start_offset)),  # type: ignore[arg-type]
                             buffer_size=1 << 20)


def iter_chunks(src: Source, chunk_bytes: int = CHUNK_BYTES) -> Iterator[LineChunk]:  # long: one read loop whose buffer, offsets and line numbers move together
    """Yield chunks of whole lines. A line longer than a chunk is cut (bounded memory).

    Reading starts at ``src.start_offset`` (line number ``src.start_line``). Each chunk is
    read into a fresh buffer (the frame's text may point into it), after the unfinished last
    line of the previous one; nothing is copied through Python strings on the fast path.
    Frames carry ``_off`` (the stream offset where each line starts) and the per-line
    counts ``_bad``/``_nul``/``_cr``; ``src.read_end`` and ``src.partial`` tell where the
    text ended."""
    line_no = src.start_line
    pos = src.start_offset  # stream offset of buf[0]
    src.read_end, src.partial = pos, None
    pending = b""
    cut_pending = None  # (offset, line_no) of an over-long line whose rest is being skipped
    left = None if src.compressed else max(0, src.size - src.start_offset)  # bytes still to read
    try:
        with _byte_stream(src) as stream:
            while True:
                want = chunk_bytes if left is None else min(chunk_bytes, left)
                buf = bytearray(len(pending) + want)  # never more than the file holds
                buf[:len(pending)] = pending
                n = _read_into(stream, memoryview(buf)[len(pending):])
                if left is not None:
                    left -= n
                    if n == 0 and want > 0:
                        left = 0
                eof = n == 0
                lo, hi = 0, len(pending) + n
                src.read_end = pos + hi
                if cut_pending is not None:
                    nl = buf.find(b"\n", lo, hi)
                    if nl < 0:
                        if eof:  # the file ends inside the over-long line: re-read it next time
                            src.partial = cut_pending
                            return
                        pos += hi
                        pending = b""
                        continue  # still inside the over-long line: drop the bytes
                    lo = nl + 1
                    cut_pending = None
                if eof:
                    has_nl = hi > lo and buf[hi - 1] == 10
                    if hi - (1 if has_nl else 0) <= lo and line_no > src.start_line:
                        return
                    if hi == lo and line_no == src.start_line and src.start_offset:
                        return  # an append with nothing new after the resume point
                    frame = _block_frame(buf, lo, hi, src, line_no, [], has_nl, pos + lo)
                    if not has_nl:
                        src.partial = (pos + lo + int(_last_start(buf, lo, hi)), line_no + frame.height - 1)
                    yield LineChunk(_post(frame, src), final=True)
                    return
                nl = buf.rfind(b"\n", lo, hi)
                if nl < 0:
                    if hi - lo >= chunk_bytes:
                        # one line longer than a whole chunk: keep its head, skip the rest
                        head = bytes(buf[lo:lo + MAX_LINE_BYTES])
                        frame = _block_frame(head, 0, len(head), src, line_no, [line_no], False, pos + lo)
                        cut_pending = (pos + lo, line_no)
                        line_no += 1
                        pos += hi
                        pending = b""
                        yield LineChunk(_post(frame, src), final=False)
                    else:
                        pos += lo
                        pending = bytes(buf[lo:hi])
                    continue
                pending = bytes(buf[nl + 1:hi])
                frame = _block_frame(buf, lo, nl + 1, src, line_no, [], True, pos + lo)
                line_no += frame.height
                pos += nl + 1
                yield LineChunk(_post(frame, src), final=False)
    except (OSError, EOFError, zlib.error) as exc:
        raise BadInputError(f"{src.display_name}: corrupt or truncated data ({exc})") from None


def _last_start(buf, lo: int, hi: int) -> int:
    """Offset (from ``lo``) where the last line of ``buf[lo:hi]`` starts (no newline after it)."""
    nl = buf.rfind(b"\n", lo, hi)
    return 0 if nl < 0 else nl + 1 - lo


def _post(frame: pl.DataFrame, src: Source) -> pl.DataFrame:
    """Drop trailing CR (CRLF files, vLLM multi-line records), flagged per line in ``_cr``."""
    return frame.with_columns(pl.col("raw").str.ends_with("\r").alias("_cr"),
                              pl.col("raw").str.strip_suffix("\r")).select(READ_COLUMNS)


def strip_ansi(expr: pl.Expr) -> pl.Expr:
    return expr.str.replace_all(_ANSI, "")


def check_growth(src: Source) -> None:
    try:
        src.grew = (not src.cleanup) and src.real_path.stat().st_size > src.size
    except OSError:
        pass
