"""Structural check of a data file against a JSON Schema (parsers/grammar.schema.json).

Contract: ``validate(instance, schema)`` returns a list of ``(path, message)`` pairs, one
per violation (all of them, not the first), where ``path`` is the list of keys/indices
leading to the offending value. It implements the subset of JSON Schema the shipped
schemas use: ``type`` (a name or a list), ``properties``, ``required``,
``additionalProperties`` (false or a schema), ``items``, ``anyOf``, ``enum``,
``minItems`` and ``minimum``. Unknown keywords (``description``, ``$id`` ...) are
ignored, as JSON Schema requires. No third-party dependency: the schema file is the
contract, this is only its reader.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool,
    "integer": int, "number": (int, float),
}


def _is(value, type_name: str) -> bool:
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False  # TOML true is not a number
    return isinstance(value, _TYPES[type_name])


def validate(instance, schema: dict, path: tuple = ()) -> list[tuple[list, str]]:  # noqa: C901 (one branch per JSON-Schema keyword; jsonschema is to replace it)
    problems: list[tuple[list, str]] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(instance, t) for t in names):
            return [(list(path), f"must be {' or '.join(names)}, got {type(instance).__name__}")]
    if "anyOf" in schema:
        branches = [validate(instance, s, path) for s in schema["anyOf"]]
        if all(branches):
            # report the branch whose type fits (its detail is the useful message)
            fitting = [b for b, s in zip(branches, schema["anyOf"])
                       if "type" not in s or _is(instance, s["type"])]
            problems += (fitting or branches)[0]
    if "enum" in schema and instance not in schema["enum"]:
        problems.append((list(path), f"{instance!r} is not one of {schema['enum']}"))
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in instance:
                problems.append((list(path), f"missing key '{key}'"))
        extra = schema.get("additionalProperties", True)
        unknown = sorted(k for k in instance if k not in props)
        if extra is False and unknown:
            problems.append((list(path), f"unknown key(s) {unknown} (allowed: {sorted(props)})"))
        for key, value in instance.items():
            if key in props:
                problems += validate(value, props[key], path + (key,))
            elif isinstance(extra, dict):
                problems += validate(value, extra, path + (key,))
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            problems.append((list(path), f"needs at least {schema['minItems']} item(s)"))
        if "items" in schema:
            for i, item in enumerate(instance):
                problems += validate(item, schema["items"], path + (i,))
    if "minimum" in schema and _is(instance, "number") and instance < schema["minimum"]:
        problems.append((list(path), f"must be >= {schema['minimum']}"))
    return problems


@functools.lru_cache(maxsize=4)
def load_schema(path: str) -> dict:
    """The schema at ``path`` (read once per process; the file is shipped data)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
