"""Running part builds: in this process, on local processes, or as Ray tasks.

Contract: ``run_jobs(jobs, executor, workers, address)`` returns one outcome per job, in
job order: a ``BuiltSource`` or a ``PartFailure``. A job that fails with bad input fails
alone (the others still land); Ray retries a task whose worker died (``max_retries``) and a
task that still fails is reported as a failure of its file. Ray is imported only here and
only for ``executor="ray"``.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

from ..errors import UsageError
from .parts import BuiltSource, PartFailure, SourceJob, build_parts_safe

EXECUTORS = ("serial", "local", "ray")
#: Ray re-runs a task whose worker process died this many times before reporting it
RAY_MAX_RETRIES = 2


def run_jobs(jobs: list[SourceJob], executor: str = "local", workers: int | None = None,
             address: str | None = None, on_done: Callable[[SourceJob, object], None] | None = None,
             ) -> list[BuiltSource | PartFailure]:
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if executor == "ray":
        return _run_ray(jobs, workers, address, on_done)
    if executor == "serial" or len(jobs) <= 1 or (workers or 2) <= 1:
        return [_done(j, build_parts_safe(j), on_done) for j in jobs]
    # spawn, not fork: DuckDB and polars hold thread pools that a fork would copy mid-flight
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers or multiprocessing.cpu_count(), mp_context=ctx) as pool:
        futures = [pool.submit(build_parts_safe, j) for j in jobs]
        return [_done(j, _result(f, j), on_done) for j, f in zip(jobs, futures)]


def _done(job, outcome, on_done):
    if on_done:
        on_done(job, outcome)
    return outcome


def _result(future, job: SourceJob):
    try:
        return future.result()
    except Exception as exc:  # a worker that died or a bug: that file fails, the others land
        return PartFailure(job.path, f"worker failed: {type(exc).__name__}: {exc}")


def _run_ray(jobs, workers, address, on_done):
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray: pip install 'logsleuth[fleet]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs = {"address": address} if address else {"num_cpus": workers}
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 configure_logging=False, **kwargs)
    try:
        remote = ray.remote(max_retries=RAY_MAX_RETRIES)(build_parts_safe)
        refs = [remote.remote(j) for j in jobs]
        out = []
        for job, ref in zip(jobs, refs):
            try:
                outcome = ray.get(ref)
            except Exception as exc:  # RayTaskError / WorkerCrashedError after the retries
                outcome = PartFailure(job.path, f"Ray task failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            out.append(_done(job, outcome, on_done))
        return out
    finally:
        if started_here:
            ray.shutdown()
