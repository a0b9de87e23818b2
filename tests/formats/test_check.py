"""formats check and user grammars: the whole-set checks (kinds, references of rules and
views), user grammar folders loaded like the shipped ones, and a user rule reading a user
grammar's event."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logsleuth.errors import BadInputError, ExitCode, GrammarError
from logsleuth.formats import grammar as G
from logsleuth.analysis.format_check import check_formats, reference_problems
from logsleuth.formats.schema import validate
from logsleuth.resources import data_path
from support.paths import ROOT, SAMPLES

#: a user grammar teaching one line no shipped grammar knows, emitting a declared event kind
USER_GRAMMAR = """\
[grammar]
name = "site_guard"
engine = "common"
order = 5

[[pattern]]
name = "site_oom_guard"
table = "events"
kind = "oom_guard_tripped"
literal = "OOM guard tripped"
regex = 'OOM guard tripped: headroom (?P<value>[\\d.]+) GiB on (?P<device>\\S+)'
samples = ["[2026-02-03 10:47:09 TP0] OOM guard tripped: headroom 1.25 GiB on cuda:0"]

[kinds.oom_guard_tripped]
attrs = ["device"]
doc = "the site's memory guard refused an allocation"
"""

USER_RULE = """\
-- id: site_oom_guard
-- severity: warning
-- title: Run {run_id}: the OOM guard tripped {n} time(s), lowest headroom {headroom} GiB on {device}
-- fix: Lower --mem-fraction-static.
-- source: the site's runbook
SELECT run_id, min(line_no) AS line_no, count(*) AS n, min(value) AS headroom,
       any_value(json_extract_string(attrs, '$.device')) AS device
