"""One answer per question: no run gets two findings that move the same setting in opposite directions.

Rules declare the direction of their fix as data (``-- advice: mem_fraction_static=lower``); every pair
of rules that would raise and lower one setting is checked on every database the rule tests build
(samples, others, truth, story, the real corpus when present) and on generated logs of both engines,
where the 20 MB SGLang log used to get both sgl_mem_fraction_too_high and sgl_mem_fraction_too_low."""
from __future__ import annotations

import itertools
import sys

import pytest

from logsleuth.analysis.rules import load_rules
from logsleuth.errors import GrammarError
from support.findings import ingest_each
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402


def opposite_pairs() -> list[tuple[str, str, str]]:
    """(setting, rule that raises it, rule that lowers it) for every such pair of shipped rules."""
    rules = load_rules()
    out = []
    for a, b in itertools.permutations(rules, 2):
        for setting, way in a.advice.items():
            if way == "raise" and b.advice.get(setting) == "lower":
                out.append((setting, a.id, b.id))
    return sorted(out)


def clashes(findings) -> list[tuple]:
    """(run id, setting, raising rule, lowering rule) for every run told both ways."""
    by_run: dict[int, set] = {}
    for f in findings.findings:
        by_run.setdefault(f.run_id, set()).add(f.rule_id)
    return [(run, setting, up, down) for run, ids in sorted(by_run.items())
            for setting, up, down in opposite_pairs() if up in ids and down in ids]


def test_the_opposite_pairs_are_declared():
    pairs = opposite_pairs()
    assert ("mem_fraction_static", "sgl_mem_fraction_too_low", "sgl_mem_fraction_too_high") in pairs
    assert {s for s, _, _ in pairs} >= {"gpu_memory_utilization", "max_running_requests", "max_model_len"}


def test_a_bad_advice_header_is_refused(tmp_path):
    from logsleuth.analysis.rules import parse_rule
    path = tmp_path / "x_rule.sql"
    path.write_text("-- id: x_rule\n-- severity: info\n-- title: t\n-- fix: f\n-- advice: mem_fraction_static=up\n"
                    "SELECT 1 AS run_id, 1 AS line_no\n")
    with pytest.raises(GrammarError, match="setting=raise or setting=lower"):
        parse_rule(path)


@pytest.mark.parametrize("name", ["samples", "others", "truth", "story", "corpus"])
def test_no_run_is_told_both_ways(name, request):
    db = request.getfixturevalue(name)
    assert clashes(db) == []


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    d = tmp_path_factory.mktemp("generated")
    logs = []
    for engine, size in (("sglang", 20_000_000), ("vllm", 6_000_000)):
        logs.append(d / f"{engine}.log")
        generate(logs[-1], engine, size, 1)
    db = ingest_each(str(d / "db.duckdb"), logs)
    yield db
    db.con.close()


def test_generated_logs_get_one_answer(generated):
    ids = {f.rule_id for f in generated.of("sgl_mem_fraction_too_high", "sglang.log", 1)}
    assert ids == {"sgl_mem_fraction_too_high"}  # the OOM while serving decides run 1 ...
    assert generated.of("sgl_mem_fraction_too_low", "sglang.log", 2)  # ... and the retractions run 2
    assert clashes(generated) == []
