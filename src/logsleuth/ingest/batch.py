"""Ingest many files: small ones in batches, one transaction per batch.

Contract: ``ingest_paths(con, paths, options, on_file, progress, on_result)`` ingests the
files in order and returns one ``IngestResult`` per file, as ingesting them one by one would:
the same rows, the same ids (the files of a batch are stored one after the other inside the
batch's transaction, each seeing the ones before it). A folder of thousands of two-line logs
then pays the fixed costs of a transaction once per batch instead of once per file: the
disk-full snapshot (a CHECKPOINT), the COMMIT, the memory-cap settings, and the run
derivation of its new sources (one set-based ``finalize_sources`` call per batch:
ingest/deferred.py), whether they took the batch frame or the chunk path.

Which files are batched: plain (not compressed) files under ``SMALL_FILE_BYTES``, up to
``BATCH_FILES`` files or ``BATCH_BYTES`` bytes per batch (the files of a batch are read
whole: memory stays bounded by ``BATCH_BYTES``). Everything else (large or gzip
files, stdin, telemetry files: ``pipeline.NotBatchable``) keeps a transaction of its own,
with the batch before it committed first.

Each file stays all-or-nothing (DuckDB has no SAVEPOINT, so by replay): when file k of a
batch fails, the whole batch is rolled back, the k files before it are stored again in one
transaction (they succeeded once; storing is deterministic) and committed, then file k's
error goes on: the database holds exactly the files before the bad one, as with one
transaction per file. A full disk puts the database back as it was before the batch (its
files are named in the error; nothing of them is kept: the disk has no room to store them
again). Ctrl-C or SIGTERM rolls back the batch in progress; the batches committed before it
are kept and named by the interrupt message (``interrupts.committing``). ``on_result`` is
called once a file's batch is committed.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable

from ..db import diskfull
from ..interrupts import committing, interrupted_query
from .redact import redact_name
from .batch_frame import store_files
from .pipeline import IngestOptions, IngestResult, ingest_memory, ingest_source

#: files below this size (bytes on disk, not compressed) are batched: a rotated set or a
#: fleet's day of files of a few MB each then pays one snapshot, commit and run derivation
#: per batch (50 MB cut into 40 files: 31.8 s alone each, see docs/performance.md)
SMALL_FILE_BYTES = 8 << 20
#: at most this many files ...
BATCH_FILES = 500
#: ... and this many bytes per batch (bounds what a rollback throws away)
BATCH_BYTES = 32 << 20


def batchable(path: str) -> int | None:
    """The size of a file that may join a batch, else None."""
    if path == "-":
        return None
    try:
        size = os.path.getsize(path)
        if size >= SMALL_FILE_BYTES:
            return None
        with open(path, "rb") as fh:
            if fh.read(2) == b"\x1f\x8b":  # gzip: its size says nothing of what it holds
                return None
    except OSError:
        return None  # ingest_source reports it, on its own
    return size


def ingest_paths(con, paths: list[str], options: IngestOptions,
                 on_file: Callable[[str], None] | None = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 on_result: Callable[[IngestResult], None] | None = None) -> list[IngestResult]:
    results: list[IngestResult] = []
    batch: list[str] = []
    batch_bytes = 0

    def opts_for(p: str) -> IngestOptions:
        if progress is None:
            return options
        return replace(options, progress=lambda done, total, _p=p: progress(_p, done, total))

    def flush():
        nonlocal batch, batch_bytes
        if batch:
            report = on_result or (lambda _r: None)
            todo = batch
            while todo:  # a file that cannot join the batch splits it: its own transaction
                done, alone = _ingest_batch(con, todo, on_file, opts_for, report)
                results.extend(done)
                if alone is None:
                    break
                res = _ingest_alone(con, todo[alone], opts_for(todo[alone]), None)
                report(res)
                results.append(res)
                todo = todo[alone + 1:]
        batch, batch_bytes = [], 0

    for p in paths:
        size = batchable(p)
        if size is not None:
            if len(batch) >= BATCH_FILES or batch_bytes + size > BATCH_BYTES:
                flush()
            batch.append(p)
            batch_bytes += size
            continue
        flush()
        res = _ingest_alone(con, p, opts_for(p), on_file)
        if on_result:
            on_result(res)
        results.append(res)
    flush()
    return results


def _ingest_alone(con, path: str, opts: IngestOptions, on_file) -> IngestResult:
    """One file in a transaction of its own (pipeline.ingest_source), with disk-full recovery."""
    if on_file:
        on_file(path)
    snap = diskfull.snapshot(con)  # a full disk puts the database back as it was here
    try:
        return ingest_source(con, path, opts)
    except BaseException as exc:
        if snap is not None and diskfull.is_disk_full(exc):
            raise diskfull.recover(con, snap, path) from None
        raise


def _ingest_batch(con, paths: list[str], on_file, opts_for, on_result) -> tuple[list[IngestResult], int | None]:
    """The files of one batch in one transaction (``on_result`` for each once committed), up
    to the first that cannot join a batch (its index is returned with the results; the
    files before it are committed); see the module docstring for failures."""
    snap = diskfull.snapshot(con)
    results: list[IngestResult] = []
    with ingest_memory(con):
        con.execute("BEGIN TRANSACTION")
        try:
            # alone_from: index of a file that needs a transaction of its own; refused: the
            # error of a file refused before anything of it was written (the files before it
            # are committed, then it is raised)
            alone_from, refused = store_files(con, paths, opts_for, on_file, results)
            _commit(con, paths[:len(results)])
        except BaseException as exc:
            done = len(results)
            _rollback(con)
            if snap is not None and diskfull.is_disk_full(exc):
                # the files of a batch are stored together: the whole batch is what was lost
                what = paths[0] if len(paths) == 1 else f"a batch of {len(paths)} small files ({paths[0]} ... {paths[-1]})"
                raise diskfull.recover(con, snap, redact_name(what)) from None
            if interrupted_query(exc):  # Ctrl-C inside a statement: an interrupt, nothing replayed
                raise KeyboardInterrupt("interrupted during a query") from exc
            if isinstance(exc, KeyboardInterrupt) or not results:
                raise
            # file len(results) failed: keep the files before it, as one transaction per file would
            for res in _replay(con, paths[:done], opts_for):
                on_result(res)
            raise
    for res in results:
        on_result(res)
    if refused is not None:
        raise refused
    return results, alone_from


def _replay(con, paths: list[str], opts_for) -> list[IngestResult]:
    """Store again, in one transaction, files of a batch that succeeded before a bad one."""
    con.execute("BEGIN TRANSACTION")
    try:
        results: list[IngestResult] = []
        store_files(con, paths, opts_for, None, results)
        _commit(con, paths)
        return results
    except BaseException:
        _rollback(con)
        raise


def _commit(con, paths: list[str]) -> None:
    if not paths:  # nothing was written
        con.execute("COMMIT")
        return
    names = [redact_name(p) for p in (paths[0], paths[-1])]
    what = names[0] if len(paths) == 1 else f"{len(paths)} files ({names[0]} ... {names[1]})"
    with committing(what):  # Ctrl-C/SIGTERM land before or after, never inside
        con.execute("COMMIT")


def _rollback(con) -> None:
    try:  # the original error is the one to report (an interrupt may have ended the transaction)
        con.execute("ROLLBACK")
    except Exception:
        pass