FROM events WHERE kind = 'oom_guard_tripped' GROUP BY run_id
"""


def _folder(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    d = tmp_path / name
    d.mkdir()
    for fname, text in files.items():
        (d / fname).write_text(textwrap.dedent(text), encoding="utf-8")
    return d


# ---------------------------------------------------------------- the shipped set

def test_shipped_set_passes_every_check():
    summary = check_formats()
    assert summary.grammars >= 4 and summary.rules >= 40 and summary.views >= 2
    assert summary.line().startswith(f"ok: {summary.grammars} grammars, {summary.patterns} patterns, "
                                     f"{summary.samples} sample lines claimed by their own pattern")


def test_every_shipped_grammar_validates_against_the_published_schema():
    import tomllib

    schema = json.loads(data_path("parsers/grammar.schema.json").read_text(encoding="utf-8"))
    for path in G.grammar_files(data_path("parsers")):
        assert validate(tomllib.loads(path.read_text(encoding="utf-8")), schema) == [], path.name


def test_tables_constant_matches_the_schema():
    schema = json.loads(data_path("parsers/grammar.schema.json").read_text(encoding="utf-8"))
    assert set(schema["properties"]["pattern"]["items"]["properties"]["table"]["enum"]) == G.TABLES


def test_every_events_pattern_emits_a_declared_kind_with_its_attrs():
    grammars = G.load_grammars(check_regexes=False)
    kinds = G.event_kinds(grammars)
    for g in grammars:
        for p in g.patterns:
            if p.table == "events":
                assert p.emits in kinds, (g.name, p.name)
                assert p.attrs <= set(kinds[p.emits].attrs), (p.name, p.attrs)


def test_roles_name_real_patterns_and_python_asks_for_roles():
    grammars = G.load_grammars(check_regexes=False)
    names = {p.name for g in grammars for p in g.patterns}
    roles = G.role_map(grammars)
    assert {"prelaunch", "prelaunch_stamped", "bench", "bench_start", "bench_end", "engine_banner"} <= set(roles)
    for members in roles.values():
        assert set(members) <= names | set(G.FOLD_LABELS)
    # patterns carry their roles (fold reads them from the patterns it is given)
    bench = [p for g in grammars for p in g.patterns if "bench" in p.roles]
    assert {p.name for p in bench} == set(roles["bench"])
    # the ingest and derive code names no pattern of a role: the names are data
    role_names = {m for members in roles.values() for m in members} - set(G.FOLD_LABELS)
    for folder in ("ingest", "derive"):
        for f in (ROOT / "src" / "logsleuth" / folder).glob("*.py"):
            literals = {n.value for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            assert not literals & role_names, (f.name, literals & role_names)


def test_probes_markers_aliases_are_grammar_data():
    grammars = G.load_grammars(check_regexes=False)
    probes = G.version_probes(grammars, "sglang")
    assert probes and probes[0].regex  # the regex probe (HH:MM:SS headers) is tried first
    assert all(p.like or p.regex for p in probes)
    assert "%SIGKILL%" in G.markers(grammars, "kill")
    assert G.aliases(grammars, "attention_backend", "vllm")["flash attention"] == "FLASH_ATTN"
    assert G.aliases(grammars, "attention_backend", "sglang") == {}


# ---------------------------------------------------------------- references of rules

def test_a_rule_testing_an_undeclared_event_kind_fails_with_file_and_line(tmp_path):
    rules = _folder(tmp_path, "rules", {"uses_ghost.sql": """\
        -- id: uses_ghost
        -- severity: info
        -- title: Run {run_id}
        -- fix: none
        SELECT e.run_id, e.line_no FROM events e
        WHERE e.kind = 'sampler_fallback'
           OR e.kind IN ('attention_backend', 'ghost_kind')
        """})
    with pytest.raises(GrammarError) as err:
        check_formats(rules_dirs=[rules])
    msg = str(err.value)
    # every problem, not just the first, each with file and line, and a did-you-mean hint
    assert "uses_ghost.sql line 6: event kind 'sampler_fallback' is not produced by any grammar" in msg
    assert "uses_ghost.sql line 7: event kind 'ghost_kind'" in msg
    assert "did you mean 'sampler_backend'" in msg
    assert "attention_backend'" not in msg.replace("'attention_backend_", "")
    assert err.value.exit_code == ExitCode.BAD_INPUT


def test_reference_checks_follow_aliases_per_scope():
    known = G.load_grammars(check_regexes=False)
    from logsleuth.analysis.format_check import _Known

    k = _Known.of(known)
    # `e` is errors in the first CTE and events in the second: each use is checked in its scope
    sql = """WITH a AS (SELECT e.line_no FROM errors e WHERE e.kind = 'nccl_watchdog_timeout'),
             b AS (SELECT e.kind = 'weights_loaded' AS w FROM events e)
             SELECT 1"""
    assert reference_problems("x.sql", sql, k) == []
    wrong = sql.replace("'weights_loaded'", "'nccl_watchdog_timeout'")
    assert [p.what.split(" is ")[0] for p in reference_problems("x.sql", wrong, k)] == \
        ["event kind 'nccl_watchdog_timeout'"]
    # a kind column of a CTE (not a grammar table) is not a grammar kind
    assert reference_problems("x.sql", "WITH s AS (SELECT 'ceiling' AS kind) SELECT * FROM s WHERE kind = 'ceiling'",
                              k) == []
    # pattern names, fold labels, lines kinds and attrs keys
    assert reference_problems("x.sql", "SELECT * FROM lines_other WHERE pattern IN ('shell_trace', 'continuation') "
                              "AND kind = 'unparsed'", k) == []
    bad = reference_problems("x.sql", "SELECT * FROM lines_other l WHERE l.pattern = 'shel_trace' AND "
                             "json_extract_string(attrs, '$.no_such_attr') IS NULL", k)
    assert [p.what.split(" is ")[0] for p in bad] == ["pattern 'shel_trace'", "attrs key 'no_such_attr'"]


def test_a_rule_naming_a_missing_column_fails(tmp_path):
    rules = _folder(tmp_path, "rules", {"bad_column.sql": """\
        -- id: bad_column
        -- severity: info
        -- title: Run {run_id}
        -- fix: none
        SELECT run_id, line_no, no_such_column FROM events
        """})
    with pytest.raises(GrammarError, match=r"bad_column.sql: SQL does not bind against the schema: .*no_such_column"):
        check_formats(rules_dirs=[rules])


def test_a_rule_gated_on_a_misspelt_kind_or_column_fails(tmp_path):
    """A ``requires`` gate names kinds the grammars produce, in the table that stores them:
    a typo there would keep the rule silent on every database."""
    rules = _folder(tmp_path, "rules", {"gated.sql": """\
        -- id: gated
        -- severity: info
        -- title: Run {run_id}
        -- fix: none
        -- requires: events_other.kind=fp8_marln, events_bulk.kind=weights_loaded, runs.no_such=x
        SELECT run_id, line_no FROM events_other WHERE kind = 'fp8_marlin'
        """})
    with pytest.raises(GrammarError) as err:
        check_formats(rules_dirs=[rules])
    msg = str(err.value)
    assert "gated.sql requires events_other.kind=fp8_marln: event kind 'fp8_marln' is not produced" in msg
    assert "event kind 'weights_loaded' is stored in events_other, not in events_bulk" in msg
    assert "gated.sql: requires runs.no_such=x" in msg and "no_such" in msg


# ---------------------------------------------------------------- files and errors

def test_a_file_without_a_grammar_table_is_refused(tmp_path):
    path = tmp_path / "notes.toml"
    path.write_text('[pattern]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(GrammarError, match=r"notes.toml: not a grammar file: no \[grammar\] table"):
        check_formats([path])
    with pytest.raises(GrammarError, match="not a grammar file"):
        G.load_grammars([data_path("parsers/gpus.toml")])


def test_several_mistakes_are_all_reported(tmp_path):
    path = tmp_path / "many.toml"
    path.write_text(textwrap.dedent("""\
        [grammar]
        name = "many"
        engine = "sglang"
        colour = "blue"

        [[pattern]]
        name = "one"
        table = "nowhere"
        regex = '^One'
        samples = ["One"]

        [[pattern]]
        name = "two"
        table = "events"
        regex = '^Two (?P<x'
        samples = ["Two"]

        [[pattern]]
        name = "three"
        table = "lines"
        regex = '^Three'

        [roles]
        prelaunch = ["no_such_pattern"]
        """), encoding="utf-8")
    with pytest.raises(GrammarError) as err:
        G.load_grammars([path])
    msg = str(err.value)
    assert "many.toml [grammar]: unknown key(s) ['colour']" in msg
    assert "many.toml pattern 'one' table: 'nowhere' is not one of" in msg
    assert msg.endswith("2 problems")  # the schema problems stop the semantic checks of this file
    path.write_text(path.read_text().replace('colour = "blue"\n', "").replace('"nowhere"', '"lines"'))
    with pytest.raises(GrammarError) as err:
        G.load_grammars([path])
    msg = str(err.value)
    assert "many.toml pattern 'two' regex: invalid regex" in msg
    assert "many.toml pattern 'three': needs at least one sample line" in msg
    assert "many.toml [roles] prelaunch: no pattern named 'no_such_pattern'" in msg
    assert msg.endswith("3 problems")


def test_missing_file_and_folder_are_bad_input(tmp_path):
    with pytest.raises(BadInputError, match="no such grammar file"):
        check_formats([tmp_path / "nope.toml"])
    with pytest.raises(GrammarError, match="--grammar-dir .*: not a directory"):
        G.load_grammars(grammar_dirs=[tmp_path / "nope"])


def test_formats_check_cli_exit_codes(cli, tmp_path):
    r = cli("formats", "check", str(tmp_path / "nope.toml"))
    assert r.returncode == 3 and r.stderr.decode().startswith("Error: ") and b"Traceback" not in r.stderr
    notes = tmp_path / "notes.toml"
    notes.write_text("[other]\nx = 1\n", encoding="utf-8")
    r = cli("formats", "check", str(notes))
    assert r.returncode == 3 and "not a grammar file" in r.stderr.decode()


# ---------------------------------------------------------------- user grammars

def test_user_config_folder_loads_through_the_same_loader(tmp_path, monkeypatch):
    parsers = tmp_path / "cfg" / "logsleuth" / "parsers"
    parsers.mkdir(parents=True)
    (parsers / "site.toml").write_text(USER_GRAMMAR, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    grammars = G.load_grammars(check_regexes=False)
    assert "site_guard" in {g.name for g in grammars}
    assert "oom_guard_tripped" in G.event_kinds(grammars)
    # a broken user grammar is reported like a shipped one
    (parsers / "site.toml").write_text(USER_GRAMMAR.replace("regex =", "regexp ="), encoding="utf-8")
    with pytest.raises(GrammarError, match=r"site.toml pattern 'site_oom_guard': unknown key\(s\) \['regexp'\]"):
        G.load_grammars(check_regexes=False)


def test_user_grammar_and_user_rule_fire_together(tmp_path, monkeypatch):
    import logsleuth
    from logsleuth import api

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    grammars = _folder(tmp_path, "grammars", {"site.toml": USER_GRAMMAR})
    rules = _folder(tmp_path, "rules", {"site_oom_guard.sql": USER_RULE})
    lines = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(200, "[2026-02-03 10:48:00 TP0] OOM guard tripped: headroom 0.75 GiB on cuda:3\n")
    log = tmp_path / "site.log"
    log.write_text("".join(lines), encoding="utf-8")

    # the set checks clean with the user's folders, samples and references included
    summary = check_formats(grammar_dirs=[grammars], rules_dirs=[rules])
    assert summary.grammars == len(G.load_grammars(check_regexes=False)) + 1

    def findings(grammar_dirs):
        con = logsleuth.open_db(str(tmp_path / f"db{len(grammar_dirs)}.duckdb"))
        try:
            api.ingest_files(con, [str(log)], api.IngestOptions(grammar_dirs=tuple(grammar_dirs)))
            return [f for f in api.diagnose(con, extra_dirs=[str(rules)]) if f.rule_id == "site_oom_guard"]
        finally:
            con.close()

    found = findings([grammars])
    assert len(found) == 1
    assert found[0].title.endswith("tripped 1 time(s), lowest headroom 0.75 GiB on cuda:3")
    assert "OOM guard tripped" in (found[0].evidence or "")
    assert findings([]) == []  # without the user grammar the line is unparsed: the rule is silent


# ---------------------------------------------------------------- module hygiene

MY_MODULES = ["formats/grammar.py", "analysis/format_check.py", "ingest/grammars.py", "formats/schema.py", "settings.py",
              "gpus/catalog.py", "gpus/env_report.py", "gpus/hints.py", "gpus/resolve.py", "analysis/rules.py"]


@pytest.mark.parametrize("module", MY_MODULES)
def test_no_module_level_mutable_state(module):
    path = ROOT / "src" / "logsleuth" / module
    if not path.exists():
        pytest.skip(f"{module} not present")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal))]
    for node in tree.body:  # module-level mutable containers are constants: UPPER_CASE, never rebound
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.List, ast.Dict, ast.Set)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                assert isinstance(t, ast.Name) and t.id.lstrip("_").isupper(), (module, ast.dump(t))


def test_grammar_module_imports_no_ingest():
    code = ("import sys, logsleuth.formats.grammar, logsleuth.formats.schema; "
            "print(sorted(m for m in sys.modules if m.startswith('logsleuth.ingest')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_user_grammar_can_add_a_kill_marker(tmp_path, monkeypatch):
    """Markers are grammar data: a site's supervisor notice makes the run end 'killed'."""
    import logsleuth
    from logsleuth import api

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    head = (SAMPLES / "sglang_baseline.log").read_text(encoding="utf-8").splitlines(keepends=True)[:95]
    log = tmp_path / "k.log"
    log.write_text("".join(head) + "pod-supervisor: deadline exceeded, stopping the container\n", encoding="utf-8")
    markers = _folder(tmp_path, "markers", {"site.toml": """\
        [grammar]
        name = "site_markers"
        engine = "common"

        [markers]
        kill = ["%pod-supervisor: deadline exceeded%"]
        """})

    def end_state(grammar_dirs):
        con = logsleuth.open_db(str(tmp_path / f"k{len(grammar_dirs)}.duckdb"))
        try:
            api.ingest_files(con, [str(log)], api.IngestOptions(grammar_dirs=tuple(grammar_dirs)))
            return con.execute("SELECT end_state, end_line FROM runs").fetchall()
        finally:
            con.close()

    assert end_state([]) == [("truncated", 96)]
    assert end_state([markers]) == [("killed", 96)]
