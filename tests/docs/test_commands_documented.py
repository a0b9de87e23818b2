"""Every command and option of the CLI (read from the typer app, not from a list kept by
hand) is documented in docs/, every exit code too, and the README stays short."""
from __future__ import annotations

import re

import pytest

from support.paths import ROOT

DOCS = ROOT / "docs"
README_MAX_LINES = 200
#: pages the README's index links that other work of this round writes; a missing one is an
#: expected failure until it lands, any other missing target a failure
PAGES_IN_FLIGHT = {"docs/arriving-logs.md", "docs/runs-and-end-states.md", "docs/security.md",
                   "docs/output.md", "docs/lnav.md", "docs/known-issues.md"}


def _docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))


def _commands():
    """(command path, [option names]) of every leaf command, and the global options."""
    import typer

    from logsleuth.cli.app import app

    root = typer.main.get_command(app)
    out = [((), [o for p in root.params for o in p.opts if o.startswith("--")])]

    def walk(group, path):
        for name, sub in sorted(group.commands.items()):
            if hasattr(sub, "commands"):
                walk(sub, (*path, name))
            else:
                out.append(((*path, name), [o for p in sub.params for o in p.opts if o.startswith("--")]))

    walk(root, ())
    return out


def _section(text: str, command: tuple[str, ...]) -> str:
    """The part of docs/commands.md under ``### logsleuth COMMAND`` (the global options for ())."""
    title = "### logsleuth " + " ".join(command) if command else "### Global options"
    if title not in text:
        return ""
    return text.split(title + "\n", 1)[1].split("\n### ", 1)[0]


def test_every_command_and_option_is_documented():
    docs = _docs_text()
    reference = (DOCS / "commands.md").read_text(encoding="utf-8")
    missing = []
    for command, options in _commands():
        name = "logsleuth " + " ".join(command)
        if command and name not in docs:
            missing.append(name)
        section = _section(reference, command)
        # an option is documented in its command's section of commands.md, or on a line of
        # any docs page that names the command (a feature's own page)
        lines = [line for line in docs.splitlines() if not command or command[-1] in line]
        for opt in options:
            if opt in ("--install-completion", "--show-completion") and "--install-completion" in docs:
                continue
            if f"`{opt}`" not in section and not any(re.search(rf"{re.escape(opt)}\b", ln) for ln in lines):
                missing.append(f"{name} {opt}")
    assert not missing, "not documented in docs/: " + ", ".join(missing)


def test_exit_codes_documented():
    from logsleuth.errors import ExitCode

    text = (DOCS / "commands.md").read_text(encoding="utf-8")
    for code in ExitCode:
        assert re.search(rf"\|\s*{int(code)}\s*\|", text), f"exit code {int(code)} not in docs/commands.md"


def test_readme_is_short_and_its_local_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    missing = [t for t in re.findall(r"\]\(([^)#\s]+)", readme) if "://" not in t and not (ROOT / t).exists()]
    assert not set(missing) - PAGES_IN_FLIGHT, f"README links missing files: {missing}"
    if missing:
        pytest.xfail(f"pages not written yet: {missing}")


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_docs_local_links_resolve(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    broken = [t for t in re.findall(r"\]\(([^)#\s]+)", text)
              if "://" not in t and not t.startswith("mailto:") and not (DOCS / t).exists()]
    assert not broken, f"{page} links to missing files: {broken}"
