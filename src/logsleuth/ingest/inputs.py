"""Is an opened input a telemetry file? (its content decides, never its name)

Contract: ``telemetry_kind(src)`` reads the head of an opened source (``source.open_source``)
and returns the telemetry kind ``formats/telemetry_detect.py`` recognises in it, or None for
a log. Ingest asks this to route a file; storing one is the telemetry layer's job, reached
through ``IngestOptions.store_telemetry``.
"""
from __future__ import annotations

from ..formats.telemetry_detect import detect_telemetry
from .read import read_head

_HEAD_BYTES = 256 * 1024


def telemetry_kind(src) -> str | None:
    head = read_head(src, _HEAD_BYTES)  # the head the ingest's detection reads too: read once per source
    return detect_telemetry(head)
