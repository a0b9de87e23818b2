"""Rules under a deadline, and stopped at once by Ctrl-C or SIGTERM.

Contract: ``run_all(items, run_one, workers)`` calls ``run_one(item, running)`` for every
item on up to ``workers`` threads and returns the results in order. Each call registers the
DuckDB cursor it runs on with ``running.track(cursor, name, timeout_s)``; the calling
thread wakes every ``TICK_S`` seconds, interrupts a cursor past its deadline (``DuckDB's
interrupt``: the query ends with an error and ``running.timed_out`` names it) and, when a
``KeyboardInterrupt`` reaches it (Ctrl-C, or SIGTERM as ``interrupts.install_sigterm`` makes
it), interrupts every running cursor, waits at most ``STOP_WAIT_S`` for the workers and
re-raises: the command exits 130 within a second instead of running the query to its end
(a worker thread cannot be interrupted by Python, and a pool's exit would wait for it).
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Callable, Iterator

TICK_S = 0.1
STOP_WAIT_S = 0.5


class Running:
    """The cursors of the rules running now, with their deadlines."""

    def __init__(self):
        self._lock = threading.Lock()
        self._cursors: dict[int, tuple[object, str, float | None]] = {}
        self.timed_out: set[str] = set()

    @contextmanager
    def track(self, cursor, name: str, timeout_s: float | None) -> Iterator[None]:
        end = None if timeout_s is None else time.monotonic() + timeout_s
        with self._lock:
            self._cursors[id(cursor)] = (cursor, name, end)
        try:
            yield
        finally:
            with self._lock:
                self._cursors.pop(id(cursor), None)

    def expire(self) -> None:
        """Interrupt every cursor past its deadline."""
        now = time.monotonic()
        with self._lock:
            late = [(c, n) for c, n, end in self._cursors.values() if end is not None and now >= end]
        for cursor, name in late:
            self.timed_out.add(name)
            cursor.interrupt()

    def interrupt_all(self) -> None:
        with self._lock:
            cursors = [c for c, _, _ in self._cursors.values()]
        for cursor in cursors:
            cursor.interrupt()


class _Untracked:
    """``Running`` for a call outside ``run_all``: no deadline, nothing to interrupt."""

    timed_out: set = frozenset()

    @contextmanager
    def track(self, cursor, name, timeout_s):
        yield


UNTRACKED = _Untracked()


def run_all(items: list, run_one: Callable, workers: int) -> list:
    running = Running()
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(items))), thread_name_prefix="logsleuth-rule")
    futures = [pool.submit(run_one, item, running) for item in items]
    try:
        while True:
            done, pending = wait(futures, timeout=TICK_S, return_when=FIRST_EXCEPTION)
            if not pending or any(f.exception() for f in done):
                break
            running.expire()
        return [f.result() for f in futures]  # the first failure, in order, is raised here
    except BaseException:
        for f in futures:
            f.cancel()
        running.interrupt_all()
        wait(futures, timeout=STOP_WAIT_S)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
