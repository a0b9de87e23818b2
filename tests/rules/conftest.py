"""The databases the rule tests diagnose (sample sets in tests/support/rule_dbs.py), each built once per
session: ingest dominates their cost. The corpus database skips when the real corpus is not available."""
from __future__ import annotations

import pytest

from support.findings import ingest_each
from support.rule_dbs import SETS

def _build(tmp_path_factory, name: str):
    if not SETS[name]:
        pytest.skip(f"no files for the {name} database (real corpus not available: ../shared/corpus/real)")
    db = ingest_each(str(tmp_path_factory.mktemp(f"rules_{name}") / "db.duckdb"), SETS[name])
    return db


@pytest.fixture(scope="session")
def story(tmp_path_factory):
    db = _build(tmp_path_factory, "story")
    yield db
    db.con.close()


@pytest.fixture(scope="session")
def samples(tmp_path_factory):
    db = _build(tmp_path_factory, "samples")
    yield db
    db.con.close()


@pytest.fixture(scope="session")
def others(tmp_path_factory):
    db = _build(tmp_path_factory, "others")
    yield db
    db.con.close()


@pytest.fixture(scope="session")
def truth(tmp_path_factory):
    db = _build(tmp_path_factory, "truth")
    yield db
    db.con.close()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    db = _build(tmp_path_factory, "corpus")
    yield db
    db.con.close()
