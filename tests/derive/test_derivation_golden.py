"""Run derivation gives exactly the rows it gave when the golden file was written
(tests/derive/golden/derivation.json, from ``python tests/derive/snapshot.py --write``): every
column of every ``runs`` row, fatal flags, primary ranks, templates and their assignment,
spec_stats, environment reports and the sources counters, for every file under tests/samples
and every file of the real corpus. Any drift fails, table by table."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snapshot  # noqa: E402

GOLDEN = json.loads(snapshot.GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module", params=["samples", "corpus"])
def taken(request, tmp_path_factory):
    which = request.param
    if which == "corpus" and not snapshot.corpus_logs():
        pytest.skip("real corpus not available")
    if which not in GOLDEN:
        pytest.skip(f"the golden file has no {which} snapshot")
    return which, snapshot.take(which, tmp_path_factory.mktemp(which))


def _first_difference(want: list, got: list) -> str:
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            cols = sorted(k for k in set(w) | set(g) if w.get(k) != g.get(k)) if isinstance(w, dict) else []
            return f"row {i}: " + (", ".join(f"{c}: {w.get(c)!r} -> {g.get(c)!r}" for c in cols) or f"{w} -> {g}")
    return f"{len(want)} rows -> {len(got)} rows"


@pytest.mark.parametrize("table", sorted(set(snapshot._FULL) | set(snapshot._DIGEST)))
def test_derived_rows_unchanged(taken, table):
    which, got = taken
    want = GOLDEN[which][table]
    if isinstance(want, list):
        assert got[table] == want, f"{which} {table}: " + _first_difference(want, got[table])
    else:
        assert got[table] == want, f"{which} {table} rows changed: {want} -> {got[table]}"
