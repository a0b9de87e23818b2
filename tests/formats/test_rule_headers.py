"""Rule headers: fix texts per engine, evidence quoted once, every silent rule explained,
and the rules reference in docs/ generated from the headers."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from logsleuth.analysis.rules import SEVERITIES, load_rules, parse_rule
from logsleuth.errors import GrammarError
from support.paths import ROOT, SAMPLES

#: spellings only one engine's advice contains: a finding on the other engine's run must not show them
ONLY = {
    "sglang": ["sglang", "--mem-fraction-static", "--cuda-graph-max-bs", "--chunked-prefill-size",
               "--max-running-requests", "--disable-radix-cache", "--context-length", "--schedule-conservativeness"],
    "vllm": ["vllm", "VLLM_", "--gpu-memory-utilization", "--max-num-seqs", "--max-model-len",
             "--max-num-batched-tokens", "--enforce-eager", "--enable-prefix-caching"],
}


def _rule(tmp_path: Path, header: str, name: str = "r1") -> Path:
    path = tmp_path / f"{name}.sql"
    path.write_text(f"-- id: {name}\n-- severity: warning\n-- title: Run {{run_id}}\n{header}\n"
                    "SELECT run_id, min(line_no) AS line_no FROM runs GROUP BY run_id\n", encoding="utf-8")
    return path


def test_fix_per_engine(tmp_path):
    rule = parse_rule(_rule(tmp_path, "-- fix: Common advice.\n-- fix.sglang: Lower --mem-fraction-static.\n"
                                      "-- fix.vllm: Lower --gpu-memory-utilization."))
    assert rule.fix_for("sglang") == "Common advice. Lower --mem-fraction-static."
    assert rule.fix_for("vllm") == "Common advice. Lower --gpu-memory-utilization."
    # a run of neither engine (a benchmark file) sees both, labelled
    assert rule.fix_for(None) == ("Common advice. SGLang: Lower --mem-fraction-static. "
                                  "vLLM: Lower --gpu-memory-utilization.")
    only = parse_rule(_rule(tmp_path, "-- fix.vllm: Only for vLLM.", name="r2"))
    assert only.fix_for("vllm") == "Only for vLLM." and only.fix_for("sglang") == ""
    with pytest.raises(GrammarError, match=r"fix.trtllm:' names no engine"):
        parse_rule(_rule(tmp_path, "-- fix.trtllm: no", name="r3"))
    with pytest.raises(GrammarError, match="lacks '-- fix: ...'"):
        parse_rule(_rule(tmp_path, "-- source: nothing to fix", name="r4"))


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_no_shipped_rule_gives_a_run_the_other_engines_advice(engine):
    other = "vllm" if engine == "sglang" else "sglang"
    wrong = []
    for rule in load_rules():
        if rule.engine and rule.engine != engine:
            continue  # never runs for this engine
        text = rule.fix_for(engine)
        hits = [w for w in ONLY[other] if w.lower() in text.lower()]
        # a rule id naming the other engine's sibling rule is fine ("see vllm_preemption") only as an id
        hits = [w for w in hits if not all(f"{w.lower()}_" in t or f"_{w.lower()}" in t
                                           for t in [text.lower()])]
        if hits:
            wrong.append((rule.id, hits))
    assert wrong == []


def test_severities_defined_once():
    from logsleuth.analysis import compare

    assert compare.SEVERITIES is SEVERITIES


@pytest.fixture(scope="module")
def two_engine_db(tmp_path_factory):
    import logsleuth
    from logsleuth import api

    tmp = tmp_path_factory.mktemp("engines")
    con = logsleuth.open_db(str(tmp / "db.duckdb"))
    api.ingest_files(con, [str(SAMPLES / "sglang_tuned_v1.log"), str(SAMPLES / "vllm_kimi_k25.log")])
    yield con, tmp
    con.close()


def test_findings_show_their_engines_fix_and_quote_lines_once(two_engine_db):
    from logsleuth import api

    con, tmp = two_engine_db
    rules = tmp / "rules"
    rules.mkdir(exist_ok=True)
    (rules / "every_run.sql").write_text(textwrap.dedent("""\
        -- id: every_run
        -- severity: info
        -- title: Run {run_id} ({engine})
        -- fix: Look.
        -- fix.sglang: Lower --mem-fraction-static.
        -- fix.vllm: Lower --gpu-memory-utilization.
        SELECT run_id, first_line AS line_no, engine,
               [first_line, first_line, last_line, last_line, NULL] AS evidence_lines
        FROM runs
        """), encoding="utf-8")
    found = api.diagnose(con, rule_ids=["every_run"], extra_dirs=[str(rules)])
    engines = {f.values["engine"]: f for f in found}
    assert set(engines) == {"sglang", "vllm"}
    assert engines["sglang"].fix == "Look. Lower --mem-fraction-static."
    assert engines["vllm"].fix == "Look. Lower --gpu-memory-utilization."
    for f in found:
        quoted = [f.line_no] + [e["line_no"] for e in f.evidence_lines]
        assert len(quoted) == len(set(quoted)) == 2


def test_verbose_explains_every_silent_rule(two_engine_db):
    from logsleuth import api

    con, _ = two_engine_db
    result = api.diagnosis(con)
    fired = {f.rule_id for f in result.findings}
    silent = dict(result.silent)
    assert set(silent) == {r.id for r in load_rules()} - fired
    assert all(why for why in silent.values())
    reasons = " | ".join(silent.values())
    assert "threshold not reached" in reasons and "condition it looks for is absent" in reasons
    assert "needs " in reasons  # a requirement missing (no benchmark rows, no telemetry)
    only_sglang = api.diagnosis(con, run_ids=[r for r, h in result.runs.items() if h.get("engine") == "sglang"])
    assert any("applies to vLLM runs only" in why for _, why in only_sglang.silent)


# ---------------------------------------------------------------- docs

def test_rules_reference_is_up_to_date():
    from logsleuth.analysis.rules_doc import render_markdown

    doc = ROOT / "docs" / "rules.md"
    assert doc.read_text(encoding="utf-8") == render_markdown(load_rules()), (
        "docs/rules.md is stale: regenerate with `python -m logsleuth.analysis.rules_doc`")


def test_rule_sources_cite_only_documents_that_ship():
    """Sources cite docs/ (the knowledge base), parsers/ or the README, never the team's
    working notes, which do not ship; every shipped path they name exists."""
    import re

    notes = ("diagnostics.md", "vllm-log-formats.md", "sglang-log-formats.md", "telemetry-formats.md",
             "env-reports.md", "gpu-catalog.md", "architecture.md")
    for rule in load_rules():
        for note in notes:
            assert not re.search(rf"(?<![\w/]){re.escape(note)}", rule.source), (rule.id, note)
        for path in re.findall(r"\b((?:docs|parsers)/[\w.-]+)", rule.source):
            assert (ROOT / path.rstrip(".")).exists(), (rule.id, path)
