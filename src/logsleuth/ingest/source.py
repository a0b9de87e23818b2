"""Where a source was left: the resume point of incremental append, and rotated sets.

Contract:
* ``ResumeState`` is what an ingest leaves behind in ``source_state`` for the next one: the
  stream offset and line number where reading resumes, the fingerprint of what was read
  (a hash of its head and of the bytes just before its end), and the state carried across
  that boundary (time state, run state, detection, counters). The resume point is the
  start of the *open tail*: the lines of a record that may still continue (an open
  traceback or benchmark block, pre-launch chatter, a last line without its newline).
  Those lines are stored now, so the database is complete after every ingest, and are
  deleted and rebuilt by the next append; every line stays in exactly one place.
* ``find_continuation(con, src)`` returns the source a file continues (the same path or a
  member of the same rotated set whose fingerprint still matches and that has grown), or
  None: a truncated or replaced file no longer matches and is ingested as a new source.
* ``order_rotated(paths)`` orders the members of a rotated set (``server.log.2.gz``,
  ``server.log.1``, ``server.log``) oldest first, leaving other paths in their order.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..db.connection import fetch_one
from .normalize import RunState, TimeState
from .redact import redact_name

#: bytes of the head and of the end of the read text that a continuation must still hold
HEAD_BYTES = 64 * 1024
EDGE_BYTES = 4 * 1024

_ROTATED = re.compile(r"^(?P<base>.+?\.[^.]+?)(?:\.(?P<n>\d{1,4}))?(?P<gz>\.gz)?$")


@dataclass
class ResumeState:
    resume_offset: int  # stream (decompressed) offset where the next read starts: a line start
    resume_line: int  # line number of the line at resume_offset
    read_end: int  # stream offset after the last byte read
    head_len: int
    head_sha: str
    edge_sha: str  # of the EDGE_BYTES before read_end
    kind: str
    engine: str
    parse_engine: str
    scores: dict
    report_kind: str | None
    time: dict
    runs: dict
    stats: dict
    real_path: str
    family: str
    extra: dict = field(default_factory=dict)

    def time_state(self) -> TimeState:
        return TimeState(**self.time)

    def run_state(self) -> RunState:
        return RunState(**self.runs)

    def to_json(self) -> str:
        return json.dumps(vars(self))  # flat: the same text as dataclasses.asdict, without its deep copy

    @classmethod
    def from_json(cls, text: str) -> "ResumeState":
        return cls(**json.loads(text))


def snapshot(tstate: TimeState, rstate: RunState) -> tuple[dict, dict]:
    """Deep copies of the carried states, as JSON-ready dicts."""
    return json.loads(json.dumps(vars(tstate))), json.loads(json.dumps(vars(rstate)))  # (flat dataclasses)


def rotation_family(path: str) -> str:
    """``/logs/server.log`` for ``/logs/server.log.2.gz``, ``/logs/server.log.1`` and itself."""
    p = Path(os.path.abspath(path))
    m = _ROTATED.match(p.name)
    base = m.group("base") if m and (m.group("n") or m.group("gz")) else p.name
    return str(p.parent / base)


def _rotation_age(path: str) -> int:
    """0 for the live file, N for ``.N`` / ``.N.gz`` (higher = older)."""
    m = _ROTATED.match(Path(path).name)
    if not m:
        return 0
    if m.group("n"):
        return int(m.group("n"))
    return 1 if m.group("gz") else 0


def order_rotated(paths: list[str]) -> list[str]:
    """Members of one rotated set oldest first (highest number first, the live file last),
    at the position of the set's first member; other paths keep their order."""
    family = {p: rotation_family(p) for p in paths if p != "-"}  # (once per path: thousands of small files)
    groups: dict[str, list[str]] = {}
    for p, fam in family.items():
        groups.setdefault(fam, []).append(p)
    out, done = [], set()
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        fam = family[p]
        if fam in done:
            continue
        done.add(fam)
        members = groups[fam]
        out.extend(sorted(members, key=lambda q: -_rotation_age(q)) if len(members) > 1 else members)
    return out


