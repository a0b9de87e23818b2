"""The rule engine: header validation, parameters, overrides, user folders, exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import logsleuth
from logsleuth.errors import GrammarError, UsageError
from logsleuth.analysis.rules import load_rules, parse_rule

from support.paths import SAMPLES
GOOD = """-- id: {id}
-- severity: warning
-- title: Run {{run_id}} has {{n}} decode lines
-- fix: Nothing to fix; this is a test rule.
-- params: min_lines=1
-- source: test
SELECT run_id, min(line_no) AS line_no, count(*) AS n FROM decode_stats
GROUP BY run_id HAVING count(*) >= $min_lines
"""


def write_rule(folder: Path, rid: str, text: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / f"{rid}.sql"
    p.write_text(text if text is not None else GOOD.format(id=rid))
    return p


def test_shipped_rules_load_and_have_sources():
    rules = load_rules()
    assert len(rules) >= 2
    for r in rules:
        assert r.source, f"{r.id} lacks a source line"
        assert Path(r.path).stem == r.id


def test_shipped_rules_plan_in_duckdb(db):
    from logsleuth.analysis.rules import validate_rules

    validate_rules(db, load_rules())


@pytest.mark.parametrize("mutate,needle", [
    (lambda t: t.replace("-- severity: warning", "-- severity: fatal"), "severity 'fatal'"),
    (lambda t: t.replace("-- fix: Nothing to fix; this is a test rule.\n", ""), "lacks '-- fix"),
    (lambda t: t.replace("-- params: min_lines=1\n", ""), "$min_lines"),
    (lambda t: t.replace("-- id: my_rule", "-- id: other_rule"), "differs from the file name"),
])
def test_broken_headers_name_the_file(tmp_path, mutate, needle):
    p = write_rule(tmp_path, "my_rule", mutate(GOOD.format(id="my_rule")))
    with pytest.raises(GrammarError) as exc:
        parse_rule(p)
    assert "my_rule.sql" in str(exc.value) and needle in str(exc.value)


@pytest.fixture(scope="module")
def story_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "r.duckdb"
    con = logsleuth.open_db(str(path))
    logsleuth.ingest_files(con, [str(SAMPLES / "sglang_tuned_v1.log")])
    yield con
    con.close()


def test_user_rule_dir_params_and_override(story_db, tmp_path):
    write_rule(tmp_path, "my_rule")
    found = logsleuth.diagnose(story_db, rule_ids=["my_rule"], extra_dirs=[str(tmp_path)])
    assert len(found) == 1 and found[0].rule_id == "my_rule"
    assert found[0].evidence and "Decode batch" in found[0].evidence
    n = found[0].values["n"]
    assert f"has {n} decode lines" in found[0].title
    # raising the threshold above the count silences it
    none = logsleuth.diagnose(story_db, rule_ids=["my_rule"], extra_dirs=[str(tmp_path)],
                              sets=[f"my_rule.min_lines={n + 1}"])
    assert none == []
    with pytest.raises(UsageError):
        logsleuth.diagnose(story_db, rule_ids=["my_rule"], extra_dirs=[str(tmp_path)], sets=["my_rule.nope=1"])
    with pytest.raises(UsageError):
        logsleuth.diagnose(story_db, rule_ids=["no_such_rule"])


def test_requires_makes_rule_silent_with_reason(story_db, tmp_path):
    text = GOOD.format(id="needs_spec").replace("-- source: test", "-- source: test\n-- requires: spec_stats.accept_len")
    write_rule(tmp_path, "needs_spec", text)
    silent: list = []
    found = logsleuth.diagnose(story_db, rule_ids=["needs_spec"], extra_dirs=[str(tmp_path)], silent=silent)
    assert found == [] and silent and silent[0][0] == "needs_spec" and "spec_stats.accept_len" in silent[0][1]


def test_requires_a_value_gates_the_rule_on_rows_having_it(story_db, tmp_path):
    """``requires: table.column=a|b``: silent (and not run) unless a row has one of the values."""
    gate = "-- requires: events_other.kind={}"
    write_rule(tmp_path, "gated_absent", GOOD.format(id="gated_absent").replace(
        "-- source: test", "-- source: test\n" + gate.format("fp8_marlin|aiter_jit_build")))
    write_rule(tmp_path, "gated_present", GOOD.format(id="gated_present").replace(
        "-- source: test", "-- source: test\n" + gate.format("aiter_jit_build|weights_loaded")))
    silent: list = []
    found = logsleuth.diagnose(story_db, rule_ids=["gated_absent", "gated_present"], extra_dirs=[str(tmp_path)],
                               silent=silent)
    assert {f.rule_id for f in found} == {"gated_present"}
    assert [r for r, _ in silent] == ["gated_absent"]
    assert "events_other.kind=fp8_marlin|aiter_jit_build" in silent[0][1]


@pytest.mark.parametrize("item", ["events_other.kind=", "events_other.kind=a'b", "events_other.kind=a;b",
                                  "events_other=x"])
def test_requires_values_are_plain_words(tmp_path, item):
    p = write_rule(tmp_path, "bad_gate", GOOD.format(id="bad_gate").replace(
        "-- source: test", f"-- source: test\n-- requires: {item}"))
    with pytest.raises(GrammarError, match="requires item"):
        parse_rule(p)


def test_a_requirement_on_a_view_is_checked_by_the_rule_itself(story_db, tmp_path):
    """nccl_config/nccl_channels parse line text: whether they have a row is asked in the rule's
    worker, beside the other rules, with the same answer and reason as before them all."""
    from logsleuth.analysis.rules import _deferred, _view_names

    views = _view_names()
    assert _deferred("nccl_channels", views) and not _deferred("events", views)
    assert not _deferred("decode_stats.gen_tok_s", views) and not _deferred("events_other.kind=limits", views)
    write_rule(tmp_path, "needs_view", GOOD.format(id="needs_view").replace(
        "-- source: test", "-- source: test\n-- requires: decode_stats, nccl_channels"))
    present = story_db.execute("SELECT EXISTS (SELECT 1 FROM nccl_channels)").fetchone()[0]
    silent: list = []
    found = logsleuth.diagnose(story_db, rule_ids=["needs_view"], extra_dirs=[str(tmp_path)], silent=silent)
    if present:
        assert found and not silent
    else:
        assert found == [] and silent == [("needs_view", "needs nccl_channels, and no run has it")]


def test_min_severity_filters(story_db, tmp_path):
    write_rule(tmp_path, "my_rule")
    assert logsleuth.diagnose(story_db, rule_ids=["my_rule"], extra_dirs=[str(tmp_path)], min_severity="critical") == []


def test_cli_fail_on_and_json(cli, db_path, tmp_path):
    write_rule(tmp_path, "my_rule")
    sample = str(SAMPLES / "sglang_tuned_v1.log")
    r = cli("diagnose", sample, "--rules-dir", str(tmp_path), "--rule", "my_rule", "--format", "json",
            "--fail-on", "warning", db=db_path)
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert {"rule_id", "severity", "title", "run_id", "source", "line_no", "evidence", "fix"} <= set(data[0])
    r = cli("diagnose", "--rules-dir", str(tmp_path), "--rule", "my_rule", "--fail-on", "critical", db=db_path)
    assert r.returncode == 0, r.stderr
    r = cli("diagnose", "--fail-on", "severe", db=db_path)
    assert r.returncode == 2 and "Error:" in r.stderr.decode()


def test_cli_broken_rule_is_a_clear_error(cli, db_path, tmp_path):
    write_rule(tmp_path, "bad_rule", "-- id: bad_rule\nSELECT 1")
    assert cli("ingest", str(SAMPLES / "sglang_tuned_v1.log"), db=db_path).returncode == 0  # runs to diagnose
    r = cli("diagnose", "--rules-dir", str(tmp_path), db=db_path)
    assert r.returncode == 3
    err = r.stderr.decode()
    assert "bad_rule.sql" in err and "Traceback" not in err


def test_rules_command_lists_every_rule(cli):
    r = cli("rules", "--format", "json")
    assert r.returncode == 0
    ids = {x["id"] for x in json.loads(r.stdout)}
    assert ids == {x.id for x in load_rules()}
