"""One row of ``logsleuth compare``: the declaration every metric table entry is made of.

Contract: ``Metric(key, title, group, unit, better, value)``; ``value(ctx, column)`` reads
the row's figure for one compared column from the context's loaded data
(``ctx.get(loader)``). It lives apart from analysis/compare.py so that modules that add
rows (compare_telemetry.py) declare them without importing the comparison itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

#: (compare context, column) -> the row's value for that column
Value = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Metric:
    """One row of the comparison: ``value(ctx, column)`` reads it (from ``ctx.get(loader)``)."""

    key: str
    title: str
    group: str
    unit: str | None
    better: str | None  # "higher" | "lower" | None: which value is the better one
    value: Value
