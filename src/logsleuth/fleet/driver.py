"""Ingest many files into a Parquet dataset: plan, dispatch, commit the manifest.

Contract: ``ingest_dataset(target, files, ...)`` (files as ``api.expand_paths`` gives them) holds the dataset's lock for the whole
call, decides per file (same bytes: skipped; the same path grown: its entry replaced; else
a new source), builds the part files through an executor, then commits every success in
one manifest swap. A file larger than ``split_bytes`` (not gzip) is parsed as byte ranges
cut at server launches on several tasks and merged by one more (``split.py``, ``ranges.py``),
with the same rows as a whole-file ingest. A failed file is reported with its reason and the others land. Files
the new manifest no longer lists are removed one commit later (so a reader holding the
previous manifest can finish), and orphans of a killed ingest at the next commit.
"""
from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Callable

from ..db.schema import SCHEMA_VERSION
from ..errors import BadInputError
from .executors import executor_session
from .hosts import host_from_path
from .manifest import MANIFEST, Manifest, file_digest, load_manifest
from .parts import BuiltSource, PartFailure, SourceJob
from .ranges import MergeJob, RangeJob, run_task
from .split import SPLIT_BYTES, plan_split, split_size
from .storage import storage_for


@dataclass
class DatasetResult:
    target: str
    generation: int
    ingested: list = field(default_factory=list)  # SourceEntry
    replaced: list = field(default_factory=list)  # SourceEntry of grown files
    skipped: list = field(default_factory=list)  # paths whose bytes are already in the dataset
    failed: list = field(default_factory=list)  # PartFailure
    notes: dict = field(default_factory=dict)  # path -> how a large file was parsed (split or why not)

#: the name parts.py gives a part file: the clean-up deletes nothing else
_PART_NAME = re.compile(r"part-\d{6,}-[0-9a-f]{12}\.parquet")

#: staged rows of byte ranges, under the dataset root until their source is merged
STAGING = "_staging"


def _plan(files, manifest: Manifest, *, host, host_from, replace, token, target, opts) -> tuple[list, list, list]:
    """(jobs, skipped paths, failures of planning) — a path the --host-from pattern does not
    match fails alone, like a corrupt file: guessing its host would file its runs wrongly."""
    jobs, skipped, failed = [], [], []
    next_id = manifest.next_source_id()
    for path in files:
        apath = os.path.abspath(path)
        name = host or (host_from_path(host_from, apath) if host_from else None)
        if host_from and not name:
            failed.append(PartFailure(path, f"{path}: --host-from {host_from!r} does not match this path"))
            continue
        sha, size = file_digest(apath)
        known = manifest.by_sha(sha)
        if known and not replace:
            skipped.append(path)
            continue
        prior = known or manifest.by_path(apath)
        grown = prior is not None and size >= prior.bytes and file_digest(apath, prior.bytes)[0] == prior.sha256
        if grown or known:
            sid = prior.source_id  # the same source, longer (or re-ingested on request)
        else:
            sid, next_id = next_id, next_id + 1
        jobs.append(SourceJob(path=apath, source_id=sid, sha256=sha, size=size, target=target, token=token,
                              host=name, **opts))
    return jobs, skipped, failed


def ingest_dataset(target: str, files: list[str], *, host: str | None = None, host_from: str | None = None,
                   executor: str = "local", workers: int | None = None, address: str | None = None,
                   replace: bool = False, label: str | None = None, gpu: str | None = None,
                   year: int | None = None, keep_prompts: bool = False, split_bytes: int | str | None = SPLIT_BYTES,
                   on_done: Callable[[SourceJob, object], None] | None = None) -> DatasetResult:
    """``split_bytes``: files larger than this are split into byte ranges (None or 0: never;
    text such as ``256MiB`` is read as a size)."""
    split_bytes = split_size(split_bytes)
    if "-" in files:
        raise BadInputError("a dataset ingest reads files, not standard input: save the stream to a file first")
    storage = storage_for(target)
    token = uuid.uuid4().hex[:12]
    opts = {"label": label, "gpu": gpu, "year": year, "keep_prompts": keep_prompts}
    with storage.lock():
        manifest = load_manifest(storage, SCHEMA_VERSION)
        jobs, skipped, failed = _plan(files, manifest, host=host, host_from=host_from, replace=replace,
                              token=token, target=target, opts=opts)
        result = DatasetResult(target=target, generation=manifest.generation, skipped=skipped)
        with executor_session(executor, workers, address) as session:
            outcomes = _build(session, jobs, split_bytes, token, result, on_done)
        built = [o for o in outcomes if isinstance(o, BuiltSource)]
        result.failed = failed + [o for o in outcomes if isinstance(o, PartFailure)]
        for b in built:
            if b.note:
                result.notes[b.entry.path] = b.note
        if built:
            _commit(storage, manifest, built, result)
        return result


