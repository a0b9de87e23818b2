"""The ingest spine: the one public stage API every entry point calls.

Contract: code outside ``ingest/`` (``watch/``, ``fleet/``, ``telemetry/``, the API) reaches
the ingest only through the names of this module; the modules behind them are private to
``ingest/`` (tests/architecture/test_ingest_spine.py lists the callers). Every entry point
runs the same stages in this order:

1. **read**: ``open_source(path)`` validates, hashes and opens a file or ``-`` (stdin) once;
   its head is read once (``head_text``) and its kind decided once (``detect_source``, cached on
   the ``Source``). ``byte_range(...)`` is a ``Source`` over a byte range of a plain file (fleet
   ranges); ``read_chunks(src)`` yields frames of whole lines (``READ_COLUMNS``), bounded.
   *A step that peels a wrapper off the text (a container runtime's prefix, a notebook's
   JSON) plugs in here*: on the ``Source`` (a whole-file unwrap spools the text, as stdin is
   spooled) or on each frame ``read_chunks`` yields, before redaction.
2. **frame**: ``strip_ansi`` and ``redact_frame`` (``redact_lines`` / ``redact_columns`` for
   text that is not a log, such as telemetry; secrets and prompts masked before any
   other stage reads the text; ``RedactState`` carries a multi-line record across frames).
3. **parse by shape**: ``parse_frame`` classifies lines with a grammar (``patterns_for``),
   deciding once per distinct line shape (``ShapeCache``); ``extract`` cuts typed rows;
   ``parse_config_line`` reads a launch's configuration dump.
4. **fold**: ``fold`` joins records spanning lines (tracebacks, benchmark blocks) and keeps the
   open tail.
5. **stamp**: ``add_timestamps`` with ``TimeState``; runs with ``RunState``.
6. **store**: ``ingest_source`` (a whole source, in its own transaction or a batch's),
   ``store_range`` (the lines of a byte range, no derivation), under ``ingest_memory_limit``.
7. **derive**: ``finish_ranges`` (a ranged file's sources row and runs),
   ``PendingDerivation`` (the runs of a batch's new sources, derived once per batch).
"""
from __future__ import annotations

from importlib import import_module

#: stage name -> (module of ingest/, its name there); resolved on first use (PEP 562), so
#: importing this module costs nothing and each caller loads only the stages it uses
_EXPORTS = {
    # read
    "open_source": ("read", "open_source"), "check_input": ("read", "check_input"), "Source": ("read", "Source"),
    "read_chunks": ("read", "iter_chunks"), "READ_COLUMNS": ("read", "READ_COLUMNS"),
    "DETECT_BYTES": ("pipeline", "DETECT_BYTES"), "Detection": ("detect", "Detection"), "detect": ("detect", "detect"),
    "engine_for_parsing": ("pipeline", "engine_for_parsing"), "telemetry_kind": ("inputs", "telemetry_kind"),
    "checked_grammars": ("grammars", "checked_grammars"),
    # frame
    "strip_ansi": ("read", "strip_ansi"), "redact_frame": ("redact", "redact_frame"),
    "RedactState": ("redact", "RedactState"), "redact_name": ("redact", "redact_name"),
    "redact_lines": ("redact", "redact_lines"), "redact_columns": ("redact", "redact_columns"),
    # parse by shape
    "parse_frame": ("parse", "parse_frame"), "patterns_for": ("parse", "patterns_for"),
    "ShapeCache": ("parse", "ShapeCache"), "extract": ("extract", "extract"),
    "parse_config_line": ("configparse", "parse_config_line"),
    # fold, stamp
    "fold": ("fold", "fold"), "TimeState": ("normalize", "TimeState"), "RunState": ("normalize", "RunState"),
    "add_timestamps": ("normalize", "add_timestamps"),
    # store
    "IngestOptions": ("options", "IngestOptions"), "IngestResult": ("options", "IngestResult"),
    "ingest_source": ("pipeline", "ingest_source"), "store_range": ("pipeline", "read_range"),
    "ingest_memory_limit": ("pipeline", "ingest_memory_limit"),
    # derive
    "finish_ranges": ("pipeline", "finish_ranges"), "PendingDerivation": ("deferred", "PendingDerivation"),
}

__all__ = sorted([*_EXPORTS, "byte_range", "detect_source", "head_text"])


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    # resolved on each import (not cached here): the module behind a stage stays its one owner
    return getattr(import_module(f"{__package__}.{module}"), attr)


def head_text(src, n: int | None = None) -> str:
    """The first ``n`` bytes (default ``DETECT_BYTES``) of ``src`` as text (invalid UTF-8
    replaced), read once per source."""
    return src.head(__getattr__("DETECT_BYTES") if n is None else n).decode("utf-8", "replace")


def detect_source(src, grammars):
    """What ``src`` is (engine log, benchmark output, environment report, unknown), decided
    once from its head and kept on the source."""
    if src.detection is None:
        src.detection = __getattr__("detect")(head_text(src), grammars)
    return src.detection


def byte_range(path: str, size: int, sha256: str, start: int = 0, first_line: int = 1, end: int | None = None,
               display: str | None = None):
    """A ``Source`` over bytes ``start`` (line ``first_line``) to ``end`` of a plain file of
    ``size`` bytes (its content hash ``sha256``: the whole file's)."""
    import os
    from pathlib import Path

    from .read import Source
    from .redact import redact_name

    return Source(path=path, display_name=redact_name(path) if display is None else display, real_path=Path(path),
                  size=size if end is None else end, sha256=sha256, compressed=False,
                  mtime=os.stat(path).st_mtime, start_offset=start, start_line=first_line)
