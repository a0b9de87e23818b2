"""Whole-set checks of grammars against the classifier, the rules and the views (``formats check``).

Contract:

- ``check_formats(files=None, grammar_dirs=(), rules_dirs=())`` checks the shipped and user
  grammars (``files`` are checked together with the shipped ones, replacing those of the
  same name) and returns a ``CheckSummary``; anything wrong raises one ``GrammarError``
  listing every problem with its file and key, compiler-style. A file that does not exist
  raises ``BadInputError`` (exit 3). Checks: the grammar schema and regexes (the loader),
  every sample line claimed by its own pattern (the real classifier), every event kind a
  pattern emits declared under ``[kinds]`` with its attrs keys, and every pattern name,
  event kind, attrs key, table and column that a rule (``queries/rules`` plus
  ``rules_dirs``) or a view (``queries/views``) uses existing (the kind and pattern names of
  the library's own queries in ``queries/derive`` and ``queries/app`` too).

It sits in ``analysis/`` because it runs the rules' parser and the real classifier
(``ingest/grammars.py`` holds the sample self-check that ingest runs on load).
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInputError, GrammarError
from ..ingest.grammars import sample_problems
from ..resources import data_path
from ..formats.grammar import (
    EVENT_COLUMNS, FOLD_LABELS, TABLES, Grammar, attach_roles, Pattern, Problem, cross_check, event_kinds, grammar_files,
    load_grammars, raise_problems, read_grammar_file,
)

#: what lines.kind holds: the table that claimed the line, or "unparsed"
LINE_KINDS = tuple(sorted(TABLES | {"unparsed"}))
_LINE_TABLES = {"lines", "lines_other", "lines_bulk"}
#: the ``events`` view and its two stores (events_bulk: the kinds of bulk event patterns)
_EVENT_TABLES = {"events", "events_other", "events_bulk"}


@dataclass(frozen=True)
class CheckSummary:
    grammars: int
    patterns: int
    samples: int
    kinds: int
    rules: int
    views: int
    queries: int = 0

    def line(self) -> str:
        return (f"ok: {self.grammars} grammars, {self.patterns} patterns, {self.samples} sample lines claimed "
                f"by their own pattern, {self.kinds} event kinds declared; {self.rules} rules, "
                f"{self.views} views and {self.queries} library queries reference only what exists")


# ------------------------------------------------------------------ kinds

def kind_problems(grammars: list[Grammar]) -> list[Problem]:
    """Each events/errors pattern's kind is declared under some grammar's [kinds] (same
    table), and each attrs key the pattern writes is among the declared attrs."""
    declared = event_kinds(grammars)
    problems: list[Problem] = []
    for g in grammars:
        for p in g.patterns:
            if p.table not in ("events", "errors"):
                continue
            where = f"{p.source_file} pattern '{p.name}'"
            spec = declared.get(p.emits)
            if spec is None:
                problems.append(Problem(where, f"emits kind '{p.emits}', which no grammar declares",
                                        hint=f"add [kinds.{p.emits}] to {p.source_file}"))
                continue
            if spec.table != p.table:
                problems.append(Problem(where, f"writes kind '{p.emits}' to {p.table}, declared for {spec.table}"))
            if p.table == "events":
                missing = sorted(p.attrs - set(spec.attrs))
                if missing:
                    problems.append(Problem(where, f"writes attrs {missing} not declared for kind '{p.emits}'",
                                            hint=f"list them in [kinds.{p.emits}] attrs"))
    for g in grammars:
        for name, spec in g.kinds.items():
            if spec.table not in ("events", "errors"):
                problems.append(Problem(f"{Path(g.path).name} [kinds.{name}]", "table must be events or errors"))
    return problems


# ------------------------------------------------------------------ references of rules and views

_FROM = re.compile(r"\b(?:FROM|JOIN)\s+([A-Za-z_]\w*)(?:\s+(?:AS\s+)?([A-Za-z_]\w*))?", re.I)
_NOT_ALIAS = {"where", "on", "using", "left", "right", "inner", "outer", "full", "cross", "join", "group",
              "order", "limit", "union", "qualify", "having", "window", "natural", "as", "semi", "anti",
              "positional", "asof", "lateral", "select", "except", "intersect"}
_EQ = re.compile(r"(?:\b([A-Za-z_]\w*)\.)?\b(kind|pattern)\s*(?:=|<>|!=)\s*'([^']*)'", re.I)
_IN = re.compile(r"(?:\b([A-Za-z_]\w*)\.)?\b(kind|pattern)\s+(?:NOT\s+)?IN\s*\(([^)]*)\)", re.I)
_ATTR = re.compile(r"\b(?:json_extract(?:_string)?|json_value)\s*\(\s*(?:[A-Za-z_]\w*\.)?attrs\s*,\s*'\$\.(\w+)'"
                   r"|\battrs\s*->>?\s*'\$?\.?(\w+)'", re.I)
_STRING = re.compile(r"'([^']*)'")


def _strip_comments(sql: str) -> str:
    # keep line numbers: blank the comment instead of dropping the line
    return "\n".join(re.sub(r"--.*$", "", ln) for ln in sql.splitlines())


def _scopes(sql: str) -> list[int]:
    """For each character, the position of the innermost "(" enclosing it (-1 at top level);
    parentheses inside string literals do not count."""
    owner = [-1] * len(sql)
    stack: list[int] = []
    in_str = False
    for i, ch in enumerate(sql):
        if ch == "'":
            in_str = not in_str
        elif not in_str and ch == "(":
            stack.append(i)
        owner[i] = stack[-1] if stack else -1
        if not in_str and ch == ")" and stack:
            stack.pop()
    return owner


def _aliases(sql: str, owner: list[int]) -> list[tuple[int, str, str]]:
    """(scope, alias, table) of every FROM/JOIN; a table is also its own alias."""
    out: list[tuple[int, str, str]] = []
    for m in _FROM.finditer(sql):
        table, alias = m.group(1).lower(), (m.group(2) or "").lower()
        scope = owner[m.start()]
        out.append((scope, table, table))
        if alias and alias not in _NOT_ALIAS:
            out.append((scope, alias, table))
    return out


def _table_at(defs: list[tuple[int, str, str]], owner: list[int], qual: str, pos: int) -> str | None:
    """Table an alias names at ``pos``: the definition in the innermost enclosing scope that
    has one (CTEs reuse aliases: ``e`` for errors in one, events in the next). "?" means
    a table whose kind column grammars do not fill (or a CTE): not checked."""
    scope = owner[pos]
    while True:
        if qual:
            found = [t for sc, a, t in defs if sc == scope and a == qual]
            if found:
                return found[0]
        else:
            # unqualified: the tables of the innermost scope that has a FROM; a column of a
            # CTE or of several grammar tables at once stays unresolved (not checked)
            tables = {t for sc, a, t in defs if sc == scope and a == t}
            if tables:
                grammar_tables = tables & ({"errors"} | _EVENT_TABLES | _LINE_TABLES)
                return next(iter(grammar_tables)) if len(tables) == 1 and grammar_tables else "?"
        if scope < 0:
            return None
        scope = owner[scope - 1] if scope > 0 else -1


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


@dataclass(frozen=True)
class _Known:
    patterns: set
    events: set
    errors: set
    attrs: set
    bulk_events: set = frozenset()  # kinds only bulk patterns emit: stored in events_bulk

    @classmethod
    def of(cls, grammars: list[Grammar]) -> "_Known":
        kinds = event_kinds(grammars)
        pats = [p for g in grammars for p in g.patterns]
        return cls(
            patterns={p.name for p in pats} | set(FOLD_LABELS),
            events={k for k, s in kinds.items() if s.table == "events"} | {p.emits for p in pats if p.table == "events"},
            errors={k for k, s in kinds.items() if s.table == "errors"} | {p.emits for p in pats if p.table == "errors"},
            attrs={a for s in kinds.values() for a in s.attrs} | {a for p in pats if p.table == "events" for a in p.attrs},
            bulk_events={p.emits for p in pats if p.table == "events" and p.bulk}
            - {p.emits for p in pats if p.table == "events" and not p.bulk},
        )


def _unknown(what: str, value: str, known: set, where: str) -> Problem:
    close = difflib.get_close_matches(value, sorted(known), n=2)
    return Problem(where, f"{what} '{value}' is not produced by any grammar",
                   hint=f"did you mean {' or '.join(repr(c) for c in close)}?" if close
                   else "declare it in a grammar (parsers/*.toml) or fix the rule")


def reference_problems(fname: str, sql: str, known: _Known) -> list[Problem]:
    """Pattern names, kinds and attrs keys that ``sql`` compares against literals, checked
    against what the grammars produce. ``kind`` is resolved through the FROM/JOIN aliases:
    events, errors and lines kinds each have their own vocabulary."""
    text = _strip_comments(sql)
    owner = _scopes(text)
    defs = _aliases(text, owner)
    problems: list[Problem] = []
    for regex, is_list in ((_EQ, False), (_IN, True)):
        for m in regex.finditer(text):
            qual, column, payload = (m.group(1) or "").lower(), m.group(2).lower(), m.group(3)
            values = _STRING.findall(payload) if is_list else [payload]
            where = f"{fname} line {_line_of(text, m.start())}"
            for value in values:
                p = _check_value(column, value, _table_at(defs, owner, qual, m.start()), known, where)
                if p:
                    problems.append(p)
    for m in _ATTR.finditer(text):
        key = m.group(1) or m.group(2)
        if key and key not in known.attrs:
            problems.append(_unknown("attrs key", key, known.attrs, f"{fname} line {_line_of(text, m.start())}"))
    return problems


def _check_value(column, value, table, known: _Known, where) -> Problem | None:
    if column == "pattern":
        return None if value in known.patterns else _unknown("pattern", value, known.patterns, where)
    if table in _EVENT_TABLES:
        if value not in known.events:
            return _unknown("event kind", value, known.events, where)
        if table != "events" and (value in known.bulk_events) != (table == "events_bulk"):
            store = "events_bulk" if value in known.bulk_events else "events_other"
            return Problem(where, f"event kind '{value}' is stored in {store}, not in {table}",
                           hint=f"read {store} (or the events view) for it")
        return None
    if table == "errors":
        return None if value in known.errors else _unknown("error kind", value, known.errors, where)
    if table in _LINE_TABLES:
        return None if value in LINE_KINDS else Problem(where, f"lines.kind '{value}' is not one of {list(LINE_KINDS)}")
    if table == "?":
        return None
    if table is None:  # alias not found: any vocabulary will do
        every = known.events | known.errors | set(LINE_KINDS) | known.patterns
        return None if value in every else _unknown("kind", value, every, where)
    return None  # the kind column of a table grammars do not fill (env_reports, metrics ...)


def _requires_problems(con, fname: str, requires: list[str], known: _Known) -> list[Problem]:
    """A rule's ``requires`` items bind against the schema, and the values an item asks for
    (``events_other.kind=preemption``) are ones the grammars produce: a misspelt kind there
    would keep the rule silent on every database."""
    from .rules import requirement_parts, requirement_sql

    problems = []
    for req in requires:
        problems += [Problem(fname, f"requires {req}: {p.what.split(': ', 1)[-1]}")
                     for p in _sql_problems(con, fname, "SELECT " + requirement_sql(req), {})]
        table, column, values = requirement_parts(req)
        for value in values:
            p = _check_value(column, value, table, known, f"{fname} requires {req}")
            if p:
                problems.append(p)
    return problems


def _sql_problems(con, fname: str, sql: str, params: dict) -> list[Problem]:
    """Tables and columns: the statement must bind against the real schema (EXPLAIN)."""
    try:
        con.execute("EXPLAIN " + sql, params or None).fetchall()
        return []
    except Exception as exc:  # duckdb.Error subclasses
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [Problem(fname, f"SQL does not bind against the schema: {first}")]


def _schema_connection(problems: list[Problem]):
    """An empty in-memory database with the schema's tables and the shipped views; a view
    that does not create is a problem of its file (the tables and columns it names)."""
    import duckdb

    from ..db.schema import create_statements

    con = duckdb.connect(":memory:")
    for stmt in create_statements():
        con.execute(stmt)
    views = sorted((data_path("queries") / "views").glob("*.sql"))
    for f in views:
        body = "\n".join(ln for ln in f.read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("--"))
        try:
            con.execute(f"CREATE OR REPLACE VIEW {f.stem} AS\n{body.rstrip().rstrip(';')}")
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            problems.append(Problem(f.name, f"view does not create against the schema: {first}"))
    return con, views


#: read-side queries of the library (derivation, app queries): their kind and pattern
#: literals are checked too (they take parameters, so they are not planned here)
_LIBRARY_QUERY_DIRS = ("queries/derive", "queries/app")


def library_query_problems(grammars: list[Grammar]) -> tuple[list[Problem], int]:
    known = _Known.of(grammars)
    problems: list[Problem] = []
    n = 0
    for folder in _LIBRARY_QUERY_DIRS:
        for f in sorted(data_path(folder).glob("*.sql")):
            n += 1
            problems += reference_problems(f"{folder}/{f.name}", f.read_text(encoding="utf-8"), known)
    return problems, n


def rule_and_view_problems(grammars: list[Grammar], rules_dirs=()) -> tuple[list[Problem], int, int]:
    from .rule_files import parse_rule, rule_dirs

    known = _Known.of(grammars)
    problems: list[Problem] = []
    con, views = _schema_connection(problems)
    n_rules = 0
    try:
        for d in rule_dirs(list(rules_dirs)):
            for f in sorted(d.glob("*.sql")):
                n_rules += 1
                try:
                    rule = parse_rule(f)
                except GrammarError as exc:
                    problems.append(Problem(f.name, str(exc).split(": ", 1)[-1]))
                    continue
                problems += reference_problems(f.name, f.read_text(encoding="utf-8"), known)
                problems += _sql_problems(con, f.name, rule.sql, rule.params)
                problems += _requires_problems(con, f.name, rule.requires, known)
        for f in views:
            problems += reference_problems(f.name, f.read_text(encoding="utf-8"), known)
    finally:
        con.close()
    return problems, n_rules, len(views)


# ------------------------------------------------------------------ entry points

def check_formats(files: list[str | Path] | None = None, *, grammar_dirs=(), rules_dirs=()) -> CheckSummary:
    """Everything ``logsleuth formats check`` verifies; raise one GrammarError with every problem."""
    given = [Path(f) for f in files or []]
    for p in given:
        if not p.exists():
            raise BadInputError(f"{p}: no such grammar file")
        if p.is_dir():
            raise BadInputError(f"{p}: is a folder (use --grammar-dir for a folder of grammars)")
    paths = grammar_files(extra_dirs=grammar_dirs)
    if given:  # a user grammar is checked together with the shipped ones it extends
        names = {p.name for p in given}
        paths = [p for p in paths if p.name not in names] + given
    problems: list[Problem] = []
    grammars = [g for g in (read_grammar_file(p, problems) for p in paths) if g]
    problems += cross_check(grammars)
    grammars.sort(key=lambda g: (g.order, g.name))
    attach_roles(grammars)
    problems += sample_problems(grammars)
    problems += kind_problems(grammars)
    ref_problems, n_rules, n_views = rule_and_view_problems(grammars, rules_dirs)
    problems += ref_problems
    lib_problems, n_queries = library_query_problems(grammars)
    problems += lib_problems
    raise_problems(problems)
    return CheckSummary(
        grammars=len(grammars), patterns=sum(len(g.patterns) for g in grammars),
        samples=sum(len(p.samples) for g in grammars for p in g.patterns),
        kinds=len(event_kinds(grammars)), rules=n_rules, views=n_views, queries=n_queries)
