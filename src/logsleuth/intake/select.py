"""Which files of a folder are logs: decided by content, not by file name or extension.

Contract: ``select_logs(files)`` returns ``(selected, skipped)`` where ``skipped`` is a list
of ``(path, reason)``. A file is selected when its head (first 64 KiB) holds lines of a
family logsleuth knows: telemetry (formats/telemetry_detect.py), a server log whose head carries the engine's own line shapes
(timestamped/rank-tagged/process-tagged log lines, at least ``MIN_LOG_LINES`` of them or half of
the non-blank lines of a short file), a benchmark printout, or an environment report. Prose that
merely quotes a few log lines (a README, a MANIFEST, notes in Markdown) and files of no
known family are skipped with the reason, so that a folder walk ingests exactly the logs.
Files named explicitly on the command line are not filtered (the user asked for them).
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

from ..ingest.detect import detect

HEAD_BYTES = 64 * 1024
MIN_LOG_LINES = 5

# the line shapes of the families in parsers/: SGLang "[2025-01-01 10:00:00 TP0]" / "[10:00:00]",
# vLLM "INFO 01-01 10:00:00 [file.py:1]" and "(APIServer pid=1)", container/CI timestamps,
# Python logging "2025-01-01 10:00:00,123 INFO", old "[gpu=0]" ranks
_LOG_LINE = re.compile(
    r"^\s*(?:\x1b\[[0-9;]*m)?(?:"
    r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\[\d\d:\d\d:\d\d(?:\.\d+)?(?: [DPTE]P\d+)*\]"
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|\((?:[\w.-]+ )?pid=\d+"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d"
    r"|\[gpu(?:_id)?=\d+\]"
    # Python tracebacks (a log that is only the tail of a crash)
    r"|Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"
    r")")


def _head(path: Path) -> str:
    with open(path, "rb") as fh:
        raw = fh.read(HEAD_BYTES)
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as gz:
                raw = gz.read(HEAD_BYTES)
        except OSError:
            return ""
    return raw.decode("utf-8", "replace")


def classify(path: str, grammars) -> tuple[bool, str]:
    """(is a log, why): the decision for one file, from its head."""
    try:
        head = _head(Path(path))
    except OSError as exc:
        return True, f"unreadable ({exc.strerror}): left to the input check"
    if not head.strip():
        return False, "empty"
    if "\x00" in head[:4096]:
        return False, "binary content"
    from ..formats.telemetry_detect import detect_telemetry
    from ..formats.notebook_head import is_notebook_head

    if is_notebook_head(head):
        return True, "notebook (its cells' outputs are read)"

    telemetry = detect_telemetry(head)
    if telemetry == "bench_json":
        from ..formats.telemetry_detect import looks_like_bench_result

        if not looks_like_bench_result(head):  # a model config or other JSON beside the logs
            return False, "JSON that is not a benchmark result"
    if telemetry is not None:
        return True, f"telemetry ({telemetry})"
    det = detect(head, grammars)
    if det.kind == "bench":
        return True, "benchmark printout"
    if det.kind == "env_report":
        return True, "environment report"
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if lines and not head.endswith("\n") and len(head.encode("utf-8", "replace")) >= HEAD_BYTES:
        lines = lines[:-1]  # the head cut a line in two
    n_log = sum(1 for ln in lines if _LOG_LINE.match(ln))
    if det.kind == "server_log":
        if n_log >= MIN_LOG_LINES or (n_log and n_log / len(lines) >= 0.5):
            return True, f"{det.engine} log"
        return False, (f"mentions {det.engine} but its head holds {n_log} log line(s) among "
                       f"{len(lines)} lines of text (prose, e.g. a README or a manifest)")
    if n_log >= MIN_LOG_LINES and n_log / max(len(lines), 1) >= 0.5:
        return True, "log lines of an unknown family (stored raw, templates mined)"
    return False, "no lines of a known log family in its head"


def select_logs(files: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    from ..ingest.grammars import checked_grammars

    grammars = checked_grammars()
    selected, skipped = [], []
    for f in files:
        ok, why = classify(f, grammars)
        (selected.append(f) if ok else skipped.append((f, why)))
    return selected, skipped
