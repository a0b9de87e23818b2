"""Run selectors: which runs a user means by an id, a source file name or an ingest label.

Contract: ``resolve_runs(con, selectors)`` returns run ids in the order given (duplicates
dropped), every run when there is no selector, and raises UsageError for a selector that
names no run. It imports nothing heavier than the query loader, so commands that only list
runs (``runs``, ``show``) pay for no analysis module.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..db import queries
from ..errors import UsageError


def resolve_runs(con, selectors: Iterable[str | int] | None = None) -> list[int]:
    """Run ids for the selectors, in the order given (duplicates dropped); all runs if none."""
    runs = queries.rows(con, "compare_run_names")
    sels = [s for s in (selectors or []) if s is not None and str(s).strip() != ""]
    if not sels:
        return [r["run_id"] for r in runs]
    out: list[int] = []
    for sel in sels:
        text = str(sel).strip()
        hits = [r["run_id"] for r in runs if text.isdigit() and r["run_id"] == int(text)]
        if not hits:
            hits = [r["run_id"] for r in runs if _names_run(text, r)]
        if not hits:
            raise UsageError(f"no run matches '{text}'",
                             hint="name a run id, a source file name or a --label; see `logsleuth runs`")
        out.extend(h for h in hits if h not in out)
    return out


def _names_run(text: str, run: dict) -> bool:
    """Does ``text`` name this run: a label, the source's file name (with or without extension) or path?"""
    base = Path(text).name
    name, path = run["name"] or "", run["path"]
    return (text in (run["run_label"], run["source_label"]) or base == name or text == path
            or bool(name and "." in name and base == name.rsplit(".", 1)[0])
            or bool(path and Path(path).name == base))
