"""Diagnose: run the rules over the database and build findings.

Contract: ``diagnose(con, ...)`` runs every rule (read from files by ``rule_files.py``) and
returns ``Finding`` objects, most severe first; each result row must carry ``run_id`` and
``line_no`` and may carry ``severity`` (to escalate), ``evidence_lines`` (a list of more
line numbers) and any column used in the title. A rule's ``requires: table.column, ...``
makes it silent (saying why under ``--verbose``) when the database has no value for them;
``table.column=a|b`` needs a row whose column is one of the values, e.g.
``events_other.kind=preemption``: the cheap existence checks of every rule are one query,
and a rule whose events are absent is not planned at all. With a ``silent`` list, every
rule that produced no finding says why (requirement missing, no run of its engine, fired
only for other runs or below ``min_severity``, or its condition/thresholds not reached).
"""
from __future__ import annotations

import functools
import re
from decimal import Decimal
from dataclasses import dataclass, field
from pathlib import Path

from ..db.sandbox import read_only_cursor
from ..errors import QueryError, UsageError
from ..resources import data_path
from .deadlines import UNTRACKED, run_all
from .rule_files import (  # noqa: F401  (re-exported: the rule-file API callers know from here)
    _ENGINE_NAMES, _REQUIRE, ENGINES, Rule, apply_overrides, load_rules, parse_rule, rule_dirs, rule_timeout,
    validate_rules)
from .select_cache import SelectOnlyCache  # noqa: F401  (re-exported)
from .severity import SEV_RANK, SEVERITIES  # noqa: F401  (re-exported)


@dataclass
class Finding:
    rule_id: str
    severity: str
    title: str
    run_id: int | None
    source: str | None
    source_id: int | None
    line_no: int | None
    evidence: str | None
    fix: str
    rule_source: str = ""
    evidence_lines: list = field(default_factory=list)  # [{"line_no": n, "text": ...}]
    values: dict = field(default_factory=dict)
    citations: list = field(default_factory=list)  # known upstream issues (analysis/known_match.py)

    def as_dict(self) -> dict:
        return {
            "rule_id": self.rule_id, "severity": self.severity, "title": self.title,
            "run_id": self.run_id, "source": self.source, "line_no": self.line_no,
            "evidence": self.evidence, "fix": self.fix, "rule_source": self.rule_source,
            "evidence_lines": self.evidence_lines, "values": self.values, "citations": self.citations,
        }


@functools.lru_cache(maxsize=1)
def _view_names() -> frozenset:
    """The views shipped in queries/views/ (``events``, ``nccl_config``, ...)."""
    return frozenset(f.stem for f in (data_path("queries") / "views").glob("*.sql"))


def _deferred(req: str, views: frozenset) -> bool:
    """A requirement on a view other than ``events``/``lines`` (its rows are parsed from line
    text: whether it has one can take as long as the rule, ~0.1 s for nccl_config on a 2 GB log
    without NCCL lines) is checked by the rule's own worker, beside the other rules, not before
    them all."""
    table = requirement_parts(req)[0]
    return table in views and table not in ("events", "lines")


def _runnable(con, rules: list[Rule], run_info: dict, run_ids, silent) -> list[Rule]:
    """The rules whose requirements (but those on views: ``_deferred``) and engine are present;
    ``silent`` (if a list) gets the others with why."""
    views = _view_names()
    seen = _check_requirements(con, rules, views)
    out = []
    for rule in rules:
        why = _missing_requirements(con, rule, seen, views) or _no_runs_of_engine(rule, run_info, run_ids)
        if why and silent is not None:
            silent.append((rule.id, why))
        if not why:
            out.append(rule)
    return out


def _missing_requirements(con, rule: Rule, seen: dict | None = None, views: frozenset = frozenset()) -> str | None:
    """Why ``rule`` cannot apply (a required table, view or column without a value), or None;
    ``seen`` keeps each requirement's answer for the other rules of the same call; requirements
    ``_deferred`` on ``views`` are left to the rule's worker."""
    seen = {} if seen is None else seen
    for req in rule.requires:
        if _deferred(req, views):
            continue
        if req not in seen:
            seen[req] = _requirement_missing(con, req)
        if seen[req]:
            return seen[req]
    return None


#: a ``requires`` item: table, table.column (a value) or table.column=v1|v2 (one of these values)


