"""The library is usable without the CLI stack, and every command is documented."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT


def test_import_has_no_ui_dependencies():
    code = ("import sys, logsleuth; con = logsleuth.open_db(':memory:'); "
            "logsleuth.query(con, 'SELECT 1'); logsleuth.diagnose(con); "
            "bad = [m for m in ('typer', 'rich', 'click') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_every_command_has_help_and_is_in_readme(cli):
    # the README, or the docs/ page of the command (docs/known-issues.md: `logsleuth known-issues`)
    readme = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    import typer

    from logsleuth.cli.app import app

    r = cli("--help")
    assert r.returncode == 0
    commands = sorted(typer.main.get_command(app).commands)  # rich help draws boxes: ask the app
    assert {"ingest", "diagnose", "sql", "runs", "show", "rules", "unparsed", "formats"} <= set(commands)
    for c in commands:
        h = cli(c, "--help")
        assert h.returncode == 0 and "Usage" in h.stdout.decode(), c
        assert f"logsleuth {c}" in readme, f"README/docs do not document `logsleuth {c}`"


def test_exit_codes_documented():
    readme = (ROOT / "README.md").read_text()
    from logsleuth.errors import ExitCode

    for code in ExitCode:
        assert re.search(rf"\|\s*{int(code)}\s*\|", readme), f"exit code {int(code)} not in README"
