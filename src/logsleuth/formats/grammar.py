"""Load and validate engine grammars (``parsers/*.toml``).

Contract: ``load_grammars()`` returns every grammar found in the parsers folder (or the
files given), each regex already checked to compile in the Rust dialect polars uses, each
typed field pointing at a real capture, and every pattern carrying at least one sample
line that the full classifier assigns to that very pattern. Anything wrong raises
``GrammarError`` with a compiler-style message (file, key, problem, caret, hint).

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
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..errors import GrammarError
from ..resources import data_path

#: tables a pattern may target, with the columns a field may fill directly; other
#: fields of ``events`` rows land in the JSON ``attrs`` column.
TABLES = {
    "decode_stats", "prefill_stats", "spec_stats", "events", "errors", "config",
    "bench_results", "lines",
}
FIELD_TYPES = {
    "int", "float", "str", "bool", "pct", "thousands", "float_list", "pct_list",
}
FOLD_ROLES = {"start", "body", "error"}
CONFIG_PARSERS = {"pyrepr", "pydict", "kvlist", "env", "banner"}

_PATTERN_KEYS = {
    "name", "table", "kind", "literal", "regex", "fields", "const", "samples",
    "launch", "fold", "parser", "config_source", "doc", "anchor", "bulk",
}
#: tables whose lines are stored in lines_bulk unless the pattern says ``bulk = false``
BULK_TABLES = {"decode_stats", "prefill_stats", "spec_stats"}


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
    launch: int | None = None  # rank of a launch marker (0 = primary), see segment.py
    fold: str | None = None  # traceback folding role
    parser: str | None = None  # config value parser
    config_source: str | None = None
    anchor: str | None = None  # "header": only lines that carried the engine log header
    bulk: bool = False  # raw line stored in lines_bulk (high-volume periodic line)


@dataclass
class Grammar:
    name: str
    engine: str
    order: int
    path: str
    detect: list[tuple[str, float]]
    prefix_regex: str | None
    patterns: list[Pattern] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # other top-level tables (e.g. bench [columns])


def _caret(pattern: str, pos: int | None) -> str:
    if pos is None:
        return f"    {pattern}"
    return f"    {pattern}\n    {' ' * pos}^"


_TRUSTED = False  # set while loading grammar files already validated (see default_grammars)


def check_regex(regex: str, where: str) -> None:
    """Compile ``regex`` with polars' Rust engine; raise a compiler-style error."""
    if _TRUSTED:
        return
    try:
        pl.Series([""], dtype=pl.Utf8).str.contains(regex)
    except Exception as exc:  # polars raises ComputeError with the Rust message
        pos = None
        try:  # Python's re points at the column for the common mistakes
            import re

            re.compile(regex)
        except re.error as py_exc:
            pos = py_exc.pos
        first = str(exc).strip().splitlines()
        detail = next((ln for ln in first if ln.startswith("error:")), first[-1] if first else "")
        raise GrammarError(
            f"{where}: invalid regex: {detail}\n{_caret(regex, pos)}",
            hint="grammar regexes use the Rust dialect (no look-around, no back-references)",
        ) from None