def requirement_parts(req: str) -> tuple[str, str, list[str]]:
    """(table, column or "", values or []) of a ``requires`` item."""
    target, _, values = req.partition("=")
    table, _, column = target.partition(".")
    return table, column, values.split("|") if values else []


def requirement_sql(req: str) -> str:
    # EXISTS: the first row answers (a requirement may be a view that parses log lines)
    table, column, values = requirement_parts(req)
    where = f' WHERE "{column}" IS NOT NULL' if column else ""
    if values:  # (checked by _REQUIRE: word characters, dots and dashes only)
        where = f' WHERE "{column}" IN (' + ", ".join(f"'{v}'" for v in values) + ")"
    return f"EXISTS (SELECT 1 FROM {table}{where})"


def _requirement_missing(con, req: str) -> str | None:
    try:
        present = con.execute(f"SELECT {requirement_sql(req)}").fetchall()[0][0]
    except Exception:
        return f"needs {req}, which this database does not have"
    return None if present else f"needs {req}, and no run has it"


def _check_requirements(con, rules: list[Rule], views: frozenset = frozenset()) -> dict:
    """requirement -> why it is missing (None: present), for every requirement of ``rules``
    but those ``_deferred`` on ``views``, asked in one query (one planning, one round trip:
    ~30 % less than one query each); one by one when that query fails (a table or column this
    database does not have)."""
    reqs = list(dict.fromkeys(req for r in rules for req in r.requires if not _deferred(req, views)))
    if not reqs:
        return {}
    try:
        row = con.execute("SELECT " + ", ".join(requirement_sql(req) for req in reqs)).fetchall()[0]
    except Exception:
        return {req: _requirement_missing(con, req) for req in reqs}
    return {req: None if present else f"needs {req}, and no run has it" for req, present in zip(reqs, row)}


def _fill(template: str, values: dict) -> str:
    def rep(m):
        v = values.get(m.group(1))
        if v is None:
            return "?"
        if isinstance(v, float):
            return f"{v:,.2f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:,.0f}"
        if isinstance(v, (list, tuple)):
            return ", ".join(str(x) for x in v)
        return str(v)
    return re.sub(r"\{([A-Za-z_]\w*)\}", rep, template)


def diagnose(con, *, run_ids: list[int] | None = None, rule_ids: list[str] | None = None,
             min_severity: str = "info", extra_dirs: list[str] | None = None, sets: list[str] | None = None,
             silent: list | None = None, known_dirs: list[str] | None = None,
             known_issues: bool = True, known_notes: list | None = None) -> list[Finding]:
    """Run the rules; ``silent`` (if a list) collects (rule_id, reason) for rules that could not apply.
    Known upstream issues (``known_dirs``: extra folders) cite on the findings and add their own;
    ``known_notes`` (if a list) gets (entry, why) for those considered that did not match."""
    if min_severity not in SEV_RANK:
        raise UsageError(f"--min-severity {min_severity}: one of {', '.join(SEVERITIES)}")
    rules = _chosen_rules(extra_dirs, sets, rule_ids)
    findings: list[Finding] = []
    names = dict(con.execute("SELECT source_id, name FROM sources").fetchall())
    run_info = {r[0]: (r[1], r[2]) for r in con.execute("SELECT run_id, source_id, engine FROM runs").fetchall()}
    platforms = _run_platforms(con)
    runnable = _runnable(con, rules, run_info, run_ids, silent)
    for rule, (columns, result) in zip(runnable, _run_all(con, runnable)):
        if columns is None:  # a requirement on a view, checked by the rule's worker, is absent
            if silent is not None:
                silent.append((rule.id, result))
            continue
        for col in ("run_id", "line_no"):
            if columns and col not in columns:
                raise QueryError(f"rule {rule.id}: result lacks the column '{col}'")
        other_runs = below = 0
        elsewhere = _other_platform_runs(rule, result, platforms)
        for row in result:
            run_id = row.get("run_id")
            if run_ids is not None and run_id not in run_ids:
                other_runs += 1
                continue
            if run_id in elsewhere:
                continue
            sev = (row.get("severity") or rule.severity).lower()
            if sev not in SEV_RANK or SEV_RANK[sev] > SEV_RANK[min_severity]:
                below += 1
                continue
            source_id, engine = run_info.get(run_id, (None, None))
            source_id = row.get("source_id") or source_id
            values = {k: v for k, v in row.items() if k not in ("severity", "evidence_lines")}
            findings.append(Finding(
                rule_id=rule.id, severity=sev, title=_fill(rule.title, row), run_id=run_id,
                source=names.get(source_id), source_id=source_id, line_no=row.get("line_no"),
                evidence=None, fix=_fill(rule.fix_for(engine), row), rule_source=rule.source,
                evidence_lines=[{"line_no": n} for n in _more_lines(row)],
                values={k: _jsonable(v) for k, v in values.items()},
            ))
        if silent is not None and elsewhere:
            silent.append((rule.id, _other_platform(rule, elsewhere)))
        elif silent is not None and not (other_runs + below < len(result)):
            silent.append((rule.id, _why_no_finding(rule, len(result), other_runs, below, min_severity,
                                                    run_info, run_ids)))
    if known_issues:
        findings += _known(con, findings, run_info, names, run_ids, min_severity, known_notes, known_dirs, rule_ids)
    _attach_evidence(con, findings)
    findings.sort(key=lambda f: (f.run_id if f.run_id is not None else -1, SEV_RANK[f.severity], f.rule_id,
                                 f.line_no or 0))
    return findings


