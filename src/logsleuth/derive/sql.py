"""Load the SQL of run derivation from ``queries/derive/<name>.sql`` (and its data files) by name,
and run it over a set of runs.

Contract: ``sql(name)`` returns the text of ``queries/derive/<name>.sql`` (cached; ``--`` comment
lines kept, DuckDB ignores them); ``data(name)`` parses ``queries/derive/<name>.toml``.
``run_set(con, name, ...)`` executes one of them over a set of runs or sources: ``{runs}`` /
``{sources}`` in the text become a filter on ``run_id`` / ``source_id`` (``{runs@t}``: on ``t.run_id``) (a literal id list with
its bounds, so DuckDB skips the row groups of other sources and the cost of a call does not grow
with the database), other ``{name}`` placeholders take ``fmt``, and each polars frame of
``frames`` is visible to the statement under its key (per-run parameters: first lines,
shutdown lines, bounds). Only ``derive/`` modules call these: the derivation's SQL lives
beside the rules, in the data folder.
"""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache

from ..resources import data_path


@lru_cache(maxsize=None)
def sql(name: str) -> str:
    return data_path(f"queries/derive/{name}.sql").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def data(name: str) -> dict:
    with open(data_path(f"queries/derive/{name}.toml"), "rb") as fh:
        return tomllib.load(fh)


_ID_PLACEHOLDER = re.compile(r"\{(runs|sources)(?:@(\w+))?\}")


def id_filter(column: str, ids) -> str:
    """``column`` in the integer ids ``ids`` (false when there are none), with the bounds first:
    the min/max zone maps of each row group prune the rows of other sources."""
    ids = sorted({int(i) for i in ids})
    if not ids:
        return "false"
    return f"({column} BETWEEN {ids[0]} AND {ids[-1]} AND {column} IN ({', '.join(map(str, ids))}))"


def near(column: str, bounds: dict[int, tuple[int | None, int | None]], limit: int = 64) -> str:
    """``column`` within per-run bounds (run id -> (above, below), exclusive, None: open) as
    literal conditions on ``l.run_id`` and ``l.<column>``, so that DuckDB skips the row groups
    of a large run outside them (the join that applies the same bounds reads every row of the
    run first); "true" beyond ``limit`` runs (small runs: nothing to skip)."""
    if not bounds or len(bounds) > limit:
        return "true"
    parts = []
    for rid, (above, below) in sorted(bounds.items()):
        cond = [f"l.run_id = {int(rid)}"] + ([f"l.{column} > {int(above)}"] if above is not None else []) + \
            ([f"l.{column} < {int(below)}"] if below is not None else [])
        parts.append("(" + " AND ".join(cond) + ")")
    return " OR ".join(parts)


def run_set(con, name: str, *, runs=(), sources=(), frames: dict | None = None, fmt: dict | None = None,
            params=(), text: str | None = None) -> list[tuple]:
    """Rows of the derivation query ``name`` over ``runs`` / ``sources`` (see the module docstring)."""
    q = text if text is not None else sql(name)
    ids = {"runs": ("run_id", runs), "sources": ("source_id", sources)}
    # {runs} filters run_id, {runs@t} filters t.run_id (a statement that joins a parameter frame)
    q = _ID_PLACEHOLDER.sub(lambda m: id_filter((m.group(2) + "." if m.group(2) else "") + ids[m.group(1)][0],
                                                ids[m.group(1)][1]), q)
    for key, value in (fmt or {}).items():
        q = q.replace("{" + key + "}", value)
    frames = frames or {}
    for key, frame in frames.items():
        con.register(key, frame.to_arrow())
    try:
        cur = con.execute(q, list(params))
        rows = cur.fetchall() if cur.description is not None else []
    except BaseException:
        # the statement's own error is the one to report: after it DuckDB refuses every
        # further call in the aborted transaction, unregister too
        for key in frames:
            try:
                con.unregister(key)
            except Exception:
                pass
        raise
    for key in frames:
        con.unregister(key)
    return rows
