"""Where a large log can be cut into byte ranges that parse independently: server launches.

Contract: ``plan_split(path, split_bytes)`` returns a ``SplitPlan``: the file's byte ranges,
each starting at the first line of a run (a launch marker, with the launch chatter printed
just before it), so that no run spans two ranges, with what a range needs to be parsed as
in a whole-file ingest: its first line number (newlines counted before the cut), and the
run state carried into it (the ordinal of the run before it, the launches of Ray-tagged
processes before it). A file that is compressed, not larger than ``split_bytes``, or that
has no launch boundary past a cut point is one range (``plan.reason`` says why).

How: the literals of the grammars' launch patterns are found with ``mmap.find`` (a
memchr-speed byte scan, Python only per hit: a handful per launch), the lines they sit on
are classified by the ordinary parser, the launch ranks are replayed as
``ingest/normalize.assign_runs`` does, and the chatter before a chosen marker is found by
parsing a small window before it. The plan is a prediction: the range tasks report the
states they ended in and ``fleet/ranges.py`` ingests the file whole when a seam disagrees.
"""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

#: default size above which a file is split (``--split-bytes``)
SPLIT_BYTES = 256 << 20
#: bytes read before a launch marker to find the launch chatter that belongs to it
CHATTER_WINDOW = 256 << 10
#: more literal hits than this (a literal that is not launch-specific): the file is not split
MAX_HITS = 200_000
_COUNT_BLOCK = 64 << 20