def _chosen_rules(extra_dirs, sets, rule_ids) -> list[Rule]:
    """The rules a diagnose runs: shipped and ``--rules-dir`` ones with ``--set`` applied, only
    those of ``--rule`` when given (an unknown id is a UsageError)."""
    rules = load_rules(extra_dirs)
    apply_overrides(rules, sets or [])
    if not rule_ids:
        return rules
    known = {r.id for r in rules}
    for rid in rule_ids:
        if rid not in known:
            raise UsageError(f"--rule {rid}: no such rule (see `logsleuth rules`)")
    return [r for r in rules if r.id in rule_ids]


def _known(con, findings, run_info, names, run_ids, min_severity, notes, dirs, rule_ids) -> list[Finding]:
    """Known upstream issues: citations on ``findings`` and findings of their own (none when
    only some rules were asked for)."""
    from .known_match import cite

    return cite(con, findings, finding_cls=Finding, run_info=run_info, names=names, run_ids=run_ids,
                min_severity=min_severity, silent=notes, extra_dirs=dirs, standalone=not rule_ids)


def _more_lines(row: dict) -> list[int]:
    """Further evidence lines of a row: each line once, never the finding's own line (it is
    quoted already), at most five."""
    seen = {row.get("line_no")}
    out = []
    for n in row.get("evidence_lines") or []:
        if n is not None and n not in seen:
            seen.add(n)
            out.append(n)
    return out[:5]


def _run_platforms(con) -> dict:
    """Run id -> its platform, for the runs whose log tells it (a database written before
    runs.platform existed tells none)."""
    try:
        return dict(con.execute("SELECT run_id, platform FROM runs WHERE platform IS NOT NULL").fetchall())
    except Exception:
        return {}


def _other_platform_runs(rule: Rule, result: list[dict], platforms: dict) -> dict:
    """Run id -> platform, for the result rows of runs on a platform ``rule`` does not apply to
    (a run whose platform is unknown is read)."""
    if not rule.platforms:
        return {}
    return {r.get("run_id"): platforms[r.get("run_id")] for r in result
            if platforms.get(r.get("run_id")) not in (None, *rule.platforms)}


def _other_platform(rule: Rule, elsewhere: dict) -> str:
    """Why findings of ``rule`` were left out: their runs are on a platform it does not apply to."""
    runs = ", ".join(f"run {rid} on {p}" for rid, p in sorted(elsewhere.items())[:5])
    return f"applies to {'/'.join(rule.platforms)} runs only: silent for {runs}"


def _engines_of(run_info: dict, run_ids) -> set:
    return {eng for rid, (_, eng) in run_info.items() if run_ids is None or rid in run_ids}


def _no_runs_of_engine(rule: Rule, run_info: dict, run_ids) -> str | None:
    if rule.engine and rule.engine not in _engines_of(run_info, run_ids):
        return f"applies to {_ENGINE_NAMES.get(rule.engine, rule.engine)} runs only, and none is diagnosed"
    return None


