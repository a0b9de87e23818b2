"""Load and validate engine grammars (``parsers/*.toml`` and the user's grammar folders).

Contract: ``load_grammars(files=None, grammar_dirs=())`` returns the grammars of the given
files, or of every grammar folder in load order (the shipped ``parsers/``, then the
user's ``$XDG_CONFIG_HOME/logsleuth/parsers``, then each ``grammar_dirs`` entry; a file
with the same name as an earlier one replaces it). Built-in and user grammars go through
this one loader, as datasette's built-ins register through the hooks plugins use. Each
file is checked against ``parsers/grammar.schema.json`` (the published contract), every
regex must compile in the Rust dialect polars uses, every typed field must point at a
real capture, every role must name a loaded pattern. All problems of all files are
collected and raised together as one ``GrammarError`` (compiler-style: file, key, what,
a caret under a bad regex position, a hint). A file without a ``[grammar]`` table is
refused, except in the shipped folder, where other modules keep their data files.

This module imports nothing of ``ingest``: the sample-line self-check, which needs the
classifier, lives in ``ingest/grammars.py`` (and ``formats check`` in ``analysis/format_check.py``).

A grammar file looks like (see parsers/sglang.toml for the real thing)::

    [grammar]
    name = "sglang"            # unique id
    engine = "sglang"          # engine this grammar recognises ("common" = any engine)
    order = 10                 # patterns of lower order are tried first
    detect = [ { literal = "server_args=ServerArgs(", weight = 5 } ]

    [prefix]                   # one anchored regex that peels the line header
    regex = '^\\[(?P<date>...)\\] (?P<msg>.*)$'

    [[pattern]]
    name = "decode"            # unique within all grammars
    table = "decode_stats"     # target table (or "lines" = recognised, no typed row)
    literal = "Decode batch"   # cheap prefilter, must occur in every match
    regex = '^Decode batch'    # applied to the message (header peeled)
    samples = ["[2025-01-01 00:00:00 TP0] Decode batch. #running-req: 1, ..."]
    [pattern.fields]
    running_reqs = { re = '#running-req: (\\d+)', type = "int" }

    [kinds.weights_loaded]     # event kinds the patterns emit, with their attrs keys
    attrs = ["mem_after_gib"]

    [roles]                    # Python asks for roles, never for pattern names
    prelaunch = ["shell_trace"]

    [[version_probe]]          # format-era probes, first match wins
    era = "v0.5.4"
    like = "%Decode batch [%"

    [markers]                  # named lists of SQL LIKE patterns
    kill = ["%SIGKILL%"]

    [aliases.attention_backend]  # lower-cased spelling -> canonical value
    "flash attention" = "FLASH_ATTN"
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import settings
from ..errors import GrammarError
from ..resources import data_path
from .schema import load_schema, validate

#: tables a pattern may target (= the schema's enum, checked by a test); other fields of
#: ``events`` rows land in the JSON ``attrs`` column.
TABLES = {
    "decode_stats", "prefill_stats", "spec_stats", "events", "errors", "config",
    "bench_results", "lines",
}
#: tables whose lines are stored in lines_bulk unless the pattern says ``bulk = false``
BULK_TABLES = {"decode_stats", "prefill_stats", "spec_stats"}
#: columns of an events row filled by the line header or the pattern's value/text
#: captures; every other field of an events pattern is an ``attrs`` key
EVENT_COLUMNS = {"line_no", "ts", "run_id", "rank", "tp_rank", "dp_rank", "proc", "pid", "msg",
                 "level", "date", "md", "time", "value", "text"}
#: how a file declares itself a grammar; other TOML files in the shipped parsers/ folder
#: are data of other modules (GPU catalog, environment-report patterns, host probes)
_GRAMMAR_TABLE = re.compile(r"(?m)^\[grammar\]\s*$")
SCHEMA_FILE = "parsers/grammar.schema.json"
#: labels ingest/fold.py gives lines inside multi-line records (stored in lines.pattern
#: like a pattern name): roles and rules may name them too
FOLD_LABELS = ("traceback", "traceback_tail", "continuation", "blank")


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str
    group: str | None = None  # named capture of the pattern regex
    regex: str | None = None  # own regex, first capture group is the value
    scale: float | None = None


@dataclass(frozen=True)
class Pattern:
    name: str
    table: str
    kind: str  # label stored in lines.pattern / events.kind
    literal: str
    regex: str
    fields: tuple[FieldSpec, ...]
    const: dict
    samples: tuple[str, ...]
    grammar: str
    source_file: str
    launch: int | None = None  # rank of a launch marker (0 = primary), see ingest/normalize.assign_runs
    fold: str | None = None  # traceback folding role
    parser: str | None = None  # config value parser
    config_source: str | None = None
    anchor: str | None = None  # "header": only lines that carried the engine log header
    bulk: bool = False  # raw line stored in lines_bulk (high-volume periodic line)
    roles: tuple[str, ...] = ()  # roles some grammar's [roles] gives this pattern

    @property
    def emits(self) -> str:
        """The kind its rows carry: errors patterns set it in ``const``, others by ``kind``."""
        return str(self.const.get("kind", self.kind)) if self.table == "errors" else self.kind

    @property
    def attrs(self) -> set[str]:
        """Keys this pattern writes into ``events.attrs``."""
        return ({f.name for f in self.fields} | set(self.const)) - EVENT_COLUMNS


@dataclass(frozen=True)
class KindSpec:
    """An event kind a grammar declares: the table its rows go to and their attrs keys."""

    name: str
    table: str
    attrs: tuple[str, ...]
    doc: str = ""


@dataclass(frozen=True)
class VersionProbe:
    era: str
    like: str | None = None
    regex: str | None = None


@dataclass
class Grammar:
    name: str
    engine: str
    order: int
    path: str
    detect: list[tuple[str, float]]
    prefix_regex: str | None
    patterns: list[Pattern] = field(default_factory=list)
    kinds: dict[str, KindSpec] = field(default_factory=dict)
    roles: dict[str, tuple[str, ...]] = field(default_factory=dict)
    version_probes: tuple[VersionProbe, ...] = ()
    markers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # other top-level tables (e.g. bench [columns])


# ------------------------------------------------------------------ problems

@dataclass(frozen=True)
class Problem:
    """One thing wrong with a grammar file: where (file and key), what, and a hint."""

    where: str
    what: str
    hint: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def raise_problems(problems: list[Problem]) -> None:
    """Raise one GrammarError carrying every problem (a single one keeps its hint apart)."""
    if not problems:
        return
    if len(problems) == 1:
        raise GrammarError(str(problems[0]), hint=problems[0].hint)
    lines = [str(p) + (f"\n    hint: {p.hint}" if p.hint else "") for p in problems]
    raise GrammarError("\n".join(lines) + f"\n{len(problems)} problems")


def _caret(pattern: str, pos: int | None) -> str:
    if pos is None:
        return f"    {pattern}"
    return f"    {pattern}\n    {' ' * pos}^"


def regex_problem(regex: str, where: str) -> Problem | None:
    """None when ``regex`` compiles with polars' Rust engine, else a compiler-style problem."""
    import polars as pl  # here: loading grammars without the compile check needs no polars

    try:
        pl.Series([""], dtype=pl.Utf8).str.contains(regex)
        return None
    except Exception as exc:  # polars raises ComputeError with the Rust message
        pos = None
        try:  # Python's re points at the column for the common mistakes
            re.compile(regex)
        except re.error as py_exc:
            pos = py_exc.pos
        first = str(exc).strip().splitlines()
        detail = next((ln for ln in first if ln.startswith("error:")), first[-1] if first else "")
        return Problem(where, f"invalid regex: {detail}\n{_caret(regex, pos)}",
                       hint="grammar regexes use the Rust dialect (no look-around, no back-references)")


