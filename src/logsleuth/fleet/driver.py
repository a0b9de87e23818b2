"""Ingest many files into a Parquet dataset: plan, dispatch, commit the manifest.

Contract: ``ingest_dataset(target, files, ...)`` (files as ``api.expand_paths`` gives them) holds the dataset's lock for the whole
call, decides per file (same bytes: skipped; the same path grown: its entry replaced; else
a new source), builds the part files through an executor, then commits every success in
one manifest swap. A failed file is reported with its reason and the others land. Files
the new manifest no longer lists are removed one commit later (so a reader holding the
previous manifest can finish), and orphans of a killed ingest at the next commit.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Callable

from ..db.schema import SCHEMA_VERSION
from ..errors import BadInputError
from .executors import run_jobs
from .hosts import host_from_path
from .manifest import MANIFEST, Manifest, file_digest, load_manifest
from .parts import BuiltSource, PartFailure, SourceJob
from .storage import storage_for


@dataclass
class DatasetResult:
    target: str
    generation: int
    ingested: list = field(default_factory=list)  # SourceEntry
    replaced: list = field(default_factory=list)  # SourceEntry of grown files
    skipped: list = field(default_factory=list)  # paths whose bytes are already in the dataset
    failed: list = field(default_factory=list)  # PartFailure


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
                   year: int | None = None, keep_prompts: bool = False,
                   on_done: Callable[[SourceJob, object], None] | None = None) -> DatasetResult:
    if "-" in files:
        raise BadInputError("a dataset ingest reads files, not standard input: save the stream to a file first")
    storage = storage_for(target)
    token = uuid.uuid4().hex[:12]
    opts = {"label": label, "gpu": gpu, "year": year, "keep_prompts": keep_prompts}
    with storage.lock():
        manifest = load_manifest(storage, SCHEMA_VERSION)
        jobs, skipped, failed = _plan(files, manifest, host=host, host_from=host_from, replace=replace,
                              token=token, target=target, opts=opts)
        outcomes = run_jobs(jobs, executor=executor, workers=workers, address=address, on_done=on_done)
        result = DatasetResult(target=target, generation=manifest.generation, skipped=skipped)
        built = [o for o in outcomes if isinstance(o, BuiltSource)]
        result.failed = failed + [o for o in outcomes if isinstance(o, PartFailure)]
        if built:
            _commit(storage, manifest, built, result)
        return result


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
    keep = after | set(manifest.retired)
    for table in manifest.tables:
        for rel in storage.list_files(table):
            if rel not in keep and rel.rsplit("/", 1)[-1].startswith("part-"):
                storage.delete(rel)
