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

A replacement is checked before it is read: a path replaced by a symbolic link (unless the
watched path was a link to begin with and still points into the same folder), by a file of
another owner than the one watched, or by a file whose permission bits do not let the user
read it (also for root) is not followed: ``refused`` says why (the Tail notes it once as
``refused: <why>``) and nothing of it is read, until the path is a proper file again. A line
growing without a newline keeps at most ``LINE_CAP`` bytes (the rest up to its newline is
skipped, as ingest cuts a stored line), so memory stays bounded whatever is written.

``PipeFollower`` reads a pipe (``-``: ``docker logs -f name | logsleuth watch -``) on a
thread and also writes every byte to a spool file, so the database stores the stream
like any other file.
"""
from __future__ import annotations

import errno
import os
import queue
import stat
import threading
from dataclasses import dataclass, field
from typing import BinaryIO

#: a poll reads at most this much; a huge backlog is read over several polls so the
#: live view keeps up and memory stays bounded
READ_LIMIT = 8 * 1024 * 1024
HEAD_BYTES = 64
#: the longest line kept (ingest's MAX_LINE_BYTES: a stored line is cut there too)
LINE_CAP = 64 * 1024


@dataclass
class Tail:
    lines: list[str] = field(default_factory=list)
    first_line_no: int = 1  # line number of lines[0] within the generation
    partial: str = ""  # bytes after the last newline, decoded
    notes: list[str] = field(default_factory=list)  # "appeared", "rotated", "truncated", "vanished", "closed",
    # "long_line" (a line passed LINE_CAP without its newline), "refused: <why>"
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


@dataclass
class _Given:
    """What the watched path was when the watch began: whether it was a link (and into which
    folder), and whose file it was; a replacement must match it to be read."""

    link_dir: str | None
    owner: int

    @classmethod
    def of(cls, path: str) -> "_Given":
        try:
            is_link = os.path.islink(path)
            owner = os.stat(path).st_uid
        except OSError:  # not there yet: the user's own file is expected
            return cls(None, os.geteuid())
        return cls(os.path.dirname(os.path.realpath(path)) if is_link else None, owner)

    def refusal(self, path: str, st: os.stat_result) -> str | None:
        """Why the file ``st`` (opened at ``path``) is not to be read, or None."""
        if self.link_dir and os.path.dirname(os.path.realpath(path)) != self.link_dir:
            return "replaced by a link to another folder"
        if not stat.S_ISREG(st.st_mode):
            return "replaced by something that is not a regular file"
        if st.st_uid != self.owner:
            return f"replaced by a file of another user (uid {st.st_uid})"
        if not st.st_mode & stat.S_IRUSR:  # the owner's own read bit: root honours it too
            return "not readable by its owner (permissions)"
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
        self._skipping = False  # past LINE_CAP of the current line: bytes dropped until its newline
        self.previous_ino: tuple[int, int] | None = None
        self._given = _Given.of(path)
        self.refused: str | None = None  # why the file now at the path is not read
        self._refused_ino: tuple[int, int] | None = None

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

    def vetted_now(self) -> bool:
        """Whether the path still names the file this follower checked and reads (checked
        again right before the database reads the path), and is not in the middle of an
        over-long line (ingest would read all of it while it grows: it is stored once its
        newline comes)."""
        try:
            st = os.stat(self.path) if self._given.link_dir else os.lstat(self.path)
        except OSError:
            return False
        return self._fh is not None and (st.st_dev, st.st_ino) == self._ino and not self._skipping

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
            # a path that was not a link is opened without following one (no swap in between)
            fd = os.open(self.path, os.O_RDONLY | (0 if self._given.link_dir else os.O_NOFOLLOW))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._refuse(tail, "replaced by a link", os.lstat(self.path))
            return False
        st = os.fstat(fd)
        why = self._given.refusal(self.path, st)
        if why:
            os.close(fd)
            self._refuse(tail, why, st)
            return False
        self.refused = None
        fh = os.fdopen(fd, "rb")
        self._fh, self._ino = fh, (st.st_dev, st.st_ino)
        self._pos = 0
        if not self.from_start:
            # --from-end: skip what is there, but from a line start so numbering stays honest
            fh.seek(0, os.SEEK_END)
            self._pos = fh.tell()
        if self.generation == 0:
            tail.notes.append("appeared")
        return True

    def _refuse(self, tail: Tail, why: str, st) -> None:
        """Say once per file why the one now at the path is not read."""
        self.refused = why
        if self._refused_ino != (st.st_dev, st.st_ino):
            self._refused_ino = (st.st_dev, st.st_ino)
            tail.notes.append(f"refused: {why}")

    def _switch(self, tail: Tail, why: str) -> None:
        """End this generation (``tail`` keeps its lines); the next poll opens the new file."""
        self.previous_ino = self._ino  # (dev, inode) of the generation that ended
        self.close()
        self.generation += 1
        self._buf, self._line_no, self._pos, self._head, self._skipping = b"", 0, 0, b"", False
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
        data = self._capped(data)
        if data is None:
            return
        buf = self._buf + data
        cut = buf.rfind(b"\n")
        if cut < 0:
            self._buf = buf[:LINE_CAP]
            self._start_skipping(tail, len(buf) > LINE_CAP)
            return
        complete, self._buf = buf[:cut], buf[cut + 1:]
        if len(self._buf) > LINE_CAP:
            self._buf = self._buf[:LINE_CAP]
            self._start_skipping(tail, True)
        lines = [ln[:LINE_CAP] for ln in complete.split(b"\n")]  # (bytes: the cut is ingest's)
        lines = b"\n".join(lines).decode("utf-8", "replace").split("\n")
        # CRLF files: the stored line drops the trailing CR the same way ingest does
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        if not tail.lines:
            tail.first_line_no = self._line_no + 1
        tail.lines.extend(lines)
        self._line_no += len(lines)

    def _start_skipping(self, tail: Tail, over: bool) -> None:
        if over and not self._skipping:
            tail.notes.append("long_line")
        self._skipping = over

    @property
    def in_long_line(self) -> bool:
        """Inside a line longer than LINE_CAP whose newline has not come yet."""
        return self._skipping

    def _capped(self, data: bytes) -> bytes | None:
        """``data`` without the bytes of an over-long line past its cap (None: all of it is)."""
        if not self._skipping:
            return data
        nl = data.find(b"\n")
        if nl < 0:
            return None
        self._skipping = False
        return b"\n" + data[nl + 1:]  # ends the capped line held in _buf

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
