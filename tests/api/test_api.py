"""The library is usable without the CLI stack, and every command has its help (that each is
documented is tests/docs/test_commands_documented.py)."""
from __future__ import annotations

import subprocess
import sys


def test_import_has_no_ui_dependencies():
    code = ("import sys, logsleuth; con = logsleuth.open_db(':memory:'); "
            "logsleuth.query(con, 'SELECT 1'); logsleuth.diagnose(con); "
            "bad = [m for m in ('typer', 'rich', 'click') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_every_command_has_help(cli):
    import typer

    from logsleuth.cli.app import app

    r = cli("--help")
    assert r.returncode == 0
    commands = sorted(typer.main.get_command(app).commands)  # rich help draws boxes: ask the app
    assert {"ingest", "diagnose", "sql", "runs", "show", "rules", "unparsed", "formats"} <= set(commands)
    for c in commands:
        h = cli(c, "--help")
        assert h.returncode == 0 and "Usage" in h.stdout.decode(), c

