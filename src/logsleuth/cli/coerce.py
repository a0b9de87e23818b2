"""Coercion of command-line values without pydantic, for the plain types our commands use.

Contract: ``install(param)`` gives a typer parameter a coercer that turns the values of the
annotations our commands declare (``str``, ``bool``, ``int`` and ``float`` with their ``min``/``max``,
``str`` enums of ``--format`` and friends, and lists of these) into exactly what typer's
own coercion returns, without importing pydantic. A value it cannot vouch for (a choice
that is not one, a number out of range or in an unusual spelling, bytes...) goes to
typer's own coercion, so that every error message and every edge case stays typer's.
Parameters of other annotations (paths, files, dates, custom parsers) are left alone.
A word that is not a choice is the one error worded here, the way a person would
(``'yaml' is not one of table, csv, json, jsonl, markdown``), not in typer's pydantic words.
``cli/params.py`` installs it on every parameter of every command when the command is
looked up, next to the help type display.

Why: typer 0.29 coerces each parameter through a pydantic ``TypeAdapter`` built on first
use. Importing pydantic and building the adapters of one ``diagnose`` call cost ~0.3 s of
a ~1.4 s command (``python -X importtime`` and cProfile, 2-core machine), for values that
are words and lists of words. ``tests/cli/test_coerce.py`` checks, for every parameter of
every command, that this coercion returns what typer's does, and that ``diagnose`` imports
no pydantic. If typer changes the internals this relies on (a parameter's
``type_descriptor`` and ``get_runtime_param``, ``typer._coercion.RuntimeParam``),
``install`` does nothing and typer coerces as it always did.
"""
from __future__ import annotations

import enum
import re
import types
import typing
from dataclasses import dataclass

try:  # typer's own runtime-coercion layer (0.29+); absent in other versions: nothing is installed
    from typer._click.exceptions import BadParameter
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice, routes_to_path
except ImportError:  # pragma: no cover (depends on the installed typer)
    RuntimeParam = None

#: numbers typed the common way; anything else ("1e3", " 4", "1_000", "inf") is left to typer
_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")


class _Unsure(Exception):
    """The value is not one this module vouches for: typer's own coercion decides."""


def not_a_choice(value: str, choices: list[str]) -> str:
    """What a person says to a word that is not one of ``choices``: the choices, and the
    closest one when the word looks like a typo (``'jsn' is not one of ... (did you mean json?)``)."""
    import difflib

    close = difflib.get_close_matches(value.lower(), choices, n=1, cutoff=0.6)
    return f"{value!r} is not one of {', '.join(choices)}" + (f" (did you mean {close[0]}?)" if close else "")


def _choice(kind: type[enum.Enum], case_sensitive: bool):
    choices = tuple(kind)

    def coerce(value, ctx):
        if not isinstance(value, (str, enum.Enum)):
            raise _Unsure
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError:  # typer's message reads "Value error, 'yaml' is not one of ...": ours
            if isinstance(value, str):
                raise BadParameter(not_a_choice(value, [c.value for c in choices]), ctx=ctx) from None
            raise _Unsure from None
    return coerce


def _number(kind: type, low, high):
    pattern = _INT if kind is int else _FLOAT

    def coerce(value, ctx):
        if type(value) is str and pattern.fullmatch(value):
            number = kind(value)
        elif type(value) in (int, float) and (kind is float or type(value) is int):
            number = kind(value)  # a default (an int default of a float option becomes a float, as in typer)
        else:
            raise _Unsure
        if (low is not None and number < low) or (high is not None and number > high):
            raise _Unsure  # typer's message says which bound
        return number
    return coerce


def _text(value, ctx):
    if type(value) is not str:
        raise _Unsure
    return value


def _flag(value, ctx):
    if type(value) is not bool:  # "yes", "0", ...: typer's rules
        raise _Unsure
    return value


def _leaf(annotation, info):
    """The coercer of one value of ``annotation``, or None when this module does not handle it."""
    if getattr(info, "parser", None) is not None or getattr(info, "clamp", None) or routes_to_path(annotation, info):
        return None  # a custom parser, clamped numbers, a str with path checks (exists=...): typer's
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _choice(annotation, info.case_sensitive)
    if annotation is str:
        return _text
    if annotation is bool:  # flags whose value is None when not given (--install-completion...)
        return _flag
    if annotation in (int, float):
        return _number(annotation, info.min, info.max)
    return None


if RuntimeParam is not None:
    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """typer's ``RuntimeParam`` for plain values: ``coerce`` (inherited: None, and a
        lone string given to a list) is typer's; a value is coerced here or by typer."""

        leaf: typing.Any = None
        is_list: bool = False
        typer_param: list = None  # [typer's own RuntimeParam] once built

        def _coerce_value(self, value, param, ctx):
            try:
                if self.is_list:  # typer: a list of items, a single value becomes a list of one
                    items = value if isinstance(value, (list, tuple)) else [value]
                    return [self.leaf(item, ctx) for item in items]
                return self.leaf(value, ctx)
            except _Unsure:
                if not self.typer_param:
                    self.typer_param.append(build_runtime_param(param.type_descriptor))
                return self.typer_param[0]._coerce_value(value, param=param, ctx=ctx)


def plain_runtime_param(descriptor):
    """A ``PlainRuntimeParam`` for ``descriptor`` (a parameter's ``type_descriptor``), or
    None when its annotation is not one this module handles."""
    if RuntimeParam is None or descriptor.file_annotation is not None:
        return None
    annotation, info = descriptor.annotation, descriptor.parameter_info
    is_list = typing.get_origin(annotation) is list
    if is_list:
        args = typing.get_args(annotation)
        if len(args) != 1:
            return None
        annotation = args[0]
    leaf = _leaf(annotation, info)
    if leaf is None:
        return None
    return PlainRuntimeParam(parameter_info=info, annotation=descriptor.annotation, leaf=leaf,
                             is_list=is_list, typer_param=[])


def install(param) -> None:
    """Coerce ``param``'s values here when its annotation is a plain one (once per parameter)."""
    if RuntimeParam is None or "get_runtime_param" in vars(param):
        return
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or not callable(getattr(param, "get_runtime_param", None)):
        return
    plain = plain_runtime_param(descriptor)
    if plain is not None:
        param.get_runtime_param = types.MethodType(lambda self: plain, param)
