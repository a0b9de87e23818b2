"""Timestamps of telemetry files, as naive local time like the server logs beside them.

Contract: ``parse_stamp(text)`` reads one separator/timestamp string of the forms scrape
loops and GPU tools write (ISO 8601 with or without zone, ``date``'s default output,
``YYYY/MM/DD HH:MM:SS[.ms]``, Unix seconds or milliseconds) and returns a naive local
``datetime`` or ``None``; ``epoch_to_local(seconds)`` converts a Unix time the same way.
Server logs print local wall-clock time without a zone, so telemetry is compared in that
frame; a zone given in a stamp is honoured and converted to local time.
"""
from __future__ import annotations

import datetime as dt
import re

_EPOCH = re.compile(r"^\s*(?:ts\s*=\s*)?(\d{10}(?:\.\d+)?|\d{13})\s*$")
_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%a %b %d %H:%M:%S %Z %Y", "%a %b %d %H:%M:%S %Y",
            "%a %d %b %Y %H:%M:%S %Z", "%Y%m%d %H:%M:%S")


def epoch_to_local(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds)


def parse_stamp(text: str) -> dt.datetime | None:
    t = text.strip().lstrip("#").strip()
    t = re.sub(r"^(?:ts|time|timestamp|scrape(?:d)?(?:\s+at)?)\s*[=:]?\s*", "", t, flags=re.I)
    m = _EPOCH.match(t)
    if m:
        v = float(m.group(1))
        return epoch_to_local(v / 1000 if v > 1e11 else v)
    iso = t.replace("Z", "+00:00") if t.endswith("Z") else t
    try:
        stamp = dt.datetime.fromisoformat(iso)
        return stamp.astimezone().replace(tzinfo=None) if stamp.tzinfo else stamp
    except ValueError:
        pass
    squeezed = re.sub(r"\s+", " ", t)
    for fmt in _FORMATS:
        try:
            stamp = dt.datetime.strptime(squeezed, fmt)
        except ValueError:
            continue
        return stamp
    return None
