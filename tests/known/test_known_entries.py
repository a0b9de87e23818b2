"""Every known-issue entry, generated from the data: a run where it must match and runs where it must not.

For each matchable entry of parsers/known_issues.toml a database gets one run whose facts agree with every
condition of the entry and whose log holds the entry's own sample line (its `also_sample` a line later);
the entry must match it (or, with a condition no log shows, must say so). The same run then changes one
thing at a time, and the entry must not match: the other engine, a GPU the entry does not name, the
release that fixed it or a version outside the affected range, the sample inside a user's prompt (a
request-log line), and, for a generic line, a run that shows none of its facts.
"""
from __future__ import annotations

import datetime as dt
import re

import pytest

from logsleuth.analysis.known_issues import load_known_issues, version_key
from logsleuth.analysis.known_match import consider

ISSUES = load_known_issues([])
MATCHABLE = [i for i in ISSUES if i.matchable]

#: plausible values for the regex conditions (models, GPUs, drafts, flag values); the first that the
#: entry's regex accepts is used, and an entry none fits fails here rather than passing untested
EXAMPLES = ["deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V4-Flash",
            "deepseek-ai/DeepSeek-R1", "openai/gpt-oss-120b", "nvidia/Qwen3-30B-A3B-NVFP4",
            "meta-llama/Llama-4-Scout-17B-16E", "MiniMaxAI/MiniMax-M2.5", "lmsys/EAGLE3-LLaMA3.1-8B",
            "AMD Instinct MI355X", "AMD Instinct MI300X", "True", "1", "deepep", "auto", "xgrammar", "64",
            "{'rope_scaling': {'rope_type': 'yarn', 'factor': 4.0}}"]
OTHER_ENGINE = {"sglang": "vllm", "vllm": "sglang"}


def example(rx: str, lowered: bool = False) -> str:
    """A value ``rx`` accepts (configuration values are compared in lower case)."""
    for value in EXAMPLES:
        if re.search(rx, value.lower() if lowered else value):
            return value
    raise AssertionError(f"no example value fits {rx!r}: add one to EXAMPLES")


def agreeing_facts(issue) -> dict:
    """Run facts that satisfy every condition of ``issue``."""
    w, up = issue.when, issue.upstream
    f = {"engine": issue.engines[0], "started_at": dt.datetime(2026, 6, 1)}
    if w.get("gpu_sm"):
        f["gpu_sm"] = w["gpu_sm"][0]
    if w.get("gpu_vendor"):
        f["gpu_vendor"] = w["gpu_vendor"][0]
    if w.get("gpu_name"):
        f["gpu_name"] = example(w["gpu_name"])
    if w.get("interconnect"):
        f["gpu_interconnect"] = w["interconnect"][0]
    fixed = up.get("fixed_in") if not up.get("fixed_component") else None
    version = w.get("version_max") or w.get("version_min") or ("0.0.1" if fixed else None)
    if version:
        f["engine_version"] = version
    if w.get("built_before"):
        f["started_at"] = dt.datetime.fromisoformat(w["built_before"]) - dt.timedelta(days=30)
    if w.get("min_tp") or w.get("max_tp"):
        f["tp_size"] = w.get("min_tp") or w.get("max_tp")
    if w.get("min_ep"):
        f["ep_size"] = w["min_ep"]
    if w.get("spec"):
        f["spec_method"] = "eagle"
    if w.get("spec_method"):
        f["spec_method"] = w["spec_method"][0]
    if w.get("draft_model"):
        f["spec_draft_model"] = example(w["draft_model"])
    if w.get("attention_backend"):
        f["attention_backend"] = w["attention_backend"][0]
    if w.get("cuda_graph") is not None:
        f["cuda_graph"] = w["cuda_graph"]
    if w.get("model"):
        f["model"] = example(w["model"])
    if w.get("end_state"):
        f["end_state"] = w["end_state"][0]
    f["config"] = {k: example(rx, lowered=True) for k, rx in (w.get("config") or {}).items()}
    return f


def build(con, issue, facts: dict, *, in_prompt: bool = False) -> None:
    """One run (id 1) with ``facts`` and the entry's sample line(s), or its figure for a metric signature."""
    facts = dict(facts)
    config = facts.pop("config", {})
    con.execute("INSERT INTO sources (source_id, name, path, kind, engine) VALUES (1, 'x.log', 'x.log', 'server_log', ?)",
                [facts.get("engine")])
    cols = ["run_id", "source_id", "ordinal", "first_line", "last_line"] + list(facts)
    con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [1, 1, 1, 1, 100] + list(facts.values()))
    for n, (key, value) in enumerate(config.items()):
        con.execute("INSERT INTO config (source_id, line_no, run_id, origin, key, value) VALUES (1, ?, 1, 'server_args', ?, ?)",
                    [2 + n, key, value])
    sig = issue.signature
    lines = [(10, sig["sample"])] * (sig.get("min_lines") or 1)
    lines = [(10 + i, text) for i, (_, text) in enumerate(lines)]
    if sig.get("also_sample"):
        lines.append((lines[-1][0] + 2, sig["also_sample"]))
    for line_no, text in lines:
        if in_prompt:  # the text inside a request a user sent, as the engines log it
            raw = f"INFO 06-01 10:00:00 [logger.py:1] Received request chatcmpl-1: prompt: 'Why does my server say {text}?', params: SamplingParams(n=1)"
            for table in ("lines_bulk", "lines_other"):
                con.execute(f"INSERT INTO {table} (source_id, line_no, run_id, kind, pattern, raw) VALUES (1, ?, 1, 'event', 'vllm_request_log', ?)",
                            [line_no, raw])
        else:
            con.execute("INSERT INTO lines_other (source_id, line_no, run_id, kind, pattern, raw) VALUES (1, ?, 1, NULL, NULL, ?)",
                        [line_no, text])
    if sig.get("metric") and not in_prompt:
        bound = sig.get("value_max", sig.get("value_min"))
        if sig["metric"] == "mean_accept_len":
            con.execute("INSERT INTO run_rollup (source_id, run_id, mean_accept_len, first_spec_line) VALUES (1, 1, ?, 10)", [bound])
        else:
            for i in range(int(bound)):
                con.execute("INSERT INTO spec_stats (source_id, line_no, run_id, accept_len) VALUES (1, ?, 1, 1.0)", [10 + i])


