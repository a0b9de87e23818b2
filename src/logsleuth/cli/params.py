"""Typer plumbing behind the CLI conventions: global options anywhere, help without Python types.

Contract: ``LogsleuthGroup`` is the click group class of the app (``typer.Typer(cls=...)``).
* Global options (``--db PATH``, ``--db=PATH``, ``--dataset DIR``, ``--debug``) are accepted before or after
  the subcommand, as users of gh or the duckdb CLI expect: ``parse_args`` moves those that
  follow the subcommand in front of it (up to a ``--``, after which everything is an
  argument). Commands registered by other modules get this without doing anything.
* Help shows click-style metavars (``TEXT``, ``INTEGER``, ``[table|csv|json]``) instead of
  typer's Python annotations (``<list[str]>``, ``<bool>``): the group patches the
  ``display_type_rich`` of every parameter of every command below it the first time it
  is looked up. Flags show no type.
* Values of plain types (words, numbers, ``--format`` choices, lists of them) are coerced
  without pydantic (``cli/coerce.py``), installed on the same parameters at the same time.
"""
from __future__ import annotations

import types
import typing
from pathlib import Path

from typer.core import TyperGroup

from .coerce import install as install_plain_coercion

#: global options and whether they take a value
GLOBAL_OPTIONS = {"--db": True, "--dataset": True, "--debug": False, "--color": True}

_TYPE_NAMES = {int: "INTEGER", float: "NUMBER", str: "TEXT", Path: "PATH", bool: "BOOLEAN"}


def _display_type(self, ctx=None) -> str | None:
    """Replacement of typer's ``display_type_rich`` (bound per parameter)."""
    if getattr(self, "is_flag", False):
        return None
    if self.metavar:
        return self.metavar
    desc = self.type_descriptor
    if desc.is_choice:
        label = "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    else:
        ann = desc.annotation
        if typing.get_origin(ann) is list:
            ann = (typing.get_args(ann) or (str,))[0]
        label = _TYPE_NAMES.get(ann, "TEXT")
    if getattr(self, "multiple", False):
        label += "..."  # repeatable option
    return label


def _patch(params) -> None:
    for param in params:
        if "display_type_rich" not in vars(param) and hasattr(param, "type_descriptor"):
            param.display_type_rich = types.MethodType(_display_type, param)
        install_plain_coercion(param)


def plain_types(command) -> None:
    """Patch the help type display of ``command``'s parameters, its help option included
    (made per context), and its subcommands'."""
    if "get_params" not in vars(command):
        original = command.get_params

        def get_params(ctx, _original=original):
            params = _original(ctx)
            _patch(params)
            return params

        command.get_params = get_params
    for sub in getattr(command, "commands", {}).values():
        plain_types(sub)


def hoist_global_options(args: list[str], commands) -> list[str]:
    """``args`` with the global options that follow the subcommand moved before it."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args
        if a in GLOBAL_OPTIONS:
            i += 2 if GLOBAL_OPTIONS[a] else 1
            continue
        if a in commands:
            break
        i += 1
    else:
        return args
    head, tail = args[:i], args[i:]
    moved, kept = [], []
    j = 0
    while j < len(tail):
        a = tail[j]
        if a == "--":
            kept.extend(tail[j:])
            break
        name = a.split("=", 1)[0]
        if name in GLOBAL_OPTIONS and j > 0:
            if GLOBAL_OPTIONS[name] and "=" not in a:
                moved.extend(tail[j:j + 2])
                j += 2
            else:
                moved.append(a)
                j += 1
            continue
        kept.append(a)
        j += 1
    return head + moved + kept


class LogsleuthGroup(TyperGroup):
    """The app's group: global options anywhere, plain help types."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = hoist_global_options(list(args), set(self.commands))
        return super().parse_args(ctx, args)

    def get_params(self, ctx):
        params = super().get_params(ctx)
        _patch(params)
        return params

    def get_command(self, ctx, cmd_name: str):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            plain_types(cmd)
        return cmd
