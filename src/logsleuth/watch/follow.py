"""Follow growing log files (and a pipe) and hand out what is new.

Contract: ``FileFollower.poll()`` returns a ``Tail``: the complete physical lines that
arrived since the last poll (decoded UTF-8 with replacement, without their ``\\n``,
numbered from 1 within the current *generation* of the file), the current partial last
line (bytes after the last newline; a tqdm bar written to a file grows there with
``\\r``-separated updates), and notes about what happened to the file (appeared,
rotated, truncated, vanished). A new generation starts when the path is replaced by
another file (rotation: the inode changes) or shrinks (truncation, ``copytruncate``);
the rest of the old file is read before switching, so nothing written before a
rotation is lost. Polling is the mechanism (works on every file system, including
NFS and bind mounts, where inotify misses writes from other hosts); the session may
shorten the wait with watchfiles when it is installed.

``PipeFollower`` reads a pipe (``-``: ``docker logs -f name | logsleuth watch -``) on a
thread and also writes every byte to a spool file, so the database stores the stream
like any other file.
"""
from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass, field
from typing import BinaryIO

#: a poll reads at most this much; a huge backlog is read over several polls so the
#: live view keeps up and memory stays bounded
READ_LIMIT = 8 * 1024 * 1024
HEAD_BYTES = 64


@dataclass
class Tail:
    lines: list[str] = field(default_factory=list)
    first_line_no: int = 1  # line number of lines[0] within the generation
    partial: str = ""  # bytes after the last newline, decoded
    notes: list[str] = field(default_factory=list)  # "appeared", "rotated", "truncated", "vanished", "closed"
    generation: int = 0
    grew: bool = False  # any byte arrived (complete line or partial)


def latest_update(text: str) -> str:
    """The newest tqdm update of a physical line that is rewritten with ``\\r``.

    The stored line keeps every update; the live view shows only the last non-empty one
    (a bar may end with a bare ``\\r`` before its next redraw)."""
    parts = [p for p in text.split("\r") if p.strip()]
    return parts[-1] if parts else ""


def find_rotated(path: str, ino: tuple[int, int] | None) -> str | None:
    """Where a rotated file went: the file beside ``path`` with its old (dev, inode)
    (``server.log.1``, ``server.log-20260203``...); None when it was deleted or compressed."""
    if ino is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    for name in names:
        cand = os.path.join(folder, name)
        try:
            st = os.stat(cand)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == ino and os.path.abspath(cand) != os.path.abspath(path):
            return cand
    return None


