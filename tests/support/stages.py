"""The ingest stages one at a time, for unit tests: lines -> classified frame -> fold -> timestamps -> runs.

Only this module knows where the stage functions live (the ingest package is being split into
more files), so a move changes one import here rather than every unit test.
"""
from __future__ import annotations

import inspect
from functools import lru_cache

import polars as pl

from logsleuth.formats.grammar import default_grammars
from logsleuth.ingest.detect import Detection, detect  # noqa: F401  (re-exported for the tests)
from logsleuth.ingest.fold import Folded, fold  # noqa: F401
from logsleuth.ingest.normalize import RunState, TimeState, add_timestamps, assign_runs  # noqa: F401
from logsleuth.ingest.parse import parse_frame, patterns_for


@lru_cache(maxsize=1)
def grammars():
    return default_grammars()


def lines_frame(lines: list[str], first_line_no: int = 1) -> pl.DataFrame:
    """The frame the reader yields: line_no, raw, truncated."""
    return (pl.DataFrame({"raw": lines}, schema={"raw": pl.Utf8})
            .with_row_index("line_no", offset=first_line_no)
            .with_columns(pl.col("line_no").cast(pl.Int64), pl.lit(False).alias("truncated")))


def classified(lines: list[str], engine: str, first_line_no: int = 1) -> pl.DataFrame:
    """Lines peeled (prefix fields) and classified (pattern, table) for ``engine``."""
    return parse_frame(lines_frame(lines, first_line_no), grammars(), engine).frame


def _bench_columns() -> dict[str, str]:
    out: dict[str, str] = {}
    for g in grammars():
        out.update(g.extra.get("columns", {}))
    return out


def fold_lines(lines: list[str], engine: str, final: bool = True, first_line_no: int = 1) -> Folded:
    return fold(classified(lines, engine, first_line_no), patterns_for(grammars(), engine), _bench_columns(),
                final=final)


def run_ids_in_chunks(lines: list[str], engine: str, cuts: tuple[int, ...], base_run_id: int, year: int = 2026,
                      mtime: float = 0.0) -> tuple[pl.DataFrame, RunState]:
    """The chunk loop of the ingest pipeline over ``lines`` cut after each line count in ``cuts``:
    the carry of one chunk's fold goes ahead of the next chunk; returns (line_no, run_id) and the state."""
    pats = patterns_for(grammars(), engine)
    ranks, tstate, rstate = launch_rank(engine), TimeState(), RunState(base_run_id=base_run_id)
    bounds = [0, *cuts, len(lines)]
    carry, out = None, []
    for a, b in zip(bounds, bounds[1:]):
        fresh = lines_frame(lines[a:b], first_line_no=a + 1)
        frame = fresh if carry is None else pl.concat([carry, fresh], how="vertical_relaxed")
        folded = fold(parse_frame(frame, grammars(), engine).frame, pats, _bench_columns(), final=b == len(lines))
        carry = folded.carry
        f = _assign_runs(add_timestamps(folded.frame, tstate, mtime, year), ranks, rstate)
        out.append(f.select("line_no", "run_id"))
    return pl.concat(out).sort("line_no"), rstate


def launch_rank(engine: str) -> dict[str, int]:
    """Launch-marker pattern -> its rank in the launch sequence (banner 0, args 1, config 2)."""
    return {p.name: p.launch for p in patterns_for(grammars(), engine) if p.launch is not None}


def _assign_runs(frame: pl.DataFrame, ranks: dict[str, int], st: RunState) -> pl.DataFrame:
    # the pre-launch pattern names are moving from a Python list into the grammars' [roles]
    # (assign_runs then takes them as an argument): support both while that lands
    if "roles" in inspect.signature(assign_runs).parameters:
        from logsleuth.formats.grammar import role_map

        return assign_runs(frame, ranks, st, role_map(grammars()))
    return assign_runs(frame, ranks, st)


def file_lines(path) -> list[str]:
    """The lines of a file as the reader splits them: on "\\n" only (tqdm bars hold bare "\\r")."""
    text = path.read_bytes().decode("utf-8", "replace")
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
