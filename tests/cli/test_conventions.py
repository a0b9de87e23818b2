"""The CLI conventions users expect from gh, ripgrep, sqlite-utils and the duckdb shell,
one test (or parametrised set) each."""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import pytest

from logsleuth import __version__
from support.paths import ROOT

from .conftest import SGLANG, VLLM

#: every command and subcommand path of the app, with whether it takes --format
COMMANDS = ["ingest", "runs", "show", "diagnose", "rules", "sql", "schema", "unparsed", "compare", "report",
            "formats", "formats check", "formats list"]
WITH_FORMAT = ["ingest", "runs", "show", "diagnose", "rules", "sql", "schema", "unparsed", "compare"]


def _commands(group=None, prefix=()):
    """(path, click command) of every command below the app, from the app itself."""
    import typer

    from logsleuth.cli.app import app

    group = group or typer.main.get_command(app)
    for name, cmd in group.commands.items():
        yield (*prefix, name), cmd
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, (*prefix, name))


def test_the_commands_listed_here_are_all_of_them():
    names = {" ".join(path) for path, _ in _commands()}
    assert set(COMMANDS) <= names
    with_format = {" ".join(p) for p, c in _commands() if any("--format" in x.opts for x in c.params)}
    assert set(WITH_FORMAT) <= with_format


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(invoke, flag):
    code, out, err = invoke(flag)
    assert (code, out, err) == (0, f"logsleuth {__version__}\n", "")


@pytest.mark.parametrize("args", [["-h"], ["--help"], ["runs", "-h"], ["formats", "check", "-h"],
                                  ["diagnose", "-h"]])
def test_short_and_long_help(invoke, args):
    code, out, err = invoke(*args)
    assert code == 0 and "Usage" in out and err == ""


def test_shell_completion_is_enabled(invoke):
    code, out, _ = invoke("--help")
    assert code == 0 and "--install-completion" in out and "--show-completion" in out


def test_completion_script_names_the_program():
    # the completion machinery answers through the environment variable typer reads
    env = {"_LOGSLEUTH_COMPLETE": "complete_bash", "COMP_WORDS": "logsleuth di", "COMP_CWORD": "1"}
    import os

    r = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'logsleuth'; "
                        "from logsleuth.cli.app import main; main()"],
                       env={**os.environ, **env}, capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert "diagnose" in r.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_python_types(invoke, command):
    code, out, _ = invoke(*command.split(), "--help")
    assert code == 0
    assert not re.search(r"<(?:list\[|str>|int>|bool>|float>|Path>)", out), out
    assert "list[str]" not in out


@pytest.mark.parametrize("command", WITH_FORMAT)
def test_format_is_validated_with_its_choices_in_help(invoke, story_db, command):
    code, out, err = invoke("--db", story_db, *command.split(), "--format", "yaml",
                            *(["x.log"] if command == "ingest" else []))
    assert code == 2, (out, err)
    assert "yaml" in err and out == ""
    code, help_text, _ = invoke(*command.split(), "--help")
    # the choices, listed from table on (five of them fold over two lines at 80 columns)
    assert re.search(r"\[table\|[a-z|]*", help_text) and "json" in help_text, help_text


def test_db_before_or_after_the_subcommand_and_from_the_environment(invoke, story_db):
    before = invoke("--db", story_db, "runs", "--format", "csv")
    after = invoke("runs", "--format", "csv", "--db", story_db)
    equals = invoke("runs", f"--db={story_db}", "--format", "csv")
    env = invoke("runs", "--format", "csv", env={"LOGSLEUTH_DB": story_db})
    assert before[0] == 0 and "vllm_eagle3.log" in before[1]
    assert before == after == equals == env


def test_global_options_after_double_dash_stay_arguments(invoke, story_db):
    # `--` ends the options: "--db" after it reaches `sql` as its text (a SQL comment, so an
    # empty statement) instead of being taken as the global option
    code, out, err = invoke("--db", story_db, "sql", "--format", "csv", "--", "--db")
    assert code == 4 and "empty SQL statement" in err


def test_no_hard_wrap_when_stdout_is_not_a_terminal(run):
    code, out, _ = run("diagnose")
    assert code == 0
    long_titles = [ln for ln in out.splitlines() if "custom all-reduce is off" in ln]
    assert long_titles
    # each finding's title stays on one line (grep finds it whole), wider than any terminal default
    assert any(len(ln) > 200 for ln in out.splitlines())
    assert all("goes through NCCL" in ln for ln in long_titles)


