"""A query result as plain columns and rows: what a command prints without importing polars.

Contract: ``Table(columns, rows)`` holds a result exactly as DuckDB's cursor returned it
(Python values: int, float, str, datetime, Decimal, list, dict, ...). It offers the few
frame methods the renderers use (``columns``, ``height``, ``width``, ``iter_rows``) and
``to_polars()`` for callers that want a DataFrame. ``from_cursor`` reads a cursor once.

Why: polars and pyarrow (and numpy under them) cost several times Python's own start-up to
import; ``runs``, ``sql``, ``schema`` and ``rules`` print a few rows and need none of them.
The library functions that return frames keep doing so (``api.runs(con)``); their
``frame=False`` form returns a Table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[tuple] = field(default_factory=list)

    @classmethod
    def from_cursor(cls, cur) -> "Table":
        """The whole result of an executed DuckDB cursor (no columns for a statement
        that returns none, e.g. CREATE)."""
        if cur.description is None:
            return cls([], [])
        return cls([d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()])

    @property
    def height(self) -> int:
        return len(self.rows)

    @property
    def width(self) -> int:
        return len(self.columns)

    def __len__(self) -> int:
        return len(self.rows)

    def iter_rows(self, named: bool = False) -> Iterator[Any]:
        if named:
            return (dict(zip(self.columns, r)) for r in self.rows)
        return iter(self.rows)

    def to_dicts(self) -> list[dict]:
        return list(self.iter_rows(named=True))

    def column(self, name: str) -> list:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_polars(self):
        """The same rows as a polars DataFrame (types inferred per column, as DuckDB's own
        conversion would; a column polars cannot type is kept as text)."""
        import polars as pl

        data = {c: [r[i] for r in self.rows] for i, c in enumerate(self.columns)}
        try:
            return pl.DataFrame(data, strict=False)
        except Exception:  # mixed or exotic values (union members, maps): fall back to text per column
            return pl.DataFrame({c: [None if v is None else str(v) for v in vals] for c, vals in data.items()})


def interval_text(v) -> str:
    """A timedelta as DuckDB prints an INTERVAL: ``1 day``, ``01:30:00``, ``2 days 00:00:01.5``."""
    neg = v.total_seconds() < 0
    v = -v if neg else v
    days, sec, us = v.days, v.seconds, v.microseconds
    parts = [f"{days} day{'s' * (days != 1)}"] if days else []
    if sec or us or not parts:
        parts.append(f"{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}" + (f".{us:06d}" if us else ""))
    return ("-" if neg else "") + " ".join(parts)
