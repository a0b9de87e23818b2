"""Telemetry beside the logs: Prometheus scrapes, GPU samplers, bench result files, NCCL_DEBUG.

Contract: ``telemetry_kind(src)`` says whether an opened input is a telemetry file (by its
content, never its name) and which; ``ingest_telemetry(con, src, kind, opts)`` stores it
(``store.py``). One job per module: ``detect`` (recognise), ``prometheus`` (exposition
text), ``gpu_text`` (nvidia-smi CSV/dmon, rocm-smi, amd-smi), ``dcgm`` (DCGM exporter
samples as GPU samples), ``bench_json`` (result files), ``store`` (one transaction),
``scrape`` (live endpoints), ``loaders`` (telemetry figures for compare and the report).
NCCL lines need no parser of their own: ``queries/views/nccl_*.sql`` derive
``nccl_channels`` and ``nccl_config`` from the stored lines of any source, and
``run_telemetry`` links telemetry to runs.
"""
from __future__ import annotations

from ..formats.telemetry_detect import detect_telemetry
from ..ingest.stages import telemetry_kind
from .store import ingest_telemetry

__all__ = ["telemetry_kind", "detect_telemetry", "ingest_telemetry"]
