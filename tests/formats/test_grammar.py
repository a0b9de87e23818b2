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
    shipped = [p for p in grammar_files() if p.name != path.name]
    return load_grammars(shipped + [path])


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


def test_lookaround_is_rejected(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "lookahead"
table = "events"
literal = "Hello"
regex = '^Hello(?= world)'
samples = ["[2025-01-01 00:00:00] Hello world"]
""")
    with pytest.raises(GrammarError, match="lookahead.*invalid regex"):
        load_grammars([path])


def test_sample_claimed_by_another_pattern(tmp_path):
    # a pattern whose sample is a decode line: sgl_decode (sglang.toml, order 10) claims it first
    path = _write(tmp_path, HEAD.replace("order = 5", "order = 20") + """
[[pattern]]
name = "my_decode"
table = "lines"
literal = "Decode batch"
regex = 'Decode batch'
samples = ["[2025-01-01 00:00:00 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, gen throughput (token/s): 5.00, #queue-req: 0"]
""")
    with pytest.raises(GrammarError) as err:
        _load_with_shipped(path)
    msg = str(err.value)
    assert "my_decode" in msg and "sample not claimed by its own pattern" in msg and "sgl_decode" in msg


def test_sample_not_matching_its_regex(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "my_hello"
table = "lines"
literal = "Hello"
regex = '^Hello there'
samples = ["[2025-01-01 00:00:00] Hello world"]
""")
    with pytest.raises(GrammarError, match="(?s)my_hello.*claimed by: nothing.*Hello world"):
        _load_with_shipped(path)


def test_unknown_key(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "typo"
table = "events"
literal = "Hello"
regexp = '^Hello'
samples = ["Hello"]
""")
    with pytest.raises(GrammarError, match=r"typo.*unknown key\(s\) \['regexp'\]"):
        load_grammars([path])


def test_missing_samples(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "no_samples"
table = "events"
literal = "Hello"
regex = '^Hello'
""")
    with pytest.raises(GrammarError, match="no_samples.*needs at least one sample"):
        load_grammars([path])


def test_field_without_capture(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "lonely_field"
table = "events"
literal = "Hello"
regex = '^Hello (?P<text>\\w+)'
samples = ["Hello world"]
[pattern.fields]
value = "float"
""")
    with pytest.raises(GrammarError, match=r"lonely_field.*field 'value'.*no capture \(\?P<value>"):
        load_grammars([path])


def test_bad_table_type_and_duplicate_name(tmp_path):
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "t"
table = "nowhere"
literal = "Hello"
regex = '^Hello'
samples = ["Hello"]
""")
    with pytest.raises(GrammarError, match="table 'nowhere'"):
        load_grammars([path])
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "sgl_decode"
table = "lines"
literal = "Hello"
regex = '^Hello'
samples = ["Hello"]
""", name="dup.toml")
    with pytest.raises(GrammarError, match="sgl_decode.*name already used in sglang.toml"):
        _load_with_shipped(path)
    path = _write(tmp_path, HEAD + """
[[pattern]]
name = "typed"
table = "events"
literal = "Hello"
regex = '^Hello (?P<value>\\d+)'
samples = ["Hello 1"]
[pattern.fields]
value = "number"
""", name="type.toml")
    with pytest.raises(GrammarError, match="unknown type 'number'"):
        load_grammars([path])


def test_invalid_toml_and_prefix_without_msg(tmp_path):
    with pytest.raises(GrammarError, match="not valid TOML"):
        load_grammars([_write(tmp_path, "[grammar\nname = 1\n", name="bad.toml")])
    path = _write(tmp_path, HEAD + "[prefix]\nregex = '^(?P<ts>\\\\d+) (?P<rest>.*)$'\n", name="prefix.toml")
    with pytest.raises(GrammarError, match=r"\[prefix\] regex: needs a \(\?P<msg>"):
        load_grammars([path])


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
