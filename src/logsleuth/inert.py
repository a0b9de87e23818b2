"""Inert rendering of text that came from a log (or from anything else we do not control).

Contract:
* ``inert(text)`` returns ``text`` with every control character made visible the way
  Python spells it (``\\x1b``, ``\\x07``, ``\\r``, ``\\x9b``, ``\\u202e``), except tab and
  newline; CSI colour codes (SGR) are dropped. Without a raw ESC, BEL or C1 byte no escape
  sequence can reach the terminal: OSC 8 hyperlinks, OSC 52 clipboard writes, OSC 0 window titles (ended by
  BEL or ``ESC \\``) all print as harmless text. Bidirectional overrides are shown too,
  so a line cannot display in an order other than the one it is stored in.
* ``markup_safe(text)`` is ``inert`` plus rich markup escaping: ``[link=...]`` and ``[/]``
  inside a log line print literally instead of becoming links or crashing the renderer.
* ``cell(value)`` is a rich ``Text`` for a table cell (rich parses plain strings in
  ``Table.add_row`` as markup).
* ``plain_json(obj)`` is ``json.dumps`` that never prints ``Infinity``/``NaN`` (not JSON):
  non-finite floats become ``null``. JSON escapes C0 control characters itself;
  ``json_inert(text)`` escapes the rest (C1, bidi) of JSON written with ``ensure_ascii=False``.
The functions are idempotent on their own output for ``inert`` (a backslash is not a
control character, so ``\\x1b`` stays ``\\x1b``).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

#: C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides/isolates,
#: line/paragraph separators: what can move the cursor, start an escape sequence or
#: reorder what is shown
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


#: CSI SGR sequences (``ESC [ 0;36 m``): colours a server printed to its terminal. The line
#: store keeps them (lines.raw is the input byte for byte); shown, they would only be noise
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def inert(text: Any) -> str:
    """``text`` (any value, ``str()``-ed) with colour codes dropped and the other control
    characters made visible."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    if not _UNSAFE.search(s):
        return s
    return _UNSAFE.sub(_visible, _SGR.sub("", s))


def markup_safe(text: Any) -> str:
    """``inert`` text with rich markup escaped, for f-strings printed by rich."""
    from rich.markup import escape

    return escape(inert(text))


def cell(value: Any):
    """A rich Text for a table cell: never parsed as markup, control characters visible."""
    from rich.text import Text

    return Text(inert(value))


def json_inert(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters JSON leaves
    raw but a terminal obeys (C1 controls, bidi overrides) written as ``\\uXXXX`` escapes."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) if _UNSAFE.search(text) else text


def finite(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced by None, through dicts, lists and tuples."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def plain_json(obj: Any, **kwargs) -> str:
    """JSON text of ``obj``: non-finite floats as null (``allow_nan=False`` makes sure)."""
    kwargs.setdefault("default", str)
    return json.dumps(finite(obj), allow_nan=False, **kwargs)
