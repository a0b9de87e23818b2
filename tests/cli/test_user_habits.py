"""Habits users bring from other tools: NO_COLOR and --color (checked in a real pseudo-terminal),
jsonl wherever json is offered, one set of --format words, and a bad choice answered in plain words."""
from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

import pytest

from support.paths import ROOT

ESC = b"\x1b["
#: the order of the --format words wherever they appear
FORMAT_ORDER = ["text", "table", "csv", "json", "jsonl", "markdown"]


def in_pty(args: list[str], env: dict | None = None, timeout: float = 120) -> bytes:
    """Everything ``logsleuth ARGS`` writes to a pseudo-terminal (stdout and stderr both)."""
    master, slave = pty.openpty()
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    full_env.pop("LOGSLEUTH_DB", None)
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth.cli.app", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=full_env, cwd=str(ROOT))
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=timeout)
    return out


def _format_options():
    """(command path, the --format choices) of every command that has the option."""
    import typer

    from logsleuth.cli.app import app

    def walk(group, prefix):
        ctx = typer.main._click.Context(group)
        for name in group.commands:
            cmd = group.get_command(ctx, name)
            sub = typer.main._click.Context(cmd)
            for p in cmd.get_params(sub):
                if "--format" in getattr(p, "opts", []):
                    yield " ".join((*prefix, name)), [getattr(c, "value", c) for c in p.type_descriptor.choices]
            if hasattr(cmd, "commands"):
                yield from walk(cmd, (*prefix, name))

    return list(walk(typer.main.get_command(app), ()))


@pytest.mark.parametrize("args", [["runs"], ["diagnose"], ["show", "1"], ["--help"]])
def test_no_escape_codes_with_no_color_in_a_terminal(story_db, args):
    styled = in_pty(["--db", story_db, *args])
    assert ESC in styled  # a terminal gets styles by default: the test can see them
    plain = in_pty(["--db", story_db, *args], env={"NO_COLOR": "1"})
    assert ESC not in plain and len(plain) > 200


@pytest.mark.parametrize("where", ["before", "after"])
def test_color_never_and_always(story_db, where):
    opt = ["--color", "never"]
    args = [*opt, "--db", story_db, "runs"] if where == "before" else ["--db", story_db, "runs", *opt]
    assert ESC not in in_pty(args)
    piped = subprocess.run([sys.executable, "-m", "logsleuth.cli.app", "--color", "always", "--db", story_db, "runs"],
                           capture_output=True, cwd=str(ROOT))
    assert piped.returncode == 0 and ESC in piped.stdout
    plain = subprocess.run([sys.executable, "-m", "logsleuth.cli.app", "--db", story_db, "runs"],
                           capture_output=True, cwd=str(ROOT))
    assert ESC not in plain.stdout  # auto: a pipe gets no styles


def test_every_format_option_offers_jsonl_with_json_and_the_same_words_in_the_same_order():
    options = _format_options()
    assert len(options) >= 10
    for path, words in options:
        assert set(words) <= set(FORMAT_ORDER), path
        assert words == sorted(words, key=FORMAT_ORDER.index), (path, words)
        if "json" in words:
            assert "jsonl" in words, path
    tabular = {path: words for path, words in options if "csv" in words}
    assert {"runs", "sql", "diagnose", "compare", "rules"} <= set(tabular)
    assert all(w == ["table", "csv", "json", "jsonl", "markdown"] for w in tabular.values()), tabular


@pytest.mark.parametrize("args,key", [(["runs"], "run_id"), (["diagnose"], "rule_id"), (["show"], "summary"),
                                      (["compare", "--no-findings"], "metrics"), (["rules"], "id"),
                                      (["sql", "SELECT 1 AS one UNION ALL SELECT 2"], "one")])
def test_jsonl_is_one_object_a_line_holding_what_json_holds(run, args, key):
    code, out, err = run(*args, "--format", "jsonl")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) >= 2 and all(key in r for r in records)
    code, whole, _ = run(*args, "--format", "json")
    doc = json.loads(whole)
    if isinstance(doc, dict):  # compare's document: its runs are the records
        doc = doc["runs"]
    assert records == doc


@pytest.mark.parametrize("args,word,said", [
    (["runs", "--format", "yaml"], "yaml", "'yaml' is not one of table, csv, json, jsonl, markdown"),
    (["diagnose", "--min-severity", "warn"], "warn", "'warn' is not one of critical, warning, info (did you mean warning?)"),
    (["show", "--format", "jsn"], "jsn", "'jsn' is not one of table, json, jsonl (did you mean json?)"),
])
def test_a_bad_choice_is_answered_in_plain_words(invoke, story_db, args, word, said):
    code, out, err = invoke("--db", story_db, *args)
    assert code == 2 and out == ""
    assert said in err and "Value error" not in err