def _named_groups(regex: str) -> set[str]:
    return set(re.findall(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>", regex))


# ------------------------------------------------------------------ one file

def _where(fname: str, data: dict, path: list) -> str:
    """Readable location of a schema path: ``sglang.toml pattern 'sgl_decode' fields 'x'``."""
    out = [fname]
    i = 0
    while i < len(path):
        key = path[i]
        if key == "pattern" and i + 1 < len(path) and isinstance(path[i + 1], int):
            items = data.get("pattern") or []
            idx = path[i + 1]
            name = items[idx].get("name") if idx < len(items) and isinstance(items[idx], dict) else None
            out.append(f"pattern '{name}'" if name else f"pattern #{idx + 1}")
            i += 2
            continue
        if key == "fields" and i + 1 < len(path):
            out.append(f"field '{path[i + 1]}'")
            i += 2
            continue
        if i == 0:
            out.append(f"[{key}]")
        elif isinstance(key, int):
            out.append(f"#{key + 1}")
        else:
            out.append(f"'{key}'" if i >= 2 and path[i - 1] in ("kinds", "roles", "aliases", "markers")
                       else str(key))
        i += 1
    return " ".join(out)


def read_grammar_file(path: Path, problems: list[Problem], *, check_regexes: bool = True) -> Grammar | None:
    """Parse and validate one grammar file, appending what is wrong to ``problems``."""
    fname = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(Problem(str(path), "no such grammar file"))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(fname, f"cannot read: {exc}"))
        return None
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(fname, f"not valid TOML: {exc}"))
        return None
    if "grammar" not in data:
        problems.append(Problem(fname, "not a grammar file: no [grammar] table",
                                hint="a grammar starts with [grammar] name = ..., engine = ...; "
                                     "see parsers/grammar.schema.json"))
        return None
    before = len(problems)
    for spath, what in validate(data, load_schema(str(data_path(SCHEMA_FILE)))):
        problems.append(Problem(_where(fname, data, spath), what,
                                hint="see parsers/grammar.schema.json" if "unknown key" in what else None))
    if len(problems) > before:
        return None  # the semantic checks below assume the structure is right
    meta = data["grammar"]
    prefix = data.get("prefix", {}).get("regex")
    if prefix is not None:
        if check_regexes and (p := regex_problem(prefix, f"{fname} [prefix] regex")):
            problems.append(p)
        elif "msg" not in _named_groups(prefix):
            problems.append(Problem(f"{fname} [prefix] regex", "needs a (?P<msg>...) capture"))
    grammar = Grammar(
        name=meta["name"], engine=meta["engine"], order=int(meta.get("order", 50)),
        path=str(path), detect=[(d["literal"], float(d.get("weight", 1))) for d in meta.get("detect", [])],
        prefix_regex=prefix,
        kinds={k: KindSpec(k, v.get("table", "events"), tuple(v.get("attrs", [])), v.get("doc", ""))
               for k, v in data.get("kinds", {}).items()},
        roles={k: tuple(v) for k, v in data.get("roles", {}).items()},
        version_probes=tuple(VersionProbe(p["era"], p.get("like"), p.get("regex"))
                             for p in data.get("version_probe", [])),
        markers={k: tuple(v) for k, v in data.get("markers", {}).items()},
        aliases={k: {s.lower(): c for s, c in v.items()} for k, v in data.get("aliases", {}).items()},
        extra={k: v for k, v in data.items()
               if k not in ("grammar", "prefix", "pattern", "kinds", "roles", "version_probe", "markers",
                            "aliases")},
    )
    for i, probe in enumerate(grammar.version_probes):
        where = f"{fname} [[version_probe]] #{i + 1} ({probe.era})"
        if (probe.like is None) == (probe.regex is None):
            problems.append(Problem(where, "needs exactly one of 'like' or 'regex'"))
        elif probe.regex and check_regexes and (p := regex_problem(probe.regex, f"{where} regex")):
            problems.append(p)
    for i, raw in enumerate(data.get("pattern", [])):
        pattern = _read_pattern(raw, i, grammar, fname, problems, check_regexes)
        if pattern is not None:
            grammar.patterns.append(pattern)
    return grammar


