"""Match known upstream issues to runs and turn the matches into citations.

Contract: ``consider(con, issues, skip_patterns, run_ids)`` runs ``queries/known/match.sql``
once (set-based: one regex pass over the runs' lines, conditions as rows) and returns a
``Consideration`` per (entry, run) whose signature the run shows, with each condition's state
(agrees | contradicts | unknown) and the verdict: a match needs no contradicted condition, every
``required`` condition known, and, for an entry with ``specific = false``, every condition
known and no ``unchecked`` one. A match's confidence is the entry's, one step lower when a
condition is unknown. ``cite(con, findings, ...)`` attaches a citation to the findings of the
rules an entry names (same run) and returns the known-issue findings of their own for the
other matches; ``silent`` (diagnose --verbose) gets what was considered and why it did not match.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import QueryError
from ..resources import data_path
from .known_issues import KnownIssue, load_catalog
from .severity import SEV_RANK

_LOWER = {"high": "medium", "medium": "low", "low": "low"}
_WHEN_KEYS = ("gpu_sm", "gpu_vendor", "gpu_name", "interconnect", "version_min", "version_max", "built_before",
              "min_tp", "max_tp", "min_ep", "spec", "spec_method", "draft_model", "attention_backend", "cuda_graph",
              "model", "end_state")
_SIG_KEYS = ("regex", "also", "also_within", "also_anywhere", "metric", "value_min", "value_max", "min_lines")


@dataclass
class Consideration:
    issue: KnownIssue
    run_id: int
    line_no: int | None
    n_lines: int
    conditions: list = field(default_factory=list)  # [{cond, want, seen, state}]

    def _states(self, state: str) -> list[dict]:
        return [c for c in self.conditions if c["state"] == state]

    def why_not(self) -> str | None:
        """Why this signature sighting is not a match (None: it is one)."""
        bad = self._states("contradicts")
        if bad:
            return "; ".join(f"{c['cond']} is {c['seen']}, the entry needs {c['want']}" for c in bad)
        unknown = [c["cond"] for c in self._states("unknown")]
        need = [c for c in self.issue.when.get("required", []) if c in unknown]
        if need:
            return f"{', '.join(need)} not shown by the run, and the entry needs it known"
        if not self.issue.specific:
            if unknown:
                return f"a generic line: needs every condition known, unknown: {', '.join(unknown)}"
            if self.issue.when.get("unchecked"):
                return "a generic line, and a condition no log shows: " + "; ".join(self.issue.when["unchecked"])
        return None

    @property
    def matched(self) -> bool:
        return self.why_not() is None

    def confidence(self) -> str:
        level = self.issue.confidence
        return _LOWER[level] if self._states("unknown") else level

    def citation(self, engine: str | None, version: str | None) -> dict:
        """What a finding says about this match (every output format carries this dict)."""
        i = self.issue
        checked = [f"{c['cond']}={c['seen']}" for c in self._states("agrees")]
        unknown = [c["cond"] for c in self._states("unknown")] + list(i.when.get("unchecked", []))
        return {"id": i.id, "title": i.title, "upstream": [r["label"] for r in i.upstream_refs()],
                "urls": [r["url"] for r in i.upstream_refs()], "status": i.fix_status(),
                "version": i.version_verdict(engine, version), "workaround": i.workaround,
                "confidence": self.confidence(), "entry_confidence": i.confidence,
                "checked": checked, "unknown": unknown, "line_no": self.line_no, "signature": i.signature.get("text")}


def _entry_json(issue: KnownIssue) -> dict:
    sig, when, up = issue.signature, issue.when, issue.upstream
    out = {"id": issue.id, "engines": issue.engines}
    out.update({k: sig.get(k) for k in _SIG_KEYS})
    out.update({f"w_{k}": when.get(k) for k in _WHEN_KEYS})
    out["w_fixed_in"] = up.get("fixed_in") if not up.get("fixed_component") else None
    out["w_config"] = [{"key": k, "re": v} for k, v in (when.get("config") or {}).items()] or None
    return out


_EMPTY_SIG = "SELECT NULL::VARCHAR AS id, NULL::INTEGER AS run_id, NULL::BIGINT AS line_no, NULL::DOUBLE AS value WHERE false"
_EMPTY_ALSO = "SELECT NULL::VARCHAR AS id, NULL::INTEGER AS run_id, NULL::BIGINT AS line_no WHERE false"


def _lit(text: str) -> str:
    """A SQL string constant (standard SQL strings: a quote doubles, backslashes are literal)."""
    return "'" + text.replace("'", "''") + "'"


def _sql(entries: list[KnownIssue]) -> str:
    """queries/known/match.sql with one SELECT per entry in place of its two '-- @' lines."""
    sigs, alsos = [], []
    for i in entries:
        rx, also = i.signature.get("regex"), i.signature.get("also")
        if rx:
            bounded = i.signature.get("value_min") is not None or i.signature.get("value_max") is not None
            value = f"TRY_CAST(regexp_extract(raw, {_lit(rx)}, 1) AS DOUBLE)" if bounded else "NULL::DOUBLE"
            sigs.append(f"SELECT {_lit(i.id)} AS id, run_id, line_no, {value} AS value FROM cand "
                        f"WHERE regexp_matches(raw, {_lit(rx)})")
        if rx and also:
            alsos.append(f"SELECT {_lit(i.id)} AS id, run_id, line_no FROM cand WHERE regexp_matches(raw, {_lit(also)})")
    text = data_path("queries/known/match.sql").read_text(encoding="utf-8")
    text = text.replace("-- @signatures", "\n    UNION ALL ".join(sigs) or _EMPTY_SIG)
    return text.replace("-- @also", "\n  UNION ALL ".join(alsos) or _EMPTY_ALSO)


def consider(con, issues: list[KnownIssue], skip_patterns: list[str], run_ids: list[int] | None) -> list[Consideration]:
    """Every (entry, run) whose signature the run shows, with its conditions checked."""
    entries = [i for i in issues if i.matchable]
    regexes = [rx for i in entries for rx in (i.signature.get("regex"), i.signature.get("also")) if rx]
    if not entries:
        return []
    params = {"entries": json.dumps([_entry_json(i) for i in entries]),
              "any_regex": "|".join(f"(?:{rx})" for rx in regexes) or "$^",
              "content_patterns": list(skip_patterns), "run_ids": run_ids}
    try:
        rows = con.execute(_sql(entries), params).fetchall()
    except Exception as exc:  # duckdb.Error: a user's regex RE2 refuses, or a database without the tables
        raise QueryError(f"known issues: matching failed: {str(exc).splitlines()[0]}") from None
    by_id = {i.id: i for i in entries}
    out: dict[tuple, Consideration] = {}
    for iid, run_id, line_no, n_lines, cond, want, seen, state in rows:
        c = out.get((iid, run_id))
        if c is None:
            c = out[(iid, run_id)] = Consideration(by_id[iid], run_id, line_no, n_lines)
        c.conditions.append({"cond": cond, "want": want, "seen": seen, "state": state})
    return list(out.values())


def cite(con, findings: list, *, finding_cls, run_info: dict, names: dict, run_ids: list[int] | None,
         min_severity: str = "info", silent: list | None = None, extra_dirs: list[str] | None = None,
         standalone: bool = True) -> list:
    """Attach citations to ``findings`` (in place) and return the known-issue findings of their own
    (``finding_cls`` objects: rules.Finding, passed in so that this module does not import rules)."""
    issues, skip = load_catalog(extra_dirs)
    seen = consider(con, issues, skip, run_ids)
    versions = dict(con.execute("SELECT run_id, engine_version FROM runs").fetchall()) if seen else {}
    by_run_rule: dict[tuple, list] = {}
    for f in findings:
        by_run_rule.setdefault((f.run_id, f.rule_id), []).append(f)
    own = []
    for c in seen:
        if not c.matched:
            if silent is not None:
                silent.append((f"known:{c.issue.id}", f"run {c.run_id}: line {c.line_no} shows its signature, "
                                                       f"not a match: {c.why_not()}"))
            continue
        engine = run_info.get(c.run_id, (None, None))[1]
        cit = c.citation(engine, versions.get(c.run_id))
        hosts = [f for r in c.issue.rules for f in by_run_rule.get((c.run_id, r), [])]
        for f in hosts:
            f.citations.append(cit)
        if hosts or not (standalone and c.issue.standalone):
            continue
        if SEV_RANK[c.issue.severity] > SEV_RANK[min_severity]:
            continue
        source_id = run_info.get(c.run_id, (None, None))[0]
        own.append(finding_cls(
            rule_id=f"known:{c.issue.id}", severity=c.issue.severity,
            title=f"Run {c.run_id}: known issue {', '.join(cit['upstream'][:3]) or c.issue.id}: {c.issue.title}",
            run_id=c.run_id, source=names.get(source_id), source_id=source_id, line_no=c.line_no, evidence=None,
            fix=c.issue.workaround,
            rule_source=f"parsers/known_issues.toml: {c.issue.id}" if "known_issues.toml" in c.issue.path else c.issue.path,
            values={"known_issue": c.issue.id, "confidence": cit["confidence"]}, citations=[cit]))
    if silent is not None:
        _summary(silent, issues, seen)
    return own


def _summary(silent: list, issues: list[KnownIssue], seen: list[Consideration]) -> None:
    """One line for the whole catalogue: entries checked, sighted, matched; entries never matched from logs."""
    matchable = [i for i in issues if i.matchable]
    sighted = {c.issue.id for c in seen}
    matched = {c.issue.id for c in seen if c.matched}
    silent.append(("known issues", f"{len(matchable)} entries checked against the runs' lines: "
                                   f"{len(sighted)} signature(s) seen, {len(matched)} matched"))
    for i in issues:
        if not i.matchable:
            silent.append((f"known:{i.id}", f"listed only, never matched from a log: {i.signature.get('why_not')}"))