def split_size(value: int | str | None) -> int:
    """``--split-bytes`` as a number of bytes: an int, or text such as ``256MiB``, ``2GB``,
    ``1000000``; 0 or None: never split. UsageError for anything else."""
    import re

    if value is None:
        return 0
    if isinstance(value, int):
        return max(0, value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B?\s*", str(value), re.I)
    if not m:
        from ..errors import UsageError

        raise UsageError(f"--split-bytes {value!r}: expected a size such as 256MiB, 2GB or a number of bytes")
    power = " KMGT".index(m.group(2).upper() or " ")
    return int(float(m.group(1)) * (1024 if m.group(3) else 1000) ** power)


@dataclass
class ByteRange:
    index: int
    start: int  # byte offset of the range's first line
    end: int  # byte offset after its last byte
    first_line: int  # 1-based number of its first line
    ordinal_before: int = 0  # run ordinal of the lines before it (0 for the first range)
    rank: int | None = None  # launch rank of its first marker (None for the first range)
    starts: list = field(default_factory=list)  # RunState.starts carried in
    pid_starts: list = field(default_factory=list)  # RunState.pid_starts carried in


@dataclass
class SplitPlan:
    ranges: list  # list[ByteRange]; one range: not split
    reason: str = ""  # why the file was not split (or into fewer ranges than its size asks)

    @property
    def split(self) -> bool:
        return len(self.ranges) > 1


@dataclass
class _Launch:
    offset: int
    line_no: int
    rank: int
    pid: int | None
    engine: str
    ordinal: int = 0  # > 0 when this marker starts a run


def plan_split(path: str, split_bytes: int = SPLIT_BYTES, grammar_dirs=()) -> SplitPlan:
    size = os.path.getsize(path)
    whole = [ByteRange(0, 0, size, 1)]
    if size <= split_bytes:
        return SplitPlan(whole, f"not above --split-bytes ({split_bytes} bytes)")
    with open(path, "rb") as fh:
        if fh.read(2) == b"\x1f\x8b":
            return SplitPlan(whole, "gzip-compressed: a range cannot be read without decompressing what precedes it")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _plan(path, mm, size, split_bytes, grammar_dirs, whole)


def _plan(path, mm, size, split_bytes, grammar_dirs, whole) -> SplitPlan:
    from ..ingest.stages import checked_grammars

    grammars = checked_grammars(grammar_dirs)
    launches = _launches(mm, grammars)
    if launches is None:
        return SplitPlan(whole, "launch literals too frequent to tell launches apart")
    _replay_ranks(launches)
    starts = [x for x in launches if x.ordinal > 1]  # the first launch keeps the lines before it
    if not starts:
        return SplitPlan(whole, "no second server launch in the file: a run is never split")
    ranges = [ByteRange(0, 0, size, 1)]
    target = split_bytes
    for cand in starts:
        if cand.offset < target or size - cand.offset < split_bytes // 4:
            continue  # keep each range near split_bytes; no sliver at the end
        cut = _chatter_start(path, mm, cand, ranges[-1].start, grammars)
        if cut is None:
            continue
        cut_off, cut_line = cut
        if cut_off <= ranges[-1].start:
            continue
        ranges[-1].end = cut_off
        before = [x for x in launches if x.ordinal and x.ordinal < cand.ordinal]
        ranges.append(ByteRange(
            len(ranges), cut_off, size, cut_line, ordinal_before=cand.ordinal - 1, rank=cand.rank,
            starts=[[cand.ordinal - 1, cut_line - 1]],
            pid_starts=[[x.pid, x.line_no, x.ordinal] for x in before if x.pid is not None]))
        target = cut_off + split_bytes
    if len(ranges) == 1:
        return SplitPlan(whole, "no launch boundary past a cut point")
    return SplitPlan(ranges)


def _launches(mm, grammars) -> list[_Launch] | None:
    """Every launch marker line of the file, in order, with its rank, pid and engine."""
    from ..ingest.stages import parse_frame

    lits: dict[bytes, list] = {}
    for g in grammars:
        for p in g.patterns:
            if p.launch is not None and p.literal:
                lits.setdefault(p.literal.encode(), []).append(p)
    line_starts: set[int] = set()
    for lit in lits:
        pos = mm.find(lit)
        while pos >= 0:
            line_starts.add(mm.rfind(b"\n", 0, pos) + 1)
            if len(line_starts) > MAX_HITS:
                return None
            nl = mm.find(b"\n", pos)
            pos = -1 if nl < 0 else mm.find(lit, nl)
    if not line_starts:
        return []
    offsets = sorted(line_starts)
    numbers = _line_numbers(mm, offsets)
    raws = []
    for off in offsets:
        nl = mm.find(b"\n", off)
        raws.append(mm[off:nl if nl >= 0 else len(mm)].decode("utf-8", "replace").removesuffix("\r"))
    frame = pl.DataFrame({"line_no": numbers, "raw": raws}, schema={"line_no": pl.Int64, "raw": pl.Utf8})
    ranks = {p.name: (p.launch, g.engine) for g in grammars for p in g.patterns if p.launch is not None}
    engines = sorted({e for _, e in ranks.values()})
    found: dict[int, _Launch] = {}
    for engine in engines:  # a line is a marker of the engine whose grammar claims it
        parsed = parse_frame(frame, grammars, engine).frame
        for line_no, pattern, pid in parsed.select("line_no", "pattern", "pid").iter_rows():
            if pattern in ranks and ranks[pattern][1] == engine and line_no not in found:
                found[line_no] = _Launch(0, line_no, ranks[pattern][0], pid, engine)
    by_line = dict(zip(numbers, offsets))
    out = sorted(found.values(), key=lambda x: x.line_no)
    for x in out:
        x.offset = by_line[x.line_no]
    return out


def _replay_ranks(launches: list[_Launch]) -> None:
    """Which markers start a run, as ``normalize.assign_runs`` decides: a marker that does not
    continue the launch sequence of the current run (banner 0 -> args 1 -> engine config 2)."""
    ordinal, prev = 0, None
    for x in launches:
        if prev is None or x.rank < prev or (x.rank == prev and x.rank == 0):
            ordinal += 1
            x.ordinal = ordinal
        prev = x.rank


def _line_numbers(mm, offsets: list[int]) -> list[int]:
    """1-based line number of the line starting at each offset (ascending): newlines counted
    with numpy in bounded blocks."""
    import numpy as np

    arr = np.frombuffer(mm, dtype=np.uint8)
    out, count, pos = [], 0, 0
    for off in offsets:
        while pos < off:
            hi = min(off, pos + _COUNT_BLOCK)
            count += int(np.count_nonzero(arr[pos:hi] == 10))
            pos = hi
        out.append(count + 1)
    del arr
    return out


def _chatter_start(path, mm, launch: _Launch, floor: int, grammars) -> tuple[int, int] | None:
    """(offset, line number) where the run of ``launch`` starts: the first line of the unbroken
    streak of launch chatter right before its marker (``prelaunch`` lines without a
    timestamp, ``prelaunch_stamped`` lines), found by parsing a window before the marker.
    None when the streak reaches back past the window (no safe cut here)."""
    from ..formats.grammar import role_map
    from ..ingest.stages import byte_range, fold, parse_frame, patterns_for, read_chunks

    lo = max(floor, launch.offset - CHATTER_WINDOW)
    if lo > floor:
        lo = mm.find(b"\n", lo, launch.offset) + 1  # from a whole line
        if lo <= 0:
            return None
    if lo == launch.offset:
        return launch.offset, launch.line_no
    first = launch.line_no - mm[lo:launch.offset].count(b"\n")
    src = byte_range(path, launch.offset, "", lo, first, display=path)
    frame = pl.concat([c.frame for c in read_chunks(src)], how="vertical_relaxed")
    roles = role_map(grammars)
    # folded as the pipeline folds it: an indented line after a warning is labelled
    # "continuation" there, which is launch chatter too
    parsed = fold(parse_frame(frame, grammars, launch.engine).frame, patterns_for(grammars, launch.engine), {},
                  final=True).frame
    movable = (parsed["pattern"].is_in(roles.get("prelaunch", [])).fill_null(False) & parsed["time"].is_null()) | \
        parsed["pattern"].is_in(roles.get("prelaunch_stamped", [])).fill_null(False)
    flags = movable.to_list()
    n = 0
    while n < len(flags) and flags[len(flags) - 1 - n]:
        n += 1
    if n == len(flags) and lo > floor:
        return None
    if n == 0:
        return launch.offset, launch.line_no
    row = len(flags) - n
    return int(frame["_off"][row]), int(frame["line_no"][row])