def _whole_number(regex: str | None, ftype: str) -> str | None:
    """A float field's ``([\\d.]+)`` capture also takes an exponent: Python prints big values
    as ``1.797e+308``, and the mantissa alone (1.797) would be a silent wrong answer."""
    if regex is None or ftype not in ("float", "pct"):
        return regex
    return regex.replace(r"([\d.]+)", r"([\d.]+(?:[eE][+-]?\d+)?)")


def _read_pattern(raw: dict, index: int, grammar: Grammar, fname: str, problems: list[Problem],
                  check_regexes: bool) -> Pattern | None:
    name = raw["name"]
    where = f"{fname} pattern '{name}'"
    n_before = len(problems)
    if check_regexes and (p := regex_problem(raw["regex"], f"{where} regex")):
        problems.append(p)
    groups = _named_groups(raw["regex"])
    fields = []
    for fname_, spec in (raw.get("fields") or {}).items():
        if isinstance(spec, str):
            spec = {"type": spec}
        fre = spec.get("re")
        group = spec.get("group", fname_ if fre is None else None)
        if fre is not None:
            if check_regexes and (p := regex_problem(fre, f"{where} field '{fname_}' re")):
                problems.append(p)
        elif group not in groups:
            problems.append(Problem(f"{where} field '{fname_}'",
                                    f"no capture (?P<{group}>...) in the regex and no 're' of its own"))
        fields.append(FieldSpec(fname_, spec.get("type", "str"), group if fre is None else None,
                                _whole_number(fre, spec.get("type", "str")), spec.get("scale")))
    declared = {f.name for f in fields} | {f.group for f in fields if f.group}
    for g in sorted(groups - declared):  # undeclared captures: strings ("value" is numeric)
        fields.append(FieldSpec(g, "float" if g == "value" else "str", g))
    samples = raw.get("samples") or []
    if not samples:
        problems.append(Problem(where, "needs at least one sample line (samples = [...])",
                                hint="samples are real lines the pattern must claim; they are checked on load"))
    if len(problems) > n_before:
        return None
    return Pattern(
        name=name, table=raw["table"], kind=raw.get("kind", name), literal=raw.get("literal", ""),
        regex=raw["regex"], fields=tuple(fields), const=dict(raw.get("const") or {}),
        samples=tuple(samples), grammar=grammar.name, source_file=fname,
        launch=raw.get("launch"), fold=raw.get("fold"), parser=raw.get("parser"),
        config_source=raw.get("config_source"), anchor=raw.get("anchor"),
        bulk=bool(raw.get("bulk", raw["table"] in BULK_TABLES)),
    )


