"""The rule loader remembers which rule SQL was found to be one SELECT (analysis/select_cache.py
``SelectOnlyCache``): a second load parses nothing again, a corrupt cache only costs a check,
and SQL that is not one SELECT is refused every time (never remembered)."""
from __future__ import annotations

import pytest

from logsleuth.analysis import select_cache as rules_mod
from logsleuth.analysis.rules import load_rules
from logsleuth.errors import GrammarError

BAD = """-- id: sneaky
-- severity: warning
-- title: t
-- fix: f
-- source: test
DELETE FROM runs
"""


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("LOGSLEUTH_NO_GRAMMAR_CACHE", raising=False)
    return tmp_path / "cache" / "logsleuth" / rules_mod.SelectOnlyCache.NAME


def _count_checks(monkeypatch) -> list:
    calls = []
    real = rules_mod.select_only

    def counting(sql):
        calls.append(sql)
        return real(sql)

    monkeypatch.setattr(rules_mod, "select_only", counting)
    return calls


def test_second_load_checks_nothing_again(cache_home, monkeypatch):
    calls = _count_checks(monkeypatch)
    first = load_rules()
    assert len(calls) == len(first) and cache_home.is_file()
    calls.clear()
    second = load_rules()
    assert calls == []
    assert [(r.id, r.sql) for r in first] == [(r.id, r.sql) for r in second]


def test_corrupt_or_unreadable_cache_is_checked_again(cache_home, monkeypatch):
    cache_home.parent.mkdir(parents=True)
    cache_home.write_bytes(b"\xff\xfe not a hash\n" + b"z" * 64 + b"\n")
    calls = _count_checks(monkeypatch)
    rules = load_rules()
    assert len(calls) == len(rules)
    assert all(len(h) == 64 for h in cache_home.read_text().split())  # rewritten clean


def test_cache_off_checks_every_time(cache_home, monkeypatch):
    monkeypatch.setenv("LOGSLEUTH_NO_GRAMMAR_CACHE", "1")
    calls = _count_checks(monkeypatch)
    load_rules()
    n = len(calls)
    load_rules()
    assert len(calls) == 2 * n and not cache_home.exists()


def test_a_rule_that_writes_is_refused_every_time(cache_home, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "sneaky.sql").write_text(BAD)
    for _ in range(2):
        with pytest.raises(GrammarError, match="sneaky.sql: a rule is one SELECT"):
            load_rules([str(folder)])
    remembered = cache_home.read_text() if cache_home.exists() else ""
    assert rules_mod.SelectOnlyCache._key("DELETE FROM runs") not in remembered
