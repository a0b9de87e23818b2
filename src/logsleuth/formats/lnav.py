"""lnav format files generated from the engine grammars (``logsleuth formats export --lnav DIR``).

Contract: ``lnav_formats()`` returns, per engine with an entry in ``parsers/lnav.toml``, one lnav
format (the JSON document lnav reads from its ``formats/`` folder) named ``<engine>_log``:

* one lnav regex per grammar pattern of the tables listed there (decode, prefill, spec lines)
  whose samples carry a timestamp (lnav reads no line without one):
  lnav's line prefix (timestamp, level, process/rank tags) followed by the pattern's own regex,
  each typed field captured by name, so lnav's SQL reads ``SELECT gen_tok_s FROM sglang_log``;
* a last regex, ``line``, for every other line with the same prefix;
* the values: the identifiers of the prefix (tags, ranks) and every field with its lnav kind;
* the samples: every grammar sample of the engine that the format's regexes read (lnav refuses a
  format whose samples do not match, so a sample this module cannot place is left out).

A field with its own regex (``re``) is captured inside a lookahead at the start of the message,
so fields match in any order and may be absent, as they do in the grammar. Our grammars are in
Rust's regex dialect and lnav's in PCRE2; the constructs used here (``(?P<name>``, lookahead,
classes) mean the same in both, and ``(?P<`` is rewritten to ``(?<`` for older lnav builds.
Nothing here reads logs or writes files: ``write_lnav_formats`` does the writing.
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import regex

from ..resources import data_path
from .grammar import Grammar, Pattern, default_grammars

#: grammar field type -> lnav value kind (pct stays the printed percent: 2.76, not 0.0276; lnav's
#: boolean kind reads Python's True as 0, so booleans stay text)
_KINDS = {"int": "integer", "float": "float", "pct": "float", "bool": "string",
          "str": "string", "thousands": "string", "float_list": "string"}
_NAMED = re.compile(r"\(\?P?<([A-Za-z_]\w*)>")
_SCHEMA = "https://lnav.org/schemas/format-v1.schema.json"


def lnav_settings() -> dict:
    """The per-engine lnav data of ``parsers/lnav.toml``."""
    return tomllib.loads(data_path("parsers/lnav.toml").read_text(encoding="utf-8"))


def _first_group_named(field_re: str, name: str) -> str:
    """``field_re`` with its first capturing group named ``name`` (the grammar's value group)."""
    i = 0
    while i < len(field_re):
        c = field_re[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # skip a character class: a '(' inside it is literal
            j = i + 1 + (field_re[i + 1:i + 2] == "]")
            while j < len(field_re) and field_re[j] != "]":
                j += 2 if field_re[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(" and field_re[i + 1:i + 2] != "?":
            return f"{field_re[:i]}(?<{name}>{field_re[i + 1:]}"
        i += 1
    return field_re


def _lookahead(field_re: str, name: str) -> str:
    """An always-true lookahead at the message start that captures the field when present."""
    body = _first_group_named(field_re, name)
    if body.startswith("^"):  # anchored at the message start, which is where the lookahead sits
        return f"(?=(?:{body[1:]})?)"
    return f"(?=(?:.*?{body})?)"


def _pattern_regex(prefix: str, pattern: Pattern, taken: set[str]) -> tuple[str, dict[str, str]]:
    """lnav regex of one grammar pattern and {value name: grammar type} of what it captures."""
    values: dict[str, str] = {}
    looks = []
    own_groups = {f.name for f in pattern.fields if not f.regex and f.name not in taken}
    for f in pattern.fields:
        if f.regex and f.name not in taken:
            looks.append(_lookahead(f.regex, f.name))
            values[f.name] = f.type
        elif f.name in own_groups:
            values[f.name] = f.type
    main = _NAMED.sub(lambda m: f"(?<{m.group(1)}>" if m.group(1) in own_groups else "(?:",
                      pattern.regex.removeprefix("^"))
    return f"{prefix}(?<body>{''.join(looks)}{main}.*)$", values


def lnav_format(grammar: Grammar, settings: dict) -> dict:
    """The lnav format document of one engine grammar."""
    prefix = settings["prefix"]
    taken = set(_NAMED.findall(prefix)) | {"body"}
    regexes, values = {}, {}
    for pattern in grammar.patterns:
        if pattern.table in settings["tables"]:
            regexes[pattern.name], found = _pattern_regex(prefix, pattern, taken)
            values.update(found)
    # lnav tries the regex that read the previous line first, so the catch-all must refuse the
    # typed lines or it would read every one of them after its first match; its prefix is atomic
    # so that giving back an optional space cannot dodge the refusal
    typed = "|".join(_NAMED.sub("(?:", p.regex.removeprefix("^")) for p in grammar.patterns if p.name in regexes)
    regexes["line"] = f"^(?>{prefix.removeprefix('^')})(?<body>{f'(?!{typed})' if typed else ''}.*)$"
    samples = _samples(grammar, regexes)
    for key in [k for k in regexes if k != "line"]:  # a shape never stamped (v0.1's bare stats) is left out
        if not any(regex.match(regexes[key], s) for s in samples):
            del regexes[key]
    name = f"{grammar.engine}_log"
    fmt = {
        "title": settings["title"], "description": settings["description"],
        "regex": {k: {"pattern": v} for k, v in regexes.items()},
        "level-field": "level", "level": dict(settings["levels"]),
        "timestamp-format": list(settings["timestamp_formats"]),
        "value": {**{i: {"kind": "string", "identifier": True} for i in settings["identifiers"]},
                  **{k: {"kind": _KINDS.get(t, "string")} for k, t in values.items()}},
        "sample": [{"line": s} for s in samples],
    }
    return {"$schema": _SCHEMA, name: fmt}


def _samples(grammar: Grammar, regexes: dict[str, str]) -> list[str]:
    """The grammar's sample lines some lnav regex of the format reads, typed lines first."""
    compiled = [regex.compile(r) for r in regexes.values()]
    typed = [s for p in grammar.patterns if p.name in regexes for s in p.samples]
    rest = [s for p in grammar.patterns if p.name not in regexes for s in p.samples]
    seen: dict[str, None] = {}
    for s in typed + rest:
        if "\n" not in s and "\r" not in s and any(c.match(s) for c in compiled):
            seen.setdefault(s, None)
    return list(seen)


def lnav_formats() -> dict[str, dict]:
    """{file name: lnav format document} for every engine ``parsers/lnav.toml`` describes."""
    settings = lnav_settings()
    out = {}
    for grammar in default_grammars():
        if grammar.engine in settings and grammar.name == grammar.engine:
            out[f"{grammar.engine}_log.json"] = lnav_format(grammar, settings[grammar.engine])
    return out


def write_lnav_formats(folder: str | Path) -> list[Path]:
    """Write the lnav format files into ``folder`` (created); the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, doc in lnav_formats().items():
        path = folder / name
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
