"""Grammar files (parsers/*.toml): validation, compiler-style errors, and classification
properties over random mixes of real line formats and garbage."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logsleuth.errors import ExitCode, GrammarError
from logsleuth.analysis.format_check import check_formats
from logsleuth.formats.grammar import default_grammars, grammar_files, load_grammars
from logsleuth.ingest.parse import classify_lines, patterns_for


def _all_patterns():
    return [(g, p) for g in default_grammars() for p in g.patterns]


def test_shipped_grammars_load_and_every_pattern_has_samples():
    grammars = load_grammars()
    assert {g.name for g in grammars} >= {"sglang", "vllm", "common", "bench"}
    names = [p.name for g in grammars for p in g.patterns]
    assert len(names) == len(set(names))
    for g in grammars:
        for p in g.patterns:
            assert p.samples, p.name
            # a literal prefilter everywhere, except the two patterns that claim blank lines
            assert p.literal or p.name in ("vllm_empty_record", "traceback_body"), p.name
            # the literal really is a prefilter: every sample contains it
            for s in p.samples:
                assert p.literal in s, (p.name, s)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_every_sample_is_claimed_by_its_own_pattern(engine):
    grammars = default_grammars()
    items = [(p, s) for g in grammars if g.engine in (engine, "common") for p in g.patterns for s in p.samples]
    got = classify_lines([s for _, s in items], grammars, engine)
    wrong = [(p.name, claimed, s) for (p, s), claimed in zip(items, got)
             if claimed != p.name and p.source_file != "common.toml" and p.grammar != "bench"]
    assert wrong == []
    # common and bench samples: claimed by their own pattern under at least one engine
    other = "vllm" if engine == "sglang" else "sglang"
    got_other = classify_lines([s for _, s in items], grammars, other)
    for (p, s), a, b in zip(items, got, got_other):
        if p.grammar in ("common", "bench"):
            assert p.name in (a, b), (p.name, s)


# ---------------------------------------------------------------- failure modes

def _write(tmp_path: Path, body: str, name: str = "broken.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _load_with_shipped(path: Path):
    """Check a user grammar beside the shipped ones, samples through the classifier included
    (ingest/grammars.py: the loader in formats/grammar.py does not import the classifier)."""
    return check_formats([path])


HEAD = """\
[grammar]
name = "mine"
engine = "sglang"
order = 5
"""


def test_broken_regex_names_file_pattern_and_points_a_caret(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "my_pattern"
table = "events"
literal = "Hello"
regex = '^Hello (?P<text>\\w+'
samples = ["[2025-01-01 00:00:00] Hello world"]
""")
    with pytest.raises(GrammarError) as err:
        load_grammars([path])
    msg = err.value.message
    assert "broken.toml" in msg and "my_pattern" in msg and "regex" in msg
    lines = msg.splitlines()
    regex_line = next(i for i, ln in enumerate(lines) if "^Hello (?P<text>" in ln)
    caret = lines[regex_line + 1]
    assert caret.strip() == "^"
    # the caret sits under the unclosed group
    assert lines[regex_line][caret.index("^")] == "("
    assert err.value.exit_code == ExitCode.BAD_INPUT
    assert "Rust dialect" in (err.value.hint or "")


def _pattern(name: str, regex: str, samples: list[str], table: str = "events", literal: str = "Hello",
             fields: dict[str, str] | None = None) -> str:
    """One [[pattern]] table in TOML (regex in a literal string, as grammar authors write it)."""
    out = (f'\n[[pattern]]\nname = "{name}"\ntable = "{table}"\nliteral = "{literal}"\n'
           f"regex = '{regex}'\nsamples = {samples!r}\n".replace("', '", '", "').replace("['", '["').replace("']", '"]'))
    if fields:
        out += "[pattern.fields]\n" + "".join(f'{k} = "{v}"\n' for k, v in fields.items())
    return out


DECODE_SAMPLE = ("[2025-01-01 00:00:00 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, "
                 "gen throughput (token/s): 5.00, #queue-req: 0")