def _why_no_finding(rule: Rule, n_rows: int, other_runs: int, below: int, min_severity: str,
                    run_info: dict, run_ids) -> str:
    """Why a rule that ran produced no finding (diagnose --verbose)."""
    if n_rows and other_runs == n_rows:
        return f"fired for {other_runs} run(s) outside the selection only"
    if n_rows:
        return f"fired {below} time(s) below --min-severity {min_severity}"
    n_runs = len([r for r, (_, eng) in run_info.items() if (run_ids is None or r in run_ids)
                  and (not rule.engine or eng == rule.engine)])
    scope = f"{n_runs} {_ENGINE_NAMES.get(rule.engine, rule.engine) + ' ' if rule.engine else ''}run(s)"
    if rule.params:
        shown = ", ".join(f"{k}={v}" for k, v in rule.params.items())
        return f"checked {scope}: threshold not reached or condition absent ({shown})"
    return f"checked {scope}: the condition it looks for is absent"


_RULE_WORKERS = 4


def _run_one(con, rule: Rule, running=UNTRACKED) -> tuple[list[str], list[dict]]:
    """Column names and rows of one rule, as plain Python rows: findings are few, and
    diagnose then never imports polars/pyarrow (~0.45 s of a CLI call). ``running``
    (``deadlines.Running``) interrupts the rule at its deadline or on Ctrl-C."""
    # one cursor per rule: cursors of one database may run in parallel; each in a READ ONLY
    # transaction, so a rule cannot write whatever connection it is given
    try:
        with read_only_cursor(con) as cur, running.track(cur, rule.id, rule_timeout(rule)):
            for req in rule.requires:  # those left to the worker (None, why: the rule cannot apply)
                why = _requirement_missing(cur, req) if _deferred(req, _view_names()) else None
                if why:
                    return None, why
            cur.execute(rule.sql, rule.params or [])
            columns = [d[0] for d in cur.description] if cur.description else []
            return columns, ([dict(zip(columns, r)) for r in cur.fetchall()] if columns else [])
    except Exception as exc:
        if rule.id in running.timed_out:
            raise QueryError(f"rule {rule.id} ({Path(rule.path).name}) stopped after its timeout of "
                             f"{rule_timeout(rule):g} s", hint="'-- timeout: SECONDS' in its header sets it") from None
        raise QueryError(f"rule {rule.id} ({Path(rule.path).name}) failed: {str(exc).splitlines()[0]}") from None


def _run_all(con, rules: list[Rule]) -> list[tuple[list[str], list[dict]]]:
    """Results of ``rules`` in their order. Several at a time: most rules are small queries
    whose fixed costs (planning, Python round trips) overlap well; 48 rules over a 2 GB log
    took 1.76 s one by one and 1.28 s four at a time on 2 cores. Always on worker threads,
    watched by this one: deadlines and Ctrl-C stop them (``deadlines.py``)."""
    return run_all(rules, lambda r, running: _run_one(con, r, running), _RULE_WORKERS)


def _jsonable(v):
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        return round(v, 4)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def _attach_evidence(con, findings: list[Finding]) -> None:
    wanted = set()
    for f in findings:
        if f.source_id is not None and f.line_no is not None:
            wanted.add((f.source_id, f.line_no))
        for e in f.evidence_lines:
            wanted.add((f.source_id, e["line_no"]))
    if not wanted:
        return
    by_source: dict[int, set[int]] = {}
    for s, n in wanted:
        by_source.setdefault(int(s), set()).add(int(n))
    text = {}
    for s, nums in by_source.items():
        # Evidence is mostly milestone, error and config lines: first one scan of lines_other
        # (the small store of the `lines` view); then one equality lookup per line still
        # missing in lines_bulk (int literals: each is pushed into the scan, which then
        # decompresses only the vectors holding that line; an IN list there became a join
        # reading every raw line of the source). 27-35 lines of a 200 MB log: 27-60 ms
        # through the `lines` view, 10-18 ms so.
        rows = con.execute("SELECT line_no, raw FROM lines_other WHERE source_id = $s AND list_contains($n, line_no)",
                           {"s": int(s), "n": sorted(nums)}).fetchall()
        missing = sorted(nums - {n for n, _ in rows})
        if missing:
            lookups = " UNION ALL ".join(f"SELECT line_no, raw FROM lines_bulk WHERE source_id = $s AND line_no = {int(n)}"
                                         for n in missing)
            rows += con.execute(lookups, {"s": int(s)}).fetchall()
        text.update({(s, n): raw for n, raw in rows})
    for f in findings:
        f.evidence = (text.get((f.source_id, f.line_no)) or "")[:1000] or None
        for e in f.evidence_lines:
            e["text"] = (text.get((f.source_id, e["line_no"])) or "")[:1000]
