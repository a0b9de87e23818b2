"""Parse chunks ahead of the fold, on every core, and hand them back in read order.

Contract: ``ChunkParser(grammars, grammar_dirs, parse_engine, switch, jobs)``;
``submit(frame)`` takes the next chunk of read, redacted lines (``READ_COLUMNS``, in line
order) and returns a ticket; ``result(ticket)`` returns that chunk parsed, in the order
submitted: a ``Parsed`` whose frame has the read columns, the columns ``parse_frame`` adds
and ``_engine``, and whose tables are the typed rows of its claimed lines
(ingest/extract.py). ``reparse(frame)`` parses lines again with the engines the switch now
gives them (the fold carry after a later launch of another engine moved the switch point
back over them). ``close()`` stops the
workers. The result is the same for every ``jobs``: parsing is line-local and the engine
of each line is decided here, in the caller's process, in read order.

Why processes: parsing a chunk is ~30 polars calls with Python between them (shape tables,
span checks), so threads share one GIL; a worker process per core parses whole chunks while
the caller folds, stamps and stores the previous ones. A chunk travels to a worker as its
three parse inputs (line_no, raw, truncated) and comes back without them; the caller joins
the parsed columns onto the frame it kept. Frames travel as Arrow IPC files in a spool
folder (``/dev/shm`` when it has room) that the reader memory-maps and unlinks at once:
pickling a parsed 16 MiB chunk through a pipe cost 1.5 s, as much as parsing it; the
file costs ~0.15 s (typed rows come back the same way, a file per table part). The spool folder is removed by ``close()``. Workers start with ``spawn``
(a forked polars thread pool can deadlock) and load the grammars once; with ``jobs`` = 1, or
for a file of one or two chunks, parsing runs inline and no process is started; so it does when the caller's
main script has no ``__main__`` guard (``spawn_safe``), and when a worker cannot start.
"""
from __future__ import annotations

import os
import shutil
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import polars as pl

from ..scratch import scratch_dir
from .parse import Parsed, ShapeCache, parse_frame, shape_path_expected
from .shapes import Shapes
from .read import READ_COLUMNS

#: the columns a chunk sends to a parse worker
PARSE_INPUT = ("line_no", "raw", "truncated")


def default_jobs() -> int:
    """Parse processes by default: one per core this process may run on (a ``taskset`` or
    cgroup mask counts, not the machine's) beyond the one that folds and stores. On 2 cores
    that is 1, parsing inline: measured there, inline took 13.8 s for 200 MB, one parse
    worker 14.2 s and two 16.1 s (the fold, the writer thread and polars' own threads
    already keep both cores busy; a worker adds its start-up and the spool copies)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


class _Worker:
    """What a worker process keeps between chunks: the grammars and a shape cache per engine."""

    def __init__(self, grammar_dirs: tuple):
        from .grammars import checked_grammars

        self.grammars = checked_grammars(grammar_dirs)
        self.caches: dict[str, ShapeCache] = {}

    def parse(self, segments: list[tuple[str, pl.DataFrame]]) -> Parsed:
        return parse_segments(segments, self.grammars, self.caches, typed=True)


#: the worker state of this process (set once by the pool initializer; never in the caller)
_worker: _Worker | None = None  # noqa: PLW0603 - per-process state of a pool worker


def _init_worker(grammar_dirs: tuple) -> None:
    global _worker
    _worker = _Worker(grammar_dirs)


def _parse_in_worker(path_in: str, engines: list[tuple[str, int, int]], path_out: str) -> tuple:
    """Parse the chunk spooled at ``path_in`` (segments: engine, first row, rows) into
    ``path_out``, and its typed rows into ``path_out.<table>.<k>``; returns the paths."""
    assert _worker is not None, "parse worker not initialised"
    frame = read_spooled(path_in)
    parsed = _worker.parse([(e, frame.slice(a, n)) for e, a, n in engines])
    parsed.frame.write_ipc(path_out, compression="uncompressed")
    parts = []
    for table, frames in parsed.tables.items():
        for k, part in enumerate(frames):
            path = f"{path_out}.{table}.{k}"
            part.write_ipc(path, compression="uncompressed")
            parts.append((table, path))
    return path_out, parts


def read_spooled(path: str) -> pl.DataFrame:
    """A spooled frame, memory-mapped (no copy through Python) and unlinked: the mapping
    outlives the name, so nothing is left behind once the frame is freed."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    try:
        table = ipc.open_file(pa.memory_map(path)).read_all()
    finally:
        os.unlink(path)
    return pl.from_arrow(table)


def spawn_safe() -> bool:
    """Whether worker processes can start: ``spawn`` runs the caller's main script again in
    each of them (as ``__mp_main__``), so a script that ingests at top level, without an
    ``if __name__ == "__main__":`` guard, would ingest again in every worker (and wait for
    the database lock). Interactive sessions and notebooks have no main file; the
    ``logsleuth`` command and ``python -m logsleuth`` are guarded."""
    import re
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return True
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return False
    return re.search(r"""__name__\s*==\s*['"]__main__['"]""", text) is not None


def _spool_dir() -> str:
    """A private folder for spooled frames: in /dev/shm when it has room for a few chunks
    (memory, no disk writes), else the temporary folder."""
    base = None
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > 1 << 30:
            base = "/dev/shm"
    except OSError:
        pass
    return scratch_dir("logsleuth-parse-", base)  # (a killed ingest's folder is swept by the next)


