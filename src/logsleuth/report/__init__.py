"""The HTML report: ``build_report`` gathers the data (report/data.py, the only part that reads the
database) and renders it (report/html.py, report/svg.py); ``write_report`` writes the page to a file
atomically and returns its size in bytes."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterable


def build_report(con, selectors: Iterable[str | int] | None = None, *, title: str | None = None,
                 generated_at: str | None = None, timings: dict | None = None, findings: bool = True) -> str:
    """The whole HTML report for the selected runs (all runs when ``selectors`` is empty).
    ``timings`` (a dict) receives seconds per stage; ``findings=False`` skips the diagnose rules."""
    from .data import gather
    from .html import render

    t = time.perf_counter()
    data = gather(con, selectors, with_findings=findings, title=title, generated_at=generated_at)
    t1 = time.perf_counter()
    page = render(data)
    t2 = time.perf_counter()
    if timings is not None:
        timings.update({"gather_s": t1 - t, "render_s": t2 - t1, "total_s": t2 - t,
                        "html_bytes": len(page.encode("utf-8"))})
    return page


def write_report(con, selectors: Iterable[str | int] | None, out: str | Path, title: str | None = None,
                 with_findings: bool = True) -> int:
    """Write the report of the selected runs to ``out`` (its folder is created); returns its size in bytes."""
    from ..errors import UsageError
    from .safe_write import write_atomic

    from ..db.inputs import refuse_overwriting

    refuse_overwriting(con, out)  # before the work: the report of a database never replaces it
    data = build_report(con, selectors, title=title, findings=with_findings).encode("utf-8")
    path = Path(out)
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)  # a full disk: no partial or 0-byte file left
    except OSError as exc:
        raise UsageError(f"{out}: cannot write the report ({exc.strerror or exc})") from None
    return len(data)
