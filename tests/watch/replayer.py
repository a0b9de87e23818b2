"""Replay a log into a file at its own timestamps, sped up, the way a server writes it.

``Replayer(source, target, speed=100).start()`` writes the lines of ``source`` (a real or
authored log) into ``target`` on a thread: each line when its timestamp comes due
(``speed`` log seconds per wall second), tqdm bars (which carry no timestamp) on the bar's
own elapsed clock, and a physical line holding ``\\r``-separated bar updates one update at
a time, its newline only at the end (the way tqdm grows a line in a file). Options stage
what a watcher must survive: ``pause_before={line_no: wall_s}`` holds the writer,
``stop_after=line_no`` ends the replay there (the server killed), ``rotate_before`` /
``truncate_before={line_no}`` rotate (rename + new file) or truncate the target first,
``max_gap_s`` shortens long quiet stretches (log seconds); ``settle_s`` (wall) passes before a
truncation, as logrotate's copy does (a rotation loses nothing: the old file stays). ``wait()`` joins the thread.
"""
from __future__ import annotations

import datetime as dt
import os
import re
import threading
import time

_SGL = re.compile(rb"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)?")
_VLLM = re.compile(rb"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
_BAR = re.compile(rb"(\d+)/(\d+) \[(\d+(?::\d+)+)<")


def _stamp(line: bytes) -> dt.datetime | None:
    m = _SGL.search(line[:120])
    if m:
        return dt.datetime.strptime(m.group(1).decode(), "%Y-%m-%d %H:%M:%S")
    m = _VLLM.search(line[:200])
    if m:
        return dt.datetime.strptime("2026-" + m.group(1).decode(), "%Y-%m-%d %H:%M:%S")
    return None


def _elapsed(seg: bytes) -> tuple[float, int, int] | None:
    m = _BAR.search(seg)
    if not m:
        return None
    secs = 0
    for part in m.group(3).split(b":"):
        secs = secs * 60 + int(part)
    return float(secs), int(m.group(1)), int(m.group(2))


def schedule(data: bytes, max_gap_s: float | None = None) -> list[tuple[float, int, bytes]]:
    """(log seconds from the first stamp, line_no, bytes to write) for every write."""
    out: list[tuple[float, int, bytes]] = []
    now: dt.datetime | None = None
    bar_t0: dt.datetime | None = None
    bar_key = None
    offset = 0.0  # log seconds removed by max_gap_s
    first: dt.datetime | None = None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, line in enumerate(lines, start=1):
        segs = line.split(b"\r")
        for j, seg in enumerate(segs):
            piece = seg + (b"\r" if j < len(segs) - 1 else b"\n")
            ts = _stamp(seg)
            bar = _elapsed(seg) if ts is None else None
            if ts is not None:
                if now is not None and max_gap_s is not None and (ts - now).total_seconds() > max_gap_s:
                    offset += (ts - now).total_seconds() - max_gap_s
                now = ts if now is None or ts > now else now
                bar_key = None
            elif bar is not None and now is not None:
                elapsed, n, total = bar
                if bar_key is None or bar_key[1] != total or n < bar_key[0] or elapsed < bar_key[2]:
                    bar_t0 = now - dt.timedelta(seconds=elapsed)
                bar_key = (n, total, elapsed)
                t = bar_t0 + dt.timedelta(seconds=elapsed)
                now = t if t > now else now
            if first is None and now is not None:
                first = now
            t_log = 0.0 if first is None else (now - first).total_seconds() - offset
            out.append((t_log, i, piece))
    return out


class Replayer:
    def __init__(self, source: str, target: str, speed: float = 100.0, *, start_line: int = 1,
                 stop_after: int | None = None, pause_before: dict | None = None,
                 rotate_before: set | None = None, truncate_before: set | None = None,
                 max_gap_s: float | None = None, settle_s: float = 0.3):
        with open(source, "rb") as fh:
            self.plan = [w for w in schedule(fh.read(), max_gap_s)
                         if w[1] >= start_line and (stop_after is None or w[1] <= stop_after)]
        self.target, self.speed, self.settle_s = target, speed, settle_s
        self.pause_before = dict(pause_before or {})
        self.rotate_before, self.truncate_before = set(rotate_before or ()), set(truncate_before or ())
        self.rotated_to: list[str] = []
        self.wall_start: float | None = None
        self.written_line = 0
        self._thread = threading.Thread(target=self._run, daemon=True, name="replayer")

    def start(self) -> "Replayer":
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def _run(self) -> None:
        fh = open(self.target, "ab")
        t0_log = self.plan[0][0] if self.plan else 0.0
        self.wall_start = time.monotonic()
        shift = 0.0  # wall seconds added by pauses
        seen_lines = set()
        try:
            for t_log, line_no, piece in self.plan:
                if line_no not in seen_lines:
                    seen_lines.add(line_no)
                    if line_no in self.pause_before:
                        fh.flush()
                        time.sleep(self.pause_before[line_no])
                        shift += self.pause_before[line_no]
                    if line_no in self.truncate_before:
                        # copytruncate copies first: readers catch up meanwhile (what they miss
                        # between the copy and the truncation is lost for every reader)
                        time.sleep(self.settle_s)
                    if line_no in self.rotate_before:
                        fh.close()
                        rotated = f"{self.target}.{len(self.rotated_to) + 1}"
                        os.rename(self.target, rotated)
                        self.rotated_to.append(rotated)
                        fh = open(self.target, "ab")
                    if line_no in self.truncate_before:
                        fh.flush()
                        os.truncate(self.target, 0)
                due = self.wall_start + shift + (t_log - t0_log) / self.speed
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                fh.write(piece)
                fh.flush()
                self.written_line = line_no
        finally:
            fh.close()