def verdict(con, issue):
    found = [c for c in consider(con, [issue], ["vllm_request_log", "sgl_request_log"], None) if c.run_id == 1]
    return found[0] if found else None


@pytest.fixture
def con(tmp_path):
    import logsleuth

    c = logsleuth.open_db(str(tmp_path / "k.duckdb"))
    yield c
    c.close()


@pytest.mark.parametrize("issue", MATCHABLE, ids=lambda i: i.id)
def test_matches_its_own_sample_when_the_facts_agree(con, issue):
    build(con, issue, agreeing_facts(issue))
    c = verdict(con, issue)
    assert c is not None, "the signature was not found on its own sample"
    if not issue.specific and issue.when.get("unchecked"):
        assert not c.matched and "no log shows" in c.why_not()
        return
    assert c.matched, c.why_not()
    assert all(x["state"] == "agrees" for x in c.conditions), c.conditions
    assert c.confidence() == issue.confidence
    cit = c.citation(issue.engines[0], agreeing_facts(issue).get("engine_version"))
    assert cit["upstream"] and all(u.startswith("https://") or u == "" for u in cit["urls"])


@pytest.mark.parametrize("issue", [i for i in MATCHABLE if i.engine != "both"], ids=lambda i: i.id)
def test_not_on_the_other_engine(con, issue):
    facts = agreeing_facts(issue) | {"engine": OTHER_ENGINE[issue.engine]}
    build(con, issue, facts)
    c = verdict(con, issue)
    assert c is not None and not c.matched and "engine is" in c.why_not()


@pytest.mark.parametrize("issue", [i for i in MATCHABLE if i.when.get("gpu_sm") or i.when.get("gpu_vendor")],
                         ids=lambda i: i.id)
def test_not_on_other_hardware(con, issue):
    facts = agreeing_facts(issue)
    if issue.when.get("gpu_sm"):
        facts["gpu_sm"] = "SM75"
    else:
        facts["gpu_vendor"] = "intel"
    build(con, issue, facts)
    c = verdict(con, issue)
    assert c is not None and not c.matched


def _versioned():
    return [i for i in MATCHABLE if i.when.get("version_min") or i.when.get("version_max")
            or (i.upstream.get("fixed_in") and not i.upstream.get("fixed_component"))]


def _outside(issue) -> str:
    """A version the entry does not affect: its fix release, or just past its affected range."""
    fixed = issue.upstream.get("fixed_in") if not issue.upstream.get("fixed_component") else None
    if fixed:
        return fixed
    if issue.when.get("version_max"):
        hi = version_key(issue.when["version_max"])
        return ".".join(map(str, hi[:-1] + [hi[-1] + 1]))
    lo = version_key(issue.when["version_min"])
    return ".".join(map(str, lo[:-1] + [lo[-1] - 1])) if lo[-1] else "0.0.1"


@pytest.mark.parametrize("issue", _versioned(), ids=lambda i: i.id)
def test_not_on_a_fixed_or_unaffected_version(con, issue):
    build(con, issue, agreeing_facts(issue) | {"engine_version": _outside(issue)})
    c = verdict(con, issue)
    assert c is not None and not c.matched and ("version" in c.why_not() or "fixed" in c.why_not())


@pytest.mark.parametrize("issue", [i for i in MATCHABLE if i.signature.get("regex")], ids=lambda i: i.id)
def test_not_when_the_text_is_in_a_users_prompt(con, issue):
    build(con, issue, agreeing_facts(issue), in_prompt=True)
    assert verdict(con, issue) is None


@pytest.mark.parametrize("issue", [i for i in MATCHABLE if not i.specific], ids=lambda i: i.id)
def test_a_generic_line_needs_the_facts(con, issue):
    """A generic line on a run that shows nothing but its engine is not a match."""
    build(con, issue, {"engine": issue.engines[0], "started_at": dt.datetime(2026, 6, 1)})
    c = verdict(con, issue)
    assert c is not None and not c.matched


def test_every_generic_entry_names_a_condition_beyond_the_engine():
    """A generic line with nothing but its engine to check would match any run printing it."""
    checked = ("gpu_sm", "gpu_vendor", "gpu_name", "interconnect", "version_min", "version_max", "built_before",
               "min_tp", "max_tp", "min_ep", "spec", "spec_method", "draft_model", "attention_backend",
               "cuda_graph", "model", "end_state", "config", "unchecked")
    bare = [i.id for i in MATCHABLE if not i.specific and not any(i.when.get(k) for k in checked)]
    assert not bare