def parse_segments(segments: list[tuple[str, pl.DataFrame]], grammars, caches: dict,
                   shapes: Shapes | None = None, typed: bool = False) -> Parsed:
    """Parse contiguous segments, each with its engine. The frame: the columns parsing
    added, plus ``_engine``, in line order (the input columns are left out: the caller has
    them); with ``typed``, the tables: the typed rows of every segment's claimed lines.
    ``shapes``: the line shapes of all segments together, in order (or None)."""
    parts = []
    tables: dict[str, list[pl.DataFrame]] = {}
    at = 0
    for engine, seg in segments:
        cache = caches.get(engine)
        if cache is None:
            cache = caches[engine] = ShapeCache()
        part = shapes.slice(at, seg.height) if shapes is not None else None
        at += seg.height
        out = parse_frame(seg.select(PARSE_INPUT), grammars, engine, cache, part, typed=typed)
        parts.append(out.frame.drop(PARSE_INPUT[1:]).with_columns(pl.lit(engine).alias("_engine")))
        for table, frames in out.tables.items():
            tables.setdefault(table, []).extend(frames)
    frame = parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")
    return Parsed(frame=frame, tables=tables)


class ChunkParser:
    def __init__(self, grammars, grammar_dirs: tuple, parse_engine: str, switch, jobs: int,
                 caches: dict, parallel: bool = True):
        self.grammars = grammars
        self.parse_engine = parse_engine
        self.switch = switch
        self.caches = caches  # engine -> ShapeCache of the inline path (shared by a process's files)
        self.pool = None
        self.jobs = jobs
        self.spool: str | None = None
        self._sent = 0
        if parallel and jobs > 1 and spawn_safe():
            import multiprocessing

            self.spool = _spool_dir()
            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_init_worker, initargs=(tuple(grammar_dirs),))
        self._open: deque = deque()

    def _segments(self, frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
        if self.switch is None:
            return [(self.parse_engine, frame)]
        return [(e, s) for e, s in self.switch.split(frame) if s.height]

    def wants_shapes(self, n_lines: int) -> bool:
        """Whether a chunk of ``n_lines`` lines should come with its line shapes (parsed
        inline, by shape; a worker process encodes its chunks itself)."""
        return self.pool is None and shape_path_expected(self.caches.get(self.parse_engine), n_lines)

    def submit(self, frame: pl.DataFrame, shapes: Shapes | None = None) -> tuple:
        """Queue a chunk for parsing; its engines are decided now, in read order.
        ``shapes``: the encoding of its raw lines (see ``wants_shapes``), or None."""
        segments = self._segments(frame)
        if self.pool is None or frame.height == 0:
            done: Future = Future()
            done.set_result(parse_segments(segments, self.grammars, self.caches, shapes, typed=True)
                            if frame.height else None)
            ticket = (frame, done, segments)
        else:
            self._sent += 1
            path_in = os.path.join(self.spool, f"{self._sent}.in.arrow")
            path_out = os.path.join(self.spool, f"{self._sent}.out.arrow")
            frame.select(PARSE_INPUT).write_ipc(path_in, compression="uncompressed")
            rows, at = [], 0
            for e, seg in segments:
                rows.append((e, at, seg.height))
                at += seg.height
            ticket = (frame, self.pool.submit(_parse_in_worker, path_in, rows, path_out), segments)
        self._open.append(ticket)
        return ticket

    def result(self, ticket: tuple) -> Parsed:
        frame, fut, segments = ticket
        assert self._open and self._open[0] is ticket, "chunks are taken back in the order submitted"
        self._open.popleft()
        try:
            parsed = fut.result()
        except BrokenProcessPool:
            # a worker could not start or died (e.g. a script without a __main__ guard, which
            # ``spawn`` imports again in each worker): parse inline from here on
            self._stop_pool()
            parsed = parse_segments(segments, self.grammars, self.caches, typed=True)
        if parsed is None:  # an empty chunk (a file that ends in a newline)
            return Parsed(frame=frame, tables={})
        if isinstance(parsed, tuple):  # parsed by a worker, spooled
            path, parts = parsed
            tables: dict[str, list[pl.DataFrame]] = {}
            for table, part in parts:
                tables.setdefault(table, []).append(read_spooled(part))
            parsed = Parsed(frame=read_spooled(path), tables=tables)
        return Parsed(frame=_joined(frame, parsed.frame), tables=parsed.tables)

    def reparse(self, frame: pl.DataFrame) -> Parsed:
        """Parse read lines again, inline, with the engines the switch gives them now."""
        frame = frame.select([c for c in frame.columns if c in READ_COLUMNS or c in ("_line", "_dup")])
        parsed = parse_segments(self._segments(frame), self.grammars, self.caches, typed=True)
        return Parsed(frame=_joined(frame, parsed.frame), tables=parsed.tables)

    @property
    def switch_points(self) -> int:
        return len(self.switch.switches) if self.switch is not None else 0

    def lookahead(self) -> int:
        """Chunks to parse ahead of the fold: one per worker; none inline (bounded memory)."""
        return 0 if self.pool is None else self.jobs

    def _stop_pool(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def close(self) -> None:
        self._stop_pool()
        if self.spool is not None:
            shutil.rmtree(self.spool, ignore_errors=True)
            self.spool = None


def _joined(frame: pl.DataFrame, parsed: pl.DataFrame) -> pl.DataFrame:
    """The read lines with the columns parsing added (``parsed``: the same lines, in order)."""
    if parsed.height != frame.height or not parsed["line_no"].equals(frame["line_no"]):
        raise AssertionError("a parsed chunk lost, gained or reordered lines")  # pragma: no cover
    return frame.hstack(parsed.drop("line_no"))
