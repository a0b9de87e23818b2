"""What an ingest is asked to do and what it reports, per file.

Contract: ``IngestOptions`` (the user's choices and the state shared by the files of one
ingest call) and ``IngestResult`` (one per file). A module of their own so that the
telemetry path, the batcher and the API name them without importing the pipeline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .read import CHUNK_BYTES


@dataclass
class IngestOptions:
    label: str | None = None
    replace: bool = False
    gpu: str | None = None
    year: int | None = None
    keep_prompts: bool = False
    chunk_bytes: int = CHUNK_BYTES
    progress: Callable[[int, int], None] | None = None  # (bytes_done, bytes_total)
    run: int | None = None  # ingest --run: attach telemetry files to this run by hand
    grammar_dirs: tuple = ()  # --grammar-dir: user grammar folders, loaded after the shipped ones
    env_files: tuple = ()  # --env: environment reports for every run of this ingest (else: nearest by folder)
    jobs: int = 0  # --jobs: parse processes (0: one per core this process may use); same result for any
    # engine -> pattern per line shape (ingest/parse.py ShapeCache), shared by the files of one
    # ingest call: a folder of small logs repeats the same shapes file after file
    shape_caches: dict = field(default_factory=dict, repr=False, compare=False)
    # (con, src, kind, opts) -> IngestResult: how a telemetry file is stored. Telemetry sits
    # above ingest, so the layer that calls both (intake/) hands its entry point down; None:
    # a telemetry input is refused with a clear error instead of being parsed as a log
    store_telemetry: Callable | None = field(default=None, repr=False, compare=False)


@dataclass
class IngestResult:
    path: str
    status: str  # "ingested" | "skipped" | "replaced"
    source_id: int
    kind: str = ""
    engine: str = ""
    n_lines: int = 0
    run_ids: list = field(default_factory=list)
    notes: list = field(default_factory=list)