# ------------------------------------------------------------------ folders and the set

def grammar_dirs(extra: list[str | Path] | tuple = ()) -> list[Path]:
    """Grammar folders in load order: shipped, the user config folder (if it exists), then ``extra``."""
    dirs = [data_path("parsers")]
    user = settings.user_grammar_dir()
    if user.is_dir():
        dirs.append(user)
    for d in extra:
        p = Path(d)
        if not p.is_dir():
            raise GrammarError(f"--grammar-dir {d}: not a directory")
        dirs.append(p)
    return dirs


def grammar_files(folder: Path | None = None, extra_dirs: list[str | Path] | tuple = ()) -> list[Path]:
    """Grammar files of ``folder`` (default: every grammar folder); a later folder's file
    replaces an earlier one of the same name. In the shipped folder, TOML files without a
    ``[grammar]`` table are other modules' data and are skipped; a user's are refused on load."""
    folders = [folder] if folder is not None else grammar_dirs(extra_dirs)
    by_name: dict[str, Path] = {}
    shipped = data_path("parsers").resolve()
    for d in folders:
        for p in sorted(Path(d).glob("*.toml")):
            if p.parent.resolve() == shipped and not _GRAMMAR_TABLE.search(p.read_text(encoding="utf-8")):
                continue
            by_name[p.name] = p
    return sorted(by_name.values(), key=lambda p: p.name)


def load_grammars(files: list[Path] | None = None, *, grammar_dirs: list[str | Path] | tuple = (),
                  check_regexes: bool = True) -> list[Grammar]:
    """Load and validate grammars, ordered by (order, name); raise one GrammarError listing
    every problem. ``check_regexes=False`` skips the compile check (files already checked)."""
    problems: list[Problem] = []
    paths = list(files) if files is not None else grammar_files(extra_dirs=grammar_dirs)
    grammars = [g for g in (read_grammar_file(p, problems, check_regexes=check_regexes) for p in paths) if g]
    problems += cross_check(grammars)
    raise_problems(problems)
    grammars.sort(key=lambda g: (g.order, g.name))
    attach_roles(grammars)
    return grammars


