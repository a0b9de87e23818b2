"""Colour of everything the CLI writes: ``--color auto|always|never`` and ``NO_COLOR``.

Contract: ``mode()`` is the colour mode of the invocation being run: ``--color`` when given (a
global option the app's callback stores in the root context), else ``never`` when the
``NO_COLOR`` environment variable is set and not empty (https://no-color.org), else ``auto``
(styles on a terminal only). ``console_options(mode)`` are the rich ``Console`` arguments of
a mode: ``never`` gives ``color_system=None``, with which rich writes no escape code at all —
rich's own NO_COLOR support drops colours but keeps bold, dim and italic, which is what users
saw; ``always`` styles output into pipes and files too (``less -R``). ``style_help(argv)``
applies the mode of ``argv`` to typer's help and usage-error screens, which are drawn before
any callback runs. Nothing is kept between invocations but typer's two help settings, which
``style_help`` sets on every call.
"""
from __future__ import annotations

from .. import settings

MODES = ("auto", "always", "never")


def _env_mode() -> str:
    return "never" if settings.no_color() else "auto"


def mode() -> str:
    """The colour mode of the invocation being run (``auto`` outside one, unless NO_COLOR)."""
    from .context import _options

    chosen = _options().get("color")
    return chosen if chosen in MODES else _env_mode()


def argv_mode(argv: list[str]) -> str:
    """The mode ``argv`` asks for: its last ``--color WORD`` / ``--color=WORD`` before a ``--``,
    else the environment's (a word that is no mode is left for the option's own error)."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    chosen = None
    for i, a in enumerate(args):
        if a == "--color" and i + 1 < len(args):
            chosen = args[i + 1]
        elif a.startswith("--color="):
            chosen = a.split("=", 1)[1]
    return chosen if chosen in MODES else _env_mode()


def console_options(chosen: str) -> dict:
    """Keyword arguments of rich's ``Console`` for mode ``chosen``."""
    if chosen == "never":
        return {"color_system": None, "no_color": True}
    if chosen == "always":
        return {"force_terminal": True}
    return {}


def style_help(argv: list[str]) -> None:
    """Give typer's help and usage errors the colour mode of ``argv`` (``auto``: typer's own
    choice, which follows FORCE_COLOR / PY_COLORS)."""
    from typer import rich_utils

    chosen = argv_mode(argv)
    rich_utils.COLOR_SYSTEM = None if chosen == "never" else "auto"
    if chosen == "always":
        rich_utils.FORCE_TERMINAL = True
    elif rich_utils.FORCE_TERMINAL is True and not _forced_by_env():
        rich_utils.FORCE_TERMINAL = None  # undo an earlier --color always of this process


def _forced_by_env() -> bool:
    return settings.color_forced()
