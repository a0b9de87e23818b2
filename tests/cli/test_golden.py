"""Golden output of every command in every format: the output is a contract (scripts parse
it, people grep it), so any change to it shows up here as a diff to review.

The goldens live in tests/cli/golden/<name>.txt. Volatile parts are replaced before the
comparison: the checkout and temporary paths, and ingest timestamps. After an intended
change, rewrite them and review the diff:

    LOGSLEUTH_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_golden.py
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support.paths import ROOT

from .conftest import VLLM

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("LOGSLEUTH_UPDATE_GOLDEN"))

FOUR = ("table", "csv", "json", "markdown")

#: name -> arguments after `logsleuth --db <story db>`
CASES: dict[str, list[str]] = {}
for fmt in FOUR:
    CASES[f"runs.{fmt}"] = ["runs", "--format", fmt]
    CASES[f"sql.{fmt}"] = ["sql", "--format", fmt, "SELECT run_id, source_name, engine, spec_method, end_state, "
                           "decode_samples FROM run_summary ORDER BY run_id"]
    CASES[f"schema_runs.{fmt}"] = ["schema", "runs", "--format", fmt]
    CASES[f"unparsed.{fmt}"] = ["unparsed", "--limit", "5", "--format", fmt]
    CASES[f"compare.{fmt}"] = ["compare", "sglang_baseline", "eagle", "--no-findings", "--format", fmt]
for fmt in ("table", "json"):
    CASES[f"show.{fmt}"] = ["show", "eagle", "--format", fmt]
    CASES[f"schema.{fmt}"] = ["schema", "--format", fmt]
for fmt in ("table", "json", "markdown"):
    CASES[f"diagnose.{fmt}"] = ["diagnose", "--run", "eagle", "--format", fmt]
CASES["diagnose_quiet.table"] = ["diagnose", "--run", "eagle", "--quiet"]
CASES["diagnose_quiet.markdown"] = ["diagnose", "--run", "eagle", "--quiet", "--format", "markdown"]
CASES["sql_statements.table"] = ["sql", "SELECT count(*) AS runs FROM runs; SELECT engine, count(*) AS n "
                                 "FROM runs GROUP BY engine ORDER BY engine"]
CASES["sql_statements.markdown"] = ["sql", "--format", "markdown",
                                    "SELECT count(*) AS runs FROM runs; SELECT 'two' AS second"]
# `rules` lists the shipped rule files, edited all the time: tests/cli/test_conventions.py
# checks its formats by structure instead of by golden text

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?")


def stable(text: str, *tmp_dirs: str) -> str:
    """``text`` without what changes from one run or machine to the next."""
    for d in tmp_dirs:
        text = text.replace(d, "<tmp>")
    text = text.replace(str(ROOT), "<root>")
    text = re.sub(r'"ingested_at": "[^"]*"', '"ingested_at": "<time>"', text)
    return text


def check(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if UPDATE or not path.exists():
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))  # line ends exactly as printed
        if not UPDATE:
            pytest.fail(f"golden {path.name} was missing and has been written: review and commit it")
        return
    want = path.read_bytes().decode("utf-8")
    assert text == want, f"output of {name} changed; LOGSLEUTH_UPDATE_GOLDEN=1 rewrites tests/cli/golden/"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(run, story_db, name):
    code, out, err = run(*CASES[name])
    assert code == 0, err
    check(name, stable(out, str(Path(story_db).parent)))


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_golden_ingest(invoke, tmp_path, fmt):
    db = str(tmp_path / "ingest.duckdb")
    code, out, err = invoke("--db", db, "ingest", str(VLLM), "--label", "eagle", "--format", fmt)
    assert code == 0, err
    check(f"ingest.{fmt}", stable(out, str(tmp_path)))


def test_no_stray_goldens():
    """Every golden file belongs to a case (a renamed case leaves no orphan behind)."""
    names = set(CASES) | {"ingest.table", "ingest.json"}
    stray = sorted(p.stem for p in GOLDEN.glob("*.txt") if p.stem not in names)
    assert stray == []