def attach_roles(grammars: list[Grammar]) -> None:
    """Give each pattern the roles any grammar's [roles] lists it under (a user grammar may
    give a shipped pattern a role)."""
    by_pattern: dict[str, list[str]] = {}
    for g in grammars:
        for r, members in g.roles.items():
            for m in members:
                by_pattern.setdefault(m, []).append(r)
    for g in grammars:
        g.patterns = [replace(p, roles=tuple(dict.fromkeys(by_pattern[p.name]))) if p.name in by_pattern else p
                      for p in g.patterns]


def cross_check(grammars: list[Grammar]) -> list[Problem]:
    """Checks across files: unique grammar and pattern names, roles naming loaded patterns."""
    problems: list[Problem] = []
    seen_grammar: dict[str, str] = {}
    names: dict[str, str] = {}
    for g in grammars:
        fname = Path(g.path).name
        if g.name in seen_grammar:
            problems.append(Problem(f"{fname} [grammar] name", f"'{g.name}' already used in {seen_grammar[g.name]}"))
        seen_grammar[g.name] = fname
        for p in g.patterns:
            if p.name in names:
                problems.append(Problem(f"{fname} pattern '{p.name}'", f"name already used in {names[p.name]}"))
            names[p.name] = fname
    for g in grammars:
        for role, members in g.roles.items():
            for m in members:
                if m not in names and m not in FOLD_LABELS:
                    problems.append(Problem(f"{Path(g.path).name} [roles] {role}", f"no pattern named '{m}'"))
    return problems


@functools.lru_cache(maxsize=8)
def _cached(dirs: tuple[str, ...], check_regexes: bool) -> tuple[Grammar, ...]:
    return tuple(load_grammars(grammar_dirs=list(dirs), check_regexes=check_regexes))


def default_grammars(grammar_dirs: list[str | Path] | tuple = (), *, check_regexes: bool = True) -> tuple[Grammar, ...]:
    """Shipped + user grammars (+ ``grammar_dirs``), validated and cached per folder list.
    The sample-line self-check is ``ingest.grammars.checked_grammars``."""
    return _cached(tuple(str(d) for d in grammar_dirs), check_regexes)


# ------------------------------------------------------------------ lookups Python makes

def role(grammars, name: str) -> list[str]:
    """Pattern names that play ``name`` (e.g. "prelaunch") in any of ``grammars``."""
    out: list[str] = []
    for g in grammars:
        out += [m for m in g.roles.get(name, ()) if m not in out]
    return out


def role_map(grammars) -> dict[str, list[str]]:
    """Every role -> the pattern names (and fold labels) that play it."""
    out: dict[str, list[str]] = {}
    for g in grammars:
        for r in g.roles:
            out.setdefault(r, [])
    return {r: role(grammars, r) for r in out}


def markers(grammars, name: str) -> list[str]:
    """The SQL LIKE patterns of marker list ``name`` across ``grammars`` (e.g. "kill")."""
    out: list[str] = []
    for g in grammars:
        out += [m for m in g.markers.get(name, ()) if m not in out]
    return out


def aliases(grammars, name: str, engine: str | None = None) -> dict[str, str]:
    """Spelling map ``name`` (lower-cased spelling -> canonical) of the grammars of ``engine``
    (and common ones); ``engine=None`` merges all."""
    out: dict[str, str] = {}
    for g in grammars:
        if engine is None or g.engine in (engine, "common"):
            out.update(g.aliases.get(name, {}))
    return out


def version_probes(grammars, engine: str) -> list[VersionProbe]:
    """Format-era probes of ``engine``'s grammars, regex probes first (they are the more
    specific tells), then the LIKE probes in file order."""
    probes = [p for g in grammars if g.engine == engine for p in g.version_probes]
    return [p for p in probes if p.regex] + [p for p in probes if not p.regex]


def event_kinds(grammars) -> dict[str, KindSpec]:
    """Every declared kind of every grammar; a kind several grammars declare (both engines
    report ``attention_backend``) has the union of their attrs."""
    out: dict[str, KindSpec] = {}
    for g in grammars:
        for name, spec in g.kinds.items():
            if name in out:
                prev = out[name]
                spec = KindSpec(name, prev.table, tuple(dict.fromkeys(prev.attrs + spec.attrs)),
                                prev.doc or spec.doc)
            out[name] = spec
    return out