def test_columns_is_respected(run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run("runs")
    assert code == 0
    assert max(len(ln) for ln in out.splitlines()) <= 60


def test_sql_from_stdin_and_from_a_file(invoke, story_db, tmp_path):
    code, out, err = invoke("--db", story_db, "sql", "-", "--format", "csv", stdin="SELECT 6 * 7 AS answer")
    assert (code, out, err) == (0, "answer\n42\n", "")
    f = tmp_path / "q.sql"
    f.write_text("-- how many runs\nSELECT count(*) AS n FROM runs;\n")
    code, out, _ = invoke("--db", story_db, "sql", "--file", str(f), "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 3}]
    code, out, _ = invoke("--db", story_db, "sql", "-f", "-", "--format", "csv", stdin="SELECT 1 AS one")
    assert (code, out) == (0, "one\n1\n")


def test_sql_file_missing_is_bad_input(invoke, story_db, tmp_path):
    code, out, err = invoke("--db", story_db, "sql", "--file", str(tmp_path / "nope.sql"))
    assert code == 3 and err.startswith("Error: ") and "nope.sql" in err and out == ""


def test_sql_several_statements_are_all_shown(run):
    code, out, _ = run("sql", "SELECT 1 AS first_result; SELECT 'two' AS second_result")
    assert code == 0
    assert "first_result" in out and "second_result" in out
    assert out.index("[1]") < out.index("first_result") < out.index("[2]") < out.index("second_result")
    code, out, _ = run("sql", "SELECT 1 AS a; SELECT 2 AS b", "--format", "markdown")
    assert code == 0 and "| a |" in out and "| b |" in out


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_sql_several_results_in_a_single_result_format_are_refused(run, fmt):
    code, out, err = run("sql", "SELECT 1 AS a; SELECT 2 AS b", "--format", fmt)
    assert code == 2 and out == ""
    assert "2 statements return rows" in err and "--format table" in err


def test_sql_statement_numbers_in_errors(run):
    code, out, err = run("sql", "SELECT 1; SELECT nope FROM runs")
    assert code == 4 and "statement 2 of 2" in err


def test_schema_lists_tables_and_views_with_descriptions(run):
    code, out, _ = run("schema", "--format", "json")
    assert code == 0
    rows = {r["table"]: r for r in json.loads(out)}
    for name in ("sources", "runs", "config", "events", "decode_stats", "prefill_stats", "spec_stats",
                 "errors", "bench_results", "templates", "lines", "run_summary"):
        assert rows[name]["description"], name
    assert rows["lines"]["type"] == "view" and rows["runs"]["type"] == "table"


def test_schema_describes_every_table_and_column(run):
    """Descriptions are data (queries/schema.toml): a new table or column needs one line there."""
    code, out, _ = run("schema", "--format", "json")
    tables = [r["table"] for r in json.loads(out)]
    missing = [t for t in tables if not next(r for r in json.loads(out) if r["table"] == t)["description"]]
    for table in tables:
        code, out, _ = run("schema", table, "--format", "json")
        assert code == 0
        missing += [f"{table}.{c['column']}" for c in json.loads(out) if not c["description"]]
    assert missing == [], "describe these in queries/schema.toml"


def test_schema_of_an_unknown_table(run):
    code, out, err = run("schema", "nope")
    assert code == 2 and "no table or view 'nope'" in err and "runs" in err


def test_show_json(run):
    code, out, _ = run("show", "eagle", "--format", "json")
    assert code == 0
    (view,) = json.loads(out)
    assert view["summary"]["engine"] == "vllm" and view["summary"]["spec_method"] == "eagle3"
    assert {"throughput_tok_s", "startup_phases", "milestones", "config"} <= set(view)
    assert any(m["kind"] == "weights_loaded" for m in view["milestones"])


def test_diagnose_prints_the_compact_table_before_the_long_text(run):
    code, out, _ = run("diagnose", "--run", "eagle")
    assert code == 0
    head = out.split("\n\n", 1)[0]
    assert re.search(r"run\s*┃\s*severity\s*┃\s*rule\s*┃\s*title", head)
    assert "spec_low_acceptance" in head and "fix:" not in head
    assert "fix:" in out.split("\n\n", 1)[1]


def test_diagnose_quiet_prints_only_the_table(run):
    code, quiet, _ = run("diagnose", "--run", "eagle", "--quiet")
    code2, full, _ = run("diagnose", "--run", "eagle")
    assert code == code2 == 0
    assert "spec_low_acceptance" in quiet and "fix:" not in quiet and "evidence" not in quiet
    assert full.startswith(quiet.rstrip("\n"))
    code, out, _ = run("diagnose", "--run", "eagle", "--rule", "sgl_cuda_graph_disabled", "-q")
    assert (code, out) == (0, "")


def test_diagnose_fail_on(run):
    assert run("diagnose", "--run", "eagle", "--fail-on", "warning", "-q")[0] == 1
    assert run("diagnose", "--run", "eagle", "--fail-on", "critical", "-q")[0] == 0
    assert run("diagnose", "--fail-on", "fatal")[0] == 2


def _eagle_run_id(run) -> int:
    code, out, _ = run("runs", "--format", "json")
    (rid,) = [r["run_id"] for r in json.loads(out) if r["label"] == "eagle"]
    return rid


@pytest.mark.parametrize("selector", ["<id>", "vllm_eagle3.log", "vllm_eagle3", "eagle"])
@pytest.mark.parametrize("command", ["runs", "show", "diagnose", "compare", "report"])
def test_run_accepts_an_id_a_file_name_or_a_label(run, tmp_path, command, selector):
    rid = _eagle_run_id(run)
    selector = selector.replace("<id>", str(rid))
    extra = {"runs": ["--format", "csv"], "show": ["--format", "json"], "diagnose": ["--format", "json"],
             "compare": ["--format", "json", "--no-findings"],
             "report": ["-o", str(tmp_path / "r.html"), "--no-findings"]}[command]
    code, out, err = run(command, "--run", selector, *extra)
    assert code == 0, err
    if command == "runs":
        assert [r["run_id"] for r in csv.DictReader(io.StringIO(out))] == [str(rid)]
    elif command == "show":
        assert [v["summary"]["run_id"] for v in json.loads(out)] == [rid]
    elif command == "diagnose":
        assert {f["run_id"] for f in json.loads(out)} == {rid}
    elif command == "compare":
        assert "vllm_eagle3" in out and "sglang_baseline" not in out
    else:
        assert "vllm_eagle3" in (tmp_path / "r.html").read_text()


def test_an_unknown_run_is_a_usage_error(run):
    code, out, err = run("show", "--run", "nope.log")
    assert code == 2 and err.startswith("Error: no run matches 'nope.log'") and out == ""


def test_cli_contains_no_sql():
    """Only the library speaks SQL: no statement keyword pairs in cli/*.py."""
    sql = re.compile(r"\b(SELECT\s+[\w*(]|FROM\s+\w+\s+(WHERE|JOIN|GROUP|ORDER)|INSERT\s+INTO|CREATE\s+(TABLE|VIEW)|"
                     r"\.execute\(|fetch_frame|queries\.(frame|rows|sql)\()", re.I)
    offenders = []
    for path in sorted((ROOT / "src" / "logsleuth" / "cli").glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if sql.search(line) and "e.g. logsleuth sql" not in line:
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert offenders == []


def test_help_imports_no_data_stack():
    """`logsleuth --help` stays fast: the CLI module imports neither polars nor duckdb."""
    code = ("import sys, logsleuth.cli.app; "
            "print(sorted(m for m in ('polars', 'duckdb', 'pyarrow', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(ROOT))
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_ingest_then_diagnose_in_one_call(invoke, tmp_path):
    db = str(tmp_path / "one.duckdb")
    code, out, err = invoke("diagnose", str(VLLM), "--db", db, "--format", "json")
    assert code == 0, err
    assert len({f["run_id"] for f in json.loads(out)}) == 1  # the file's one run
    # again: the file is skipped as already ingested, its runs are still diagnosed
    code, again, _ = invoke("diagnose", str(VLLM), "--db", db, "--format", "json")
    assert code == 0 and json.loads(again) == json.loads(out)
    code, out, _ = invoke("diagnose", str(SGLANG), "--db", db, "--format", "json")
    assert "vllm_eagle3.log" not in {f["source"] for f in json.loads(out)}


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_rules_in_every_format(run, fmt):
    code, out, _ = run("rules", "--format", fmt)
    assert code == 0
    if fmt == "json":
        rows = json.loads(out)
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
    else:
        rows = [ln for ln in out.splitlines() if "spec_low_acceptance" in ln]
        assert len(rows) == 1 and "warning" in rows[0]
        return
    assert {r["id"] for r in rows} >= {"spec_low_acceptance", "startup_oom", "sgl_cuda_graph_disabled"}
    assert set(rows[0]) == {"id", "severity", "title", "params", "source"}
    assert {r["severity"] for r in rows} <= {"critical", "warning", "info"}