def _named_groups(regex: str) -> set[str]:
    import re as _re

    return set(_re.findall(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>", regex))


def _load_file(path: Path) -> Grammar | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise GrammarError(f"{path.name}: not valid TOML: {exc}") from None
    if "grammar" not in data:
        return None  # another kind of data file (e.g. gpus.toml)
    meta = data["grammar"]
    where = f"{path.name} [grammar]"
    for key in ("name", "engine"):
        if key not in meta:
            raise GrammarError(f"{where}: missing key '{key}'")
    prefix = data.get("prefix", {}).get("regex")
    if prefix is not None:
        check_regex(prefix, f"{path.name} [prefix] regex")
        if "msg" not in _named_groups(prefix):
            raise GrammarError(f"{path.name} [prefix] regex: needs a (?P<msg>...) capture")
    detect = [(d["literal"], float(d.get("weight", 1))) for d in meta.get("detect", [])]
    grammar = Grammar(
        name=meta["name"], engine=meta["engine"], order=int(meta.get("order", 50)),
        path=str(path), detect=detect, prefix_regex=prefix,
        extra={k: v for k, v in data.items() if k not in ("grammar", "prefix", "pattern")},
    )
    for i, raw in enumerate(data.get("pattern", [])):
        grammar.patterns.append(_load_pattern(raw, i, grammar, path))
    return grammar


def _load_pattern(raw: dict, index: int, grammar: Grammar, path: Path) -> Pattern:
    name = raw.get("name", f"#{index}")
    where = f"{path.name} pattern '{name}'"
    unknown = set(raw) - _PATTERN_KEYS
    if unknown:
        raise GrammarError(f"{where}: unknown key(s) {sorted(unknown)}",
                           hint=f"allowed: {sorted(_PATTERN_KEYS)}")
    for key in ("name", "table", "regex"):
        if key not in raw:
            raise GrammarError(f"{where}: missing key '{key}'")
    if raw["table"] not in TABLES:
        raise GrammarError(f"{where}: table '{raw['table']}' is not one of {sorted(TABLES)}")
    check_regex(raw["regex"], f"{where} regex")
    groups = _named_groups(raw["regex"])
    fields = []
    for fname, spec in (raw.get("fields") or {}).items():
        if isinstance(spec, str):
            spec = {"type": spec}
        ftype = spec.get("type", "str")
        if ftype not in FIELD_TYPES:
            raise GrammarError(f"{where} field '{fname}': unknown type '{ftype}'",
                               hint=f"types: {sorted(FIELD_TYPES)}")
        fre = spec.get("re")
        group = spec.get("group", fname if fre is None else None)
        if fre is not None:
            check_regex(fre, f"{where} field '{fname}' re")
        elif group not in groups:
            raise GrammarError(f"{where} field '{fname}': no capture (?P<{group}>...) in the regex "
                               "and no 're' of its own")
        fields.append(FieldSpec(fname, ftype, group if fre is None else None, fre, spec.get("scale")))
    declared = {f.name for f in fields} | {f.group for f in fields if f.group}
    for g in sorted(groups - declared):  # undeclared captures: strings ("value" is numeric)
        fields.append(FieldSpec(g, "float" if g == "value" else "str", g))
    samples = raw.get("samples") or []
    if not samples:
        raise GrammarError(f"{where}: needs at least one sample line (samples = [...])")
    fold = raw.get("fold")
    if fold is not None and fold not in FOLD_ROLES:
        raise GrammarError(f"{where}: fold must be one of {sorted(FOLD_ROLES)}")
    parser = raw.get("parser")
    if parser is not None and parser not in CONFIG_PARSERS:
        raise GrammarError(f"{where}: parser must be one of {sorted(CONFIG_PARSERS)}")
    literal = raw.get("literal", "")
    return Pattern(
        name=name, table=raw["table"], kind=raw.get("kind", name), literal=literal,
        regex=raw["regex"], fields=tuple(fields), const=dict(raw.get("const") or {}),
        samples=tuple(samples), grammar=grammar.name, source_file=path.name,
        launch=raw.get("launch"), fold=fold, parser=parser,
        config_source=raw.get("config_source"), anchor=raw.get("anchor"),
        bulk=bool(raw.get("bulk", raw["table"] in BULK_TABLES)),
    )


def grammar_files(folder: Path | None = None) -> list[Path]:
    folder = folder or data_path("parsers")
    return sorted(p for p in folder.glob("*.toml"))


def load_grammars(files: list[Path] | None = None, *, check_samples: bool = True) -> list[Grammar]:
    """Load, validate and order grammars; raise GrammarError on the first problem."""
    grammars = [g for g in (_load_file(p) for p in (files or grammar_files())) if g]
    names: dict[str, str] = {}
    for g in grammars:
        for p in g.patterns:
            if p.name in names:
                raise GrammarError(f"{Path(g.path).name} pattern '{p.name}': name already used in "
                                   f"{names[p.name]}")
            names[p.name] = Path(g.path).name
    grammars.sort(key=lambda g: (g.order, g.name))
    if check_samples:
        check_samples_claimed(grammars)
    return grammars


@functools.lru_cache(maxsize=4)
def default_grammars() -> tuple[Grammar, ...]:
    """The shipped grammars, validated. The sample check (every sample claimed by its own
    pattern: a full classifier run, ~0.5-1 s) and the regex compile check (~0.5 s) are
    skipped when a stamp in the user cache
    says these exact grammar files were already checked by this exact classifier code
    (key: sha256 of the grammar files and of the parser modules). Set
    LOGSLEUTH_NO_GRAMMAR_CACHE=1 to always check."""
    stamp = _checked_stamp()
    if stamp is not None and stamp.exists():
        global _TRUSTED
        _TRUSTED = True
        try:
            return tuple(load_grammars(check_samples=False))
        finally:
            _TRUSTED = False
    grammars = tuple(load_grammars())
    if stamp is not None:
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text("ok\n", encoding="utf-8")
        except OSError:
            pass
    return grammars


def _checked_stamp() -> Path | None:
    import hashlib
    import os

    if os.environ.get("LOGSLEUTH_NO_GRAMMAR_CACHE"):
        return None
    try:
        h = hashlib.sha256()
        code = Path(__file__).resolve().parents[1]
        for f in sorted(grammar_files()) + [Path(__file__), code / "ingest" / "parse.py",
                                            code / "ingest" / "read.py"]:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "logsleuth"
        return base / f"grammar-checked-{h.hexdigest()[:32]}"
    except OSError:
        return None


def check_samples_claimed(grammars: list[Grammar]) -> None:
    """Every sample line must be classified as its own pattern by the full classifier."""
    from ..ingest.parse import classify_lines  # late import: parse depends on grammar

    by_engine: dict[str, list[tuple[Pattern, str]]] = {}
    for g in grammars:
        for p in g.patterns:
            for s in p.samples:
                by_engine.setdefault(g.engine, []).append((p, s))
    engines = sorted({g.engine for g in grammars if g.engine != "common"}) or ["none"]
    for engine, items in by_engine.items():
        # a common pattern's sample may carry either engine's header: any engine may claim it
        tries = [engine] if engine != "common" else engines
        results = [classify_lines([s for _, s in items], grammars, e) for e in tries]
        for i, (p, sample) in enumerate(items):
            got = [r[i] for r in results]
            if p.name not in got:
                claimed = next((x for x in got if x), None)
                raise GrammarError(
                    f"{p.source_file} pattern '{p.name}': sample not claimed by its own pattern "
                    f"(claimed by: {claimed or 'nothing'})\n    {sample}",
                    hint="fix the regex or the literal, or reorder patterns",
                )
