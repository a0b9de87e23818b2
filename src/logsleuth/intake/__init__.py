"""Intake: the layer that takes an input in, above ingest (logs) and telemetry.

Contract: ``ingest_files(con, paths, options, ...)`` expands the paths (``paths.py``) and
ingests them in order through ``ingest/batch.py``, handing ingest the telemetry layer's
entry point (``IngestOptions.store_telemetry``): a file whose content is telemetry
(Prometheus text, GPU samplers, bench JSON) is stored by ``telemetry/``, every other by the
log pipeline. ``ingest_options`` completes options the same way for callers that drive the
pipeline themselves (fleet tasks). ``select.py`` decides which files of a folder are inputs.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from .paths import LOG_SUFFIXES, checked_files, expand_paths

__all__ = ["LOG_SUFFIXES", "checked_files", "expand_paths", "ingest_files", "ingest_options"]


def ingest_options(options=None):
    """``options`` (default ``IngestOptions()``) with the telemetry store filled in."""
    from ..ingest.options import IngestOptions
    from ..telemetry.store import ingest_telemetry

    options = options or IngestOptions()
    if options.store_telemetry is None:
        options = dataclasses.replace(options, store_telemetry=ingest_telemetry)
    return options


def ingest_files(con, paths: Iterable[str], options=None, on_file: Callable[[str], None] | None = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 on_result: Callable | None = None, on_note: Callable[[str], None] | None = None) -> list:
    from ..ingest.batch import ingest_paths

    return ingest_paths(con, expand_paths(paths, on_note), ingest_options(options), on_file=on_file,
                        progress=progress, on_result=on_result)
