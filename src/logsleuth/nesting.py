"""A nesting limit for structured input (JSON bench results, notebooks, config dumps).

Contract: ``json_loads(text, where)`` is ``json.loads`` for documents nested at most
``MAX_DEPTH`` arrays/objects deep; a deeper one raises ``BadInputError`` (exit 3) naming
``where`` (the file and line) before the parser recurses into it, so a hostile file is a
clear one-line error rather than a ``RecursionError``. ``nesting_depth(text)`` is the
deepest bracket nesting outside strings. Real inputs nest a handful of levels: a bench
result with per-request lists is 3 deep.
"""
from __future__ import annotations

import json
import re
from itertools import accumulate

from .errors import BadInputError

MAX_DEPTH = 100
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside JSON strings (vectorised: two regex passes and
    one accumulate over the brackets alone)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(1 if ch in "[{" else -1 for ch in brackets))


def json_loads(text: str, where: str):
    """``json.loads(text)`` under the nesting limit (see the module docstring)."""
    if text.count("[") + text.count("{") > MAX_DEPTH and nesting_depth(text) > MAX_DEPTH:
        raise BadInputError(f"{where}: JSON nested more than {MAX_DEPTH} levels deep",
                            hint="nothing was stored from this file")
    try:
        return json.loads(text)
    except RecursionError:  # a limit below ours (a small thread stack): the same answer
        raise BadInputError(f"{where}: JSON nested too deep to read", hint="nothing was stored from this file") from None