def _read_span(real: Path, compressed: bool, start: int, n: int) -> bytes:
    try:
        if compressed:
            with gzip.open(real, "rb") as fh:
                fh.seek(start)
                return fh.read(n)
        with open(real, "rb") as fh:
            fh.seek(start)
            return fh.read(n)
    except (OSError, EOFError, zlib.error):
        return b""


def fingerprint(real: Path, compressed: bool, read_end: int) -> tuple[int, str, str]:
    """(head length, head hash, edge hash) of the first ``read_end`` bytes of the stream."""
    head_len = min(HEAD_BYTES, read_end)
    head = _read_span(real, compressed, 0, head_len)
    edge_from = max(0, read_end - EDGE_BYTES)
    edge = _read_span(real, compressed, edge_from, read_end - edge_from)
    return head_len, hashlib.sha256(head).hexdigest(), hashlib.sha256(edge).hexdigest()


def fingerprint_bytes(data: bytes, read_end: int) -> tuple[int, str, str]:
    """``fingerprint`` of a stream already in memory (a small file read whole)."""
    head_len = min(HEAD_BYTES, read_end)
    edge_from = max(0, read_end - EDGE_BYTES)
    return (head_len, hashlib.sha256(data[:head_len]).hexdigest(),
            hashlib.sha256(data[edge_from:read_end]).hexdigest())


def _still_holds(src, st: ResumeState) -> bool:
    """The file still starts with what was read (head and the bytes before the old end)."""
    if not src.compressed and src.size < st.read_end:
        return False  # truncated
    head = _read_span(src.real_path, src.compressed, 0, st.head_len)
    if len(head) != st.head_len or hashlib.sha256(head).hexdigest() != st.head_sha:
        return False
    edge_from = max(0, st.read_end - EDGE_BYTES)
    edge = _read_span(src.real_path, src.compressed, edge_from, st.read_end - edge_from)
    return len(edge) == st.read_end - edge_from and hashlib.sha256(edge).hexdigest() == st.edge_sha


def find_continuation(con, src) -> tuple[int, ResumeState] | None:
    """(source_id, state) of the source this file continues, or None."""
    if src.cleanup:  # stdin: a new stream every time
        return None
    # stored masked (redact.redact_name): compared masked; the content check below decides
    real = redact_name(os.path.abspath(src.real_path))
    fam = redact_name(rotation_family(str(src.real_path)))
    rows = con.execute("""SELECT source_id, state FROM source_state
                          WHERE real_path = ? OR family = ? ORDER BY source_id DESC""", [real, fam]).fetchall()
    for source_id, text in rows:
        st = ResumeState.from_json(text)
        if _still_holds(src, st):
            return source_id, st
    return None


def save(con, source_id: int, st: ResumeState) -> None:
    con.execute("DELETE FROM source_state WHERE source_id = ?", [source_id])
    con.execute("INSERT INTO source_state (source_id, real_path, family, read_end, resume_line, state)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [source_id, st.real_path, st.family, st.read_end, st.resume_line, st.to_json()])


def save_many(con, states: list[tuple[int, ResumeState]]) -> None:
    """``save`` for many sources in two statements (the small files of a batch)."""
    if not states:
        return
    import polars as pl

    from .write import insert

    con.execute("DELETE FROM source_state WHERE list_contains(?, source_id)", [[sid for sid, _ in states]])
    insert(con, "source_state", pl.DataFrame(
        [(sid, st.real_path, st.family, st.read_end, st.resume_line, st.to_json()) for sid, st in states],
        schema={"source_id": pl.Int32, "real_path": pl.Utf8, "family": pl.Utf8, "read_end": pl.Int64,
                "resume_line": pl.Int64, "state": pl.Utf8}, orient="row"))


def load(con, source_id: int) -> ResumeState | None:
    row = fetch_one(con.execute("SELECT state FROM source_state WHERE source_id = ?", [source_id]))
    return ResumeState.from_json(row[0]) if row else None


_ROTATED_LOG = re.compile(r".+\.(?:log|txt|out|err)\.\d{1,4}(?:\.gz)?", re.I)


def is_rotated_log(name: str) -> bool:
    """A rotated log's file name: ``server.log.1``, ``server.log.2.gz``."""
    return bool(_ROTATED_LOG.fullmatch(name))
