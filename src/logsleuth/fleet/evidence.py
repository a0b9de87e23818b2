"""Evidence lines of the fleet's flags: (source_id, line_no) pairs turned into file, line and text.

Contract: ``attach_evidence(con, items)`` replaces, in place, each item's ``evidence`` (a pair or
a list of pairs) with a list of ``{"file", "line", "text"}`` dicts, in one query for all items
(``queries/fleet/evidence_lines.sql``). Texts are cut to ``TEXT_WIDTH`` characters.
"""
from __future__ import annotations

from .sql import fleet_sql

TEXT_WIDTH = 240


def _pairs(value) -> list[tuple]:
    if not value:
        return []
    return [tuple(value)] if isinstance(value, tuple) else [tuple(v) for v in value if v]


def attach_evidence(con, items: list[dict]) -> None:
    wanted = sorted({p for it in items for p in _pairs(it.get("evidence"))})
    found = {}
    if wanted:
        cur = con.execute(fleet_sql("evidence_lines"), {"source_ids": [p[0] for p in wanted],
                                                        "line_nos": [p[1] for p in wanted]})
        for sid, line, name, raw in cur.fetchall():
            text = (raw or "").rstrip()
            found[(sid, line)] = {"file": name, "line": line,
                                  "text": text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 1] + "…"}
    for it in items:
        it["evidence"] = [found.get(p, {"file": None, "line": p[1], "text": None}) for p in _pairs(it.get("evidence"))]
