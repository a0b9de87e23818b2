"""Rule files: ``queries/rules/*.sql`` (and user folders) read into ``Rule`` objects.

Contract: ``load_rules(dirs)`` reads the shipped rules and each ``--rules-dir`` (a user's rule
with the same id replaces the shipped one) and validates each header: ``id`` (= file stem,
snake_case), ``severity`` (critical | warning | info), ``title`` (``{placeholders}`` name
result columns), ``fix`` (and/or engine-specific ``fix.sglang`` / ``fix.vllm``: a finding
shows the common text plus the one for its run's engine, never the other engine's advice),
optional ``params: name=value, ...`` (bound as DuckDB ``$name``), ``source:`` (where the
threshold comes from), ``engine:``, ``timeout: SECONDS`` (a deadline; see ``rule_timeout``), ``platform: cuda, rocm`` (the runs.platform values the rule
applies to; runs of a platform the log does not tell are kept), ``advice: setting=raise|lower``
(which way the fix moves a setting, so opposite advice can be caught) and
``requires: table.column, ...`` (see ``rules.py``).
A broken file raises ``GrammarError`` naming it. The body must be exactly one SELECT
(``select_cache.py`` remembers which were). ``apply_overrides`` applies ``--set``;
``validate_rules`` plans every rule's SQL against a database.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..db.sandbox import select_only
from ..errors import GrammarError, UsageError
from ..resources import data_path
from .select_cache import SelectOnlyCache
from .severity import SEV_RANK, SEVERITIES

_HEADER = re.compile(r"^--\s*([a-z_]+(?:\.[a-z_]+)?)\s*:\s*(.*)$")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_REQUIRED = ("id", "severity", "title")
#: engines a fix text may be specific to (``-- fix.sglang:``), and the names a run's engine has
ENGINES = ("sglang", "vllm")
_ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM"}
#: a ``platform`` header item: a runs.platform name (derive/platform.py)
_PLATFORM = re.compile(r"^[a-z][a-z0-9_]*$")


_REQUIRE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*(?:=[\w.-]+(?:\|[\w.-]+)*)?)?")


@dataclass
class Rule:
    id: str
    severity: str
    title: str
    fix: str
    sql: str
    path: str
    params: dict = field(default_factory=dict)
    source: str = ""
    requires: list = field(default_factory=list)
    engine: str = ""
    fixes: dict = field(default_factory=dict)  # engine -> fix text for that engine's runs only
    platforms: list = field(default_factory=list)  # runs.platform values it applies to ([]: all)
    advice: dict = field(default_factory=dict)  # setting -> 'raise' | 'lower' (the fix's direction)
    timeout_s: float | None = None  # ``-- timeout:``; None: the default of its kind (rule_timeout)

    def fix_for(self, engine: str | None) -> str:
        """The fix text a run of ``engine`` is shown: the common text plus its engine's own;
        a run of no known engine (a benchmark file) sees every engine's text, labelled."""
        if engine in ENGINES:
            parts = [self.fix, self.fixes.get(engine, "")]
        else:
            parts = [self.fix] + [f"{_ENGINE_NAMES[e]}: {t}" for e, t in self.fixes.items()]
        return " ".join(p for p in parts if p)


def _parse_value(text: str):
    text = text.strip()
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text.strip("'\"")


def _split_header(text: str) -> tuple[dict[str, str], list[str]]:
    """The ``-- key: value`` header (a key given twice continues its value) and the SQL lines."""
    header: dict[str, str] = {}
    body_lines = []
    in_header = True
    for line in text.splitlines():
        m = _HEADER.match(line) if in_header else None
        if m:
            key, val = m.group(1), m.group(2).strip()
            header[key] = (header[key] + " " + val) if key in header else val
            continue
        if in_header and line.strip().startswith("--"):
            continue  # free comment inside the header
        if line.strip():
            in_header = False
        body_lines.append(line)
    return header, body_lines


def _parse_params(where: str, text: str) -> dict:
    """``name=value, ...`` of a ``-- params:`` header, values typed (int, float, bool, text)."""
    params = {}
    for item in text.split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise GrammarError(f"{where}: params item '{item.strip()}' is not name=value")
        k, v = item.split("=", 1)
        params[k.strip()] = _parse_value(v)
    return params


