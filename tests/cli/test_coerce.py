"""``cli/coerce.py``: command-line values coerced without pydantic are exactly what typer's
own coercion makes of them, for every parameter of every command, and a ``diagnose`` call
imports no pydantic."""
from __future__ import annotations

import enum
import subprocess
import sys

import pytest

from support.paths import ROOT

#: raw values a user (or a default) may hand each kind of parameter: valid ones, the
#: spellings left to typer, and invalid ones (both sides must then fail with one message)
STRINGS = ["abc", "", "ünïcode", "--x", "a b"]
NUMBERS = ["0", "7", "-3", "04", "0.5", "-2.25", "1e3", " 5", "5.0", "1_000", "abc", "", "99999999999999999999",
           0, 3, -1, 2.5, True]
FLAGS = [True, False, "true", "0"]


def _params():
    """(command path, parameter, a context of its command) for every typer parameter of the app."""
    import typer

    from logsleuth.cli.app import app

    def walk(cmd, path):
        ctx = typer.main._click.Context(cmd)
        for p in cmd.get_params(ctx):  # the app's group installs the coercion here
            if hasattr(p, "type_descriptor"):
                yield " ".join(path) or "(app)", p, ctx
        for name in getattr(cmd, "commands", {}):
            yield from walk(cmd.get_command(ctx, name), (*path, name))  # looked up as the app does

    return list(walk(typer.main.get_command(app), ()))


def _samples(annotation) -> list:
    import typing

    if typing.get_origin(annotation) is list:
        leaf = typing.get_args(annotation)[0]
        return [tuple(_samples(leaf)[:3]), tuple(_samples(leaf)), "single", ()]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        first = list(annotation)[0]
        return [first, *[m.value for m in annotation], first.value.upper(), "nope", ""]
    if annotation is bool:
        return FLAGS
    if annotation in (int, float):
        return NUMBERS
    return STRINGS


def _outcome(runtime, value, param, ctx):
    from typer._click.exceptions import BadParameter

    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
        return ("ok", type(got), got)
    except BadParameter as exc:
        return ("error", exc.format_message())


def test_plain_coercion_equals_typers_for_every_parameter():
    from typer._coercion import build_runtime_param

    from logsleuth.cli.coerce import PlainRuntimeParam

    checked = 0
    for path, param, ctx in _params():
        runtime = param.get_runtime_param()
        if not isinstance(runtime, PlainRuntimeParam):
            continue
        typers = build_runtime_param(param.type_descriptor)
        for value in _samples(param.type_descriptor.annotation):
            ours, theirs = _outcome(runtime, value, param, ctx), _outcome(typers, value, param, ctx)
            if theirs[0] == "error" and "is not one of" in theirs[1]:  # a word that is no choice: our wording
                assert ours[0] == "error" and "Value error" not in ours[1] and "is not one of" in ours[1], ours
            else:
                assert ours == theirs, f"{path} {param.name} {value!r}"
            checked += 1
    assert checked > 500  # every command's options were seen, not an empty walk


def test_every_parameter_of_the_app_is_coerced_without_pydantic():
    """All our parameters are of plain types: a new one that is not (a Path, a date) should
    be a conscious choice, since it brings pydantic back into that command."""
    from logsleuth.cli.coerce import PlainRuntimeParam

    others = [f"{path} {p.name}" for path, p, _ in _params() if not isinstance(p.get_runtime_param(), PlainRuntimeParam)]
    assert others == []


def test_diagnose_imports_no_pydantic(tmp_path):
    from support.cli import run_cli

    db = str(tmp_path / "one.duckdb")  # diagnose refuses a database without runs: ingest one first
    assert run_cli("ingest", str(ROOT / "tests" / "samples" / "sglang_tuned_v1.log"), db=db).returncode == 0
    code = ("import sys\n"
            "from logsleuth.cli.app import main\n"
            f"sys.argv = ['logsleuth', '--db', {db!r}, 'diagnose', '--format', 'json',\n"
            "            '--min-severity', 'warning', '--rule', 'engine_crashed']\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print('PYDANTIC', 'pydantic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "PYDANTIC False", out.stdout[-500:] + out.stderr[-2000:]


@pytest.mark.parametrize("args, message", [(["--format", "yaml"], "yaml"), (["--min-severity", "fatal"], "fatal")])
def test_a_bad_choice_is_typers_usage_error(run, args, message):
    code, _, err = run("diagnose", *args)
    assert code == 2 and message in err