class FileFollower:
    """Follow one path; survives the file appearing late, rotation and truncation."""

    def __init__(self, path: str, *, from_start: bool = True):
        self.path = path
        self.from_start = from_start
        self.generation = 0
        self._fh: BinaryIO | None = None
        self._ino: tuple[int, int] | None = None
        self._pos = 0
        self._buf = b""  # bytes after the last newline
        self._line_no = 0  # complete lines handed out in this generation
        self._missing_noted = False
        self._head = b""  # the generation's first bytes (up to HEAD_BYTES), to notice a rewrite
        self.previous_ino: tuple[int, int] | None = None

    # -- public -----------------------------------------------------------------
    @property
    def position(self) -> int:
        """Bytes of the current generation that were read (complete lines + partial)."""
        return self._pos

    @property
    def lines_done(self) -> int:
        return self._line_no

    def poll(self) -> Tail:
        tail = Tail(generation=self.generation, first_line_no=self._line_no + 1)
        if self._fh is None:
            if not self._open(tail):
                tail.partial = self._partial()
                return tail
        st = self._stat_path()
        if st is None:
            # path gone (rotated away and not yet recreated): keep reading the open file
            self._read(tail)
            if not self._missing_noted:
                tail.notes.append("vanished")
                self._missing_noted = True
            tail.partial = self._partial()
            return tail
        self._missing_noted = False
        if (st.st_dev, st.st_ino) != self._ino:
            self._read(tail)  # drain what the old file got before the switch
            self._flush_partial(tail)
            self._switch(tail, "rotated")
            return tail  # one generation per Tail: the new file is read by the next poll
        if os.fstat(self._fh.fileno()).st_size < self._pos or self._head_changed():
            self._flush_partial(tail)
            self._switch(tail, "truncated")
            return tail
        self._read(tail)
        tail.partial = self._partial()
        return tail

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # -- internals --------------------------------------------------------------
    def _head_changed(self) -> bool:
        """Truncated and rewritten past our position between two polls: the size alone
        cannot tell, the first bytes can (they are compared with what we read there)."""
        if not self._head:
            return False
        try:
            return os.pread(self._fh.fileno(), len(self._head), 0) != self._head
        except OSError:
            return False

    def _stat_path(self):
        try:
            return os.stat(self.path)
        except OSError:
            return None

    def _open(self, tail: Tail) -> bool:
        try:
            fh = open(self.path, "rb")
        except OSError:
            return False
        st = os.fstat(fh.fileno())
        self._fh, self._ino = fh, (st.st_dev, st.st_ino)
        self._pos = 0
        if not self.from_start:
            # --from-end: skip what is there, but from a line start so numbering stays honest
            fh.seek(0, os.SEEK_END)
            self._pos = fh.tell()
        if self.generation == 0:
            tail.notes.append("appeared")
        return True

    def _switch(self, tail: Tail, why: str) -> None:
        """End this generation (``tail`` keeps its lines); the next poll opens the new file."""
        self.previous_ino = self._ino  # (dev, inode) of the generation that ended
        self.close()
        self.generation += 1
        self._buf, self._line_no, self._pos, self._head = b"", 0, 0, b""
        self.from_start = True  # a new generation is always read whole
        tail.notes.append(why)

    def _read(self, tail: Tail) -> None:
        if self._fh is None:
            return
        self._fh.seek(self._pos)
        data = self._fh.read(READ_LIMIT)
        if not data:
            return
        if len(self._head) < HEAD_BYTES and self._pos < HEAD_BYTES:
            self._head = (self._head + data[:HEAD_BYTES - self._pos])[:HEAD_BYTES]
        self._pos += len(data)
        tail.grew = True
        buf = self._buf + data
        cut = buf.rfind(b"\n")
        if cut < 0:
            self._buf = buf
            return
        complete, self._buf = buf[:cut], buf[cut + 1:]
        lines = complete.decode("utf-8", "replace").split("\n")
        # CRLF files: the stored line drops the trailing CR the same way ingest does
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        if not tail.lines:
            tail.first_line_no = self._line_no + 1
        tail.lines.extend(lines)
        self._line_no += len(lines)

    def _flush_partial(self, tail: Tail) -> None:
        """A generation ends: its unterminated last line still counts as a line."""
        if self._buf:
            if not tail.lines:
                tail.first_line_no = self._line_no + 1
            tail.lines.append(self._buf.decode("utf-8", "replace"))
            self._line_no += 1
            self._buf = b""

    def _partial(self) -> str:
        return self._buf.decode("utf-8", "replace") if self._buf else ""


class PipeFollower(FileFollower):
    """Follow a pipe (stdin): a thread copies it to ``spool_path``; polls read the spool."""

    def __init__(self, stream: BinaryIO, spool_path: str):
        super().__init__(spool_path)
        self.display = "-"
        self._spool = open(spool_path, "wb")
        self._eof = threading.Event()
        self._errors: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True,
                                        name="logsleuth-watch-stdin")
        self._thread.start()

    @property
    def ended(self) -> bool:
        return self._eof.is_set()

    def _pump(self, stream: BinaryIO) -> None:
        try:
            read = getattr(stream, "read1", stream.read)
            while True:
                data = read(65536)
                if not data:
                    break
                self._spool.write(data)
                self._spool.flush()
        except (OSError, ValueError) as exc:  # closed pipe: treat as the end of the stream
            self._errors.put(exc)
        finally:
            self._spool.flush()
            self._eof.set()

    def poll(self) -> Tail:
        ended = self._eof.is_set()
        tail = super().poll()
        if ended:
            tail.notes.append("closed")
        return tail

    def close(self) -> None:
        super().close()
        try:
            self._spool.close()
        except OSError:
            pass
