"""Running the fleet's tasks: in this process, on local processes, or as Ray tasks.

Contract: ``executor_session(executor, workers, address)`` yields a ``Session`` whose
``map(fn, items, on_done)`` returns one outcome per item, in item order: what ``fn``
returned, or a ``PartFailure`` of the item's file when the task raised (a worker that died,
a bug): one task failing never loses the others. ``fn`` is a module-level function (it is
pickled by reference) that returns bad input as a value. Ray retries a task whose worker
died (``RAY_MAX_RETRIES``) before it is reported. One session starts Ray (or the process
pool) once for all the rounds of an ingest (byte ranges, then their merge). Ray is imported
only here and only for ``executor="ray"``.
"""
from __future__ import annotations

import contextlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterator

from ..errors import UsageError
from .parts import PartFailure, SourceJob, build_parts_safe

EXECUTORS = ("serial", "local", "ray")
#: Ray re-runs a task whose worker process died this many times before reporting it
RAY_MAX_RETRIES = 2


class Session:
    """Runs rounds of tasks on one executor; see the module contract."""

    def __init__(self, executor: str, workers: int | None, pool=None, ray=None):
        self.executor, self.workers, self._pool, self._ray = executor, workers, pool, ray
        self._remotes: dict = {}

    def cpus(self) -> int:
        """CPUs the tasks run on: the local processes, the Ray cluster's CPUs, 1 when serial."""
        if self._ray is not None:
            return max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        if self.executor != "local":
            return 1
        return max(1, self.workers or multiprocessing.cpu_count())

    def idle_cores_per_task(self, n_tasks: int) -> int:
        """Cores each of ``n_tasks`` tasks may use besides its own when there are fewer tasks
        than local cores (1 otherwise; a Ray cluster schedules its own CPUs)."""
        if self.executor != "local" or n_tasks <= 0:
            return 1
        return max(1, (self.workers or multiprocessing.cpu_count()) // n_tasks)

    def map(self, fn: Callable, items: list, on_done: Callable | None = None) -> list:
        if not items:
            return []
        if self._ray is not None:
            return self._map_ray(fn, items, on_done)
        if self._pool is None or len(items) <= 1:
            return [_done(item, _call(fn, item), on_done) for item in items]
        futures = [self._pool.submit(fn, item) for item in items]
        return [_done(item, _result(f, item), on_done) for item, f in zip(items, futures)]

    def _map_ray(self, fn, items, on_done):
        ray = self._ray
        remote = self._remotes.get(fn)
        if remote is None:
            remote = self._remotes[fn] = ray.remote(max_retries=RAY_MAX_RETRIES)(fn)
        refs = [remote.remote(item) for item in items]
        out = []
        for item, ref in zip(items, refs):
            try:
                outcome = ray.get(ref)
            except Exception as exc:  # RayTaskError / WorkerCrashedError after the retries
                outcome = PartFailure(item.path, f"Ray task failed: {type(exc).__name__}: "
                                                 f"{(str(exc).splitlines() or [''])[0]}")
            out.append(_done(item, outcome, on_done))
        return out


@contextlib.contextmanager
def executor_session(executor: str = "local", workers: int | None = None,
                     address: str | None = None) -> Iterator[Session]:
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if executor == "ray":
        ray = _import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            kwargs = {"address": address} if address else {"num_cpus": workers}
            ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                     configure_logging=False, **kwargs)
        try:
            yield Session(executor, workers, ray=ray)
        finally:
            if started_here:
                ray.shutdown()
        return
    if executor == "serial" or (workers or 2) <= 1:
        yield Session(executor, 1)
        return
    # spawn, not fork: DuckDB and polars hold thread pools that a fork would copy mid-flight
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers or multiprocessing.cpu_count(), mp_context=ctx) as pool:
        yield Session(executor, workers, pool=pool)


def run_jobs(jobs: list[SourceJob], executor: str = "local", workers: int | None = None,
             address: str | None = None, on_done: Callable[[SourceJob, object], None] | None = None) -> list:
    """One whole-file part build per job (a ``BuiltSource`` or a ``PartFailure`` each)."""
    with executor_session(executor, workers, address) as session:
        return session.map(build_parts_safe, jobs, on_done)


def _import_ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray: pip install 'logsleuth[fleet]'") from None
    return ray


def _call(fn, item):
    try:
        return fn(item)
    except Exception as exc:  # a bug in one task: that file fails, the others land
        return PartFailure(item.path, f"failed: {type(exc).__name__}: {exc}")


def _done(item, outcome, on_done):
    if on_done:
        on_done(item, outcome)
    return outcome


def _result(future, item):
    try:
        return future.result()
    except Exception as exc:  # a worker that died or a bug: that file fails, the others land
        return PartFailure(item.path, f"worker failed: {type(exc).__name__}: {exc}")