def parse_rule(path: Path, checked: "SelectOnlyCache | None" = None) -> Rule:  # noqa: C901 (one guard per header field, in file order)
    """The rule in ``path``, validated (a ``GrammarError`` naming the file otherwise);
    ``checked`` remembers SQL already found to be one SELECT (see ``SelectOnlyCache``)."""
    header, body_lines = _split_header(path.read_text(encoding="utf-8"))
    where = f"{path.name}"
    for key in _REQUIRED:
        if not header.get(key):
            raise GrammarError(f"{where}: rule header lacks '-- {key}: ...'",
                               hint="see queries/rules/README.md for the header format")
    fixes = {k.split(".", 1)[1]: v for k, v in header.items() if k.startswith("fix.")}
    for engine in fixes:
        if engine not in ENGINES:
            raise GrammarError(f"{where}: '-- fix.{engine}:' names no engine (one of {', '.join(ENGINES)})")
    if not header.get("fix") and not fixes:
        raise GrammarError(f"{where}: rule header lacks '-- fix: ...' (or '-- fix.sglang:' / '-- fix.vllm:')",
                           hint="see queries/rules/README.md for the header format")
    rid = header["id"]
    if not _ID.match(rid):
        raise GrammarError(f"{where}: rule id '{rid}' is not snake_case")
    if rid != path.stem:
        raise GrammarError(f"{where}: rule id '{rid}' differs from the file name '{path.stem}'")
    sev = header["severity"].lower()
    if sev not in SEVERITIES:
        raise GrammarError(f"{where}: severity '{sev}' is not one of {', '.join(SEVERITIES)}")
    params = _parse_params(where, header.get("params", ""))
    sql = "\n".join(body_lines).strip().rstrip(";")
    if not sql:
        raise GrammarError(f"{where}: rule has no SQL")
    for name in re.findall(r"\$([A-Za-z_]\w*)", sql):
        if name not in params:
            raise GrammarError(f"{where}: SQL uses ${name} but params does not declare it")
    # a rule reads: DELETE/DROP/COPY/ATTACH... never reach the database
    why = checked.select_only(sql) if checked is not None else select_only(sql)
    if why:
        raise GrammarError(f"{where}: a rule is one SELECT query: {why}")
    requires = [r.strip() for r in header.get("requires", "").split(",") if r.strip()]
    for req in requires:  # spliced into SQL by _missing_requirements: names and plain values only
        if not _REQUIRE.fullmatch(req):
            raise GrammarError(f"{where}: requires item '{req}' is not table, table.column or table.column=value|...")
    engine = header.get("engine", "")
    if engine and engine not in ENGINES:
        raise GrammarError(f"{where}: engine '{engine}' is not one of {', '.join(ENGINES)}")
    return Rule(id=rid, severity=sev, title=header["title"], fix=header.get("fix", ""), sql=sql, path=str(path),
                params=params, source=header.get("source", ""), requires=requires,
                engine=engine, fixes=fixes, platforms=_parse_platforms(where, header.get("platform", "")),
                advice=_parse_advice(where, header.get("advice", "")),
                timeout_s=_parse_timeout(where, header.get("timeout")))


#: how long a rule may run when its header names no ``timeout``: a user's rule is stopped
#: sooner than a shipped one (48 shipped rules take ~1.3 s together on a 2 GB log)
USER_RULE_TIMEOUT_S = 60.0
SHIPPED_RULE_TIMEOUT_S = 600.0


def _parse_timeout(where: str, text: str | None) -> float | None:
    """``-- timeout: 30`` or ``30s``: seconds above 0."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*s?\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise GrammarError(f"{where}: timeout '{text}' is not a number of seconds above 0 (e.g. 30 or 30s)")
    return float(m.group(1))


def rule_timeout(rule: Rule) -> float:
    """The rule's deadline in seconds: its header's, else the default of a shipped or a user's rule."""
    if rule.timeout_s is not None:
        return rule.timeout_s
    shipped = Path(rule.path).resolve().parent == (data_path("queries") / "rules").resolve()
    return SHIPPED_RULE_TIMEOUT_S if shipped else USER_RULE_TIMEOUT_S


def _parse_platforms(where: str, text: str) -> list[str]:
    """The platforms of a ``-- platform: cuda, rocm`` header (runs.platform names)."""
    out = [p.strip().lower() for p in text.split(",") if p.strip()]
    for p in out:
        if not _PLATFORM.match(p):
            raise GrammarError(f"{where}: platform '{p}' is not a platform name (cuda, rocm, mlx, cpu, ...)")
    return out


_ADVICE = re.compile(r"([a-z][a-z0-9_]*)\s*=\s*(raise|lower)")


def _parse_advice(where: str, text: str) -> dict[str, str]:
    """``setting=raise|lower, ...`` of an ``-- advice:`` header: the direction the fix moves each
    setting, so two rules that would move one setting both ways can be found (and kept apart)."""
    advice: dict[str, str] = {}
    for item in (i.strip() for i in text.split(",")):
        m = _ADVICE.fullmatch(item) if item else None
        if item and not m:
            raise GrammarError(f"{where}: advice item '{item}' is not setting=raise or setting=lower")
        if m:
            advice[m.group(1)] = m.group(2)
    return advice


def rule_dirs(extra: list[str] | None = None) -> list[Path]:
    dirs = [data_path("queries") / "rules"]
    for d in extra or []:
        p = Path(d)
        if not p.is_dir():
            raise UsageError(f"--rules-dir {d}: not a directory")
        dirs.append(p)
    return dirs


def load_rules(extra_dirs: list[str] | None = None) -> list[Rule]:
    rules: dict[str, Rule] = {}
    checked = SelectOnlyCache()
    for d in rule_dirs(extra_dirs):
        for f in sorted(d.glob("*.sql")):
            rule = parse_rule(f, checked)
            rules[rule.id] = rule  # a user's rule with the same id replaces the shipped one
    checked.save()
    return sorted(rules.values(), key=lambda r: (SEV_RANK[r.severity], r.id))


def validate_rules(con, rules: list[Rule]) -> None:
    """Check that every rule's SQL binds and plans (EXPLAIN), naming the file on error."""
    for r in rules:
        try:
            con.execute("EXPLAIN " + r.sql, r.params).fetchall()
        except Exception as exc:  # duckdb.Error subclasses
            raise GrammarError(f"{Path(r.path).name}: SQL does not run: {str(exc).splitlines()[0]}") from None


def apply_overrides(rules: list[Rule], sets: list[str]) -> None:
    by_id = {r.id: r for r in rules}
    for s in sets or []:
        m = re.match(r"^([a-z0-9_]+)\.([A-Za-z_]\w*)=(.*)$", s)
        if not m:
            raise UsageError(f"--set {s}: expected RULE.PARAM=VALUE")
        rid, param, value = m.groups()
        if rid not in by_id:
            raise UsageError(f"--set {s}: no rule '{rid}'")
        if param not in by_id[rid].params:
            raise UsageError(f"--set {s}: rule '{rid}' has no param '{param}' "
                             f"(has: {', '.join(by_id[rid].params) or 'none'})")
        by_id[rid].params[param] = _parse_value(value)