def _build(session, jobs: list[SourceJob], split_bytes, token: str, result: DatasetResult, on_done) -> list:
    """One outcome per job: large files as byte ranges (one round) merged per file (a second
    round), the others whole in the first round, biggest first."""
    plans = {}
    # among several files, only one larger than its share of the CPUs is worth splitting: the
    # files themselves keep the CPUs busy, and the ranges' merge costs CPU a whole file does not
    share = sum(j.size for j in jobs) / session.cpus() if len(jobs) > 1 else 0
    for job in jobs:
        if split_bytes and job.size > split_bytes and job.size > share:
            plan = plan_split(job.path, split_bytes)
            if plan.split:
                plans[job.source_id] = plan
            else:
                job.note = f"not split: {plan.reason}"
    items: list = []
    for job in jobs:
        plan = plans.get(job.source_id)
        if plan is None:
            items.append(job)
            continue
        staging = f"{STAGING}/{token}/{job.source_id:06d}"
        rs = plan.ranges
        items += [RangeJob(job, r, staging, rs[i + 1].first_line if i + 1 < len(rs) else None)
                  for i, r in enumerate(rs)]
    items.sort(key=lambda it: -((it.range.end - it.range.start) if isinstance(it, RangeJob) else it.size))
    for job in jobs:  # one large file on a 2-core box: its one task parses on both cores
        job.parse_jobs = session.idle_cores_per_task(len(items))

    def first_done(item, outcome):
        if on_done and isinstance(item, SourceJob):
            on_done(item, outcome)

    first = dict(zip(map(id, items), session.map(run_task, items, first_done)))
    by_range = {(it.job.source_id, it.range.index): first[id(it)] for it in items if isinstance(it, RangeJob)}
    merges = [MergeJob(job, plans[job.source_id].ranges,
                       [by_range[(job.source_id, r.index)] for r in plans[job.source_id].ranges])
              for job in jobs if job.source_id in plans]
    second = dict(zip((m.job.source_id for m in merges),
                      session.map(run_task, merges, lambda m, o: on_done and on_done(m.job, o))))
    return [second[j.source_id] if j.source_id in plans else first[id(j)] for j in jobs]


def _commit(storage, manifest: Manifest, built: list[BuiltSource], result: DatasetResult) -> None:
    before = {f for s in manifest.sources for f in s.files.values()}
    by_id = {s.source_id: s for s in manifest.sources}
    for b in built:
        (result.replaced if b.entry.source_id in by_id else result.ingested).append(b.entry)
        by_id[b.entry.source_id] = b.entry
        for table, cols in b.tables.items():
            manifest.tables.setdefault(table, cols)
    manifest.sources = [by_id[k] for k in sorted(by_id)]
    manifest.generation += 1
    after = {f for s in manifest.sources for f in s.files.values()}
    manifest.retired = sorted(before - after)
    storage.write_text_atomic(MANIFEST, manifest.to_json())
    result.generation = manifest.generation
    # what the previous commit retired, and files no manifest ever listed (a killed ingest)
    storage.remove_tree(STAGING)  # ranges of an ingest killed before its merge (we hold the lock)
    # (table names and paths were checked when the manifest loaded; storage checks links)
    keep = after | set(manifest.retired)
    for table in manifest.tables:
        for rel in storage.list_files(table):
            if rel not in keep and _PART_NAME.fullmatch(rel.rsplit("/", 1)[-1]):
                storage.delete(rel)