#: (grammar file text, load it beside the shipped grammars?, regexes the error message must contain)
BROKEN = [
    pytest.param(HEAD + _pattern("lookahead", "^Hello(?= world)", ["[2025-01-01 00:00:00] Hello world"]),
                 False, ["lookahead.*invalid regex"], id="lookaround"),
    # a decode line: sgl_decode (sglang.toml, order 10) claims it before this order-20 pattern
    pytest.param(HEAD.replace("order = 5", "order = 20")
                 + _pattern("my_decode", "Decode batch", [DECODE_SAMPLE], table="lines", literal="Decode batch"),
                 True, ["my_decode", "sample not claimed by its own pattern", "sgl_decode"], id="claimed-by-another"),
    pytest.param(HEAD + _pattern("my_hello", "^Hello there", ["[2025-01-01 00:00:00] Hello world"], table="lines"),
                 True, ["(?s)my_hello.*claimed by: nothing.*Hello world"], id="sample-not-matching"),
    pytest.param((HEAD + _pattern("typo", "^Hello", ["Hello"])).replace("regex =", "regexp ="),
                 False, [r"typo.*unknown key\(s\) \['regexp'\]"], id="unknown-key"),
    pytest.param((HEAD + _pattern("no_samples", "^Hello", ["Hello"])).replace('samples = ["Hello"]\n', ""),
                 False, ["no_samples.*needs at least one sample"], id="missing-samples"),
    pytest.param(HEAD + _pattern("lonely_field", r"^Hello (?P<text>\w+)", ["Hello world"], fields={"value": "float"}),
                 False, [r"lonely_field.*field 'value'.*no capture \(\?P<value>"], id="field-without-capture"),
    pytest.param(HEAD + _pattern("t", "^Hello", ["Hello"], table="nowhere"),
                 False, ["table.*'nowhere'"], id="unknown-table"),
    pytest.param(HEAD + _pattern("sgl_decode", "^Hello", ["Hello"], table="lines"),
                 True, ["sgl_decode.*name already used in sglang.toml"], id="duplicate-name"),
    pytest.param(HEAD + _pattern("typed", r"^Hello (?P<value>\d+)", ["Hello 1"], fields={"value": "number"}),
                 False, ["'typed' field 'value': 'number' is not one of"], id="unknown-field-type"),
    pytest.param("[grammar\nname = 1\n", False, ["not valid TOML"], id="invalid-toml"),
    pytest.param(HEAD + "[prefix]\nregex = '^(?P<ts>\\d+) (?P<rest>.*)$'\n",
                 False, [r"\[prefix\] regex: needs a \(\?P<msg>"], id="prefix-without-msg"),
]


@pytest.mark.parametrize("text, with_shipped, expected", BROKEN)
def test_broken_grammar_is_refused_with_a_message_naming_the_mistake(tmp_path, text, with_shipped, expected):
    path = _write(tmp_path, text, name="mine.toml")
    with pytest.raises(GrammarError) as err:
        _load_with_shipped(path) if with_shipped else load_grammars([path])
    for regex in expected:
        assert re.search(regex, str(err.value)), (regex, str(err.value))
    assert err.value.exit_code == ExitCode.BAD_INPUT


def test_formats_check_cli_ok(cli):
    r = cli("formats", "check")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    m = re.match(r"ok: (\d+) grammars, (\d+) patterns, (\d+) sample lines claimed by their own pattern", out)
    assert m, out
    assert int(m.group(2)) == sum(len(g.patterns) for g in default_grammars())
    assert r.stderr == b""


def test_formats_check_cli_broken_file(cli, tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "my_pattern"
table = "events"
literal = "Hello"
regex = '^Hello [unclosed'
samples = ["Hello world"]
""")
    r = cli("formats", "check", str(path))
    assert r.returncode == int(ExitCode.BAD_INPUT) == 3
    err = r.stderr.decode()
    assert err.startswith("Error: broken.toml pattern 'my_pattern' regex: invalid regex")
    assert "^Hello [unclosed" in err and "\n" in err
    assert re.search(r"\n\s+\^", err)  # a caret line under the regex
    assert r.stdout == b""
    assert "Traceback" not in err


# ---------------------------------------------------------------- properties

def _sample_lines(engine):
    return [s for g in default_grammars() if g.engine in (engine, "common") for p in g.patterns for s in p.samples]


SGL_SAMPLES = _sample_lines("sglang")
VLLM_SAMPLES = _sample_lines("vllm")
GARBAGE = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=200)


def _check_claims(lines, engine):
    grammars = default_grammars()
    got = classify_lines(lines, grammars, engine)
    assert len(got) == len(lines)
    by_name = {p.name: p for p in patterns_for(grammars, engine)}
    # context free: each line is classified the same way alone as in the mix
    alone = classify_lines(lines[:1], grammars, engine)
    assert alone[0] == got[0]
    for line, name in zip(lines, got):
        if name is None:
            continue
        p = by_name[name]  # exactly one pattern, and one of this engine's grammars
        assert p.literal in line


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(SGL_SAMPLES), GARBAGE), min_size=1, max_size=40))
def test_random_sglang_mixes_classify(lines):
    _check_claims(lines, "sglang")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(VLLM_SAMPLES), GARBAGE), min_size=1, max_size=40))
def test_random_vllm_mixes_classify(lines):
    _check_claims(lines, "vllm")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SGL_SAMPLES), min_size=1, max_size=30), GARBAGE)
def test_samples_keep_their_pattern_among_garbage(samples, garbage):
    """A sample line keeps its own pattern whatever surrounds it."""
    grammars = default_grammars()
    own = dict(zip(SGL_SAMPLES, classify_lines(SGL_SAMPLES, grammars, "sglang")))
    mix = []
    for s in samples:
        mix += [garbage, s]
    got = classify_lines(mix, grammars, "sglang")
    assert [got[i] for i in range(1, len(mix), 2)] == [own[s] for s in samples]
