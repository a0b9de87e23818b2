"""The plain text of a known-issue citation of a finding (diagnose table and markdown output).

Contract: ``citation_text(c)`` turns one citation dict (analysis/known_match.py) into one line:
the entry, its upstream issues/PRs, what upstream did, the run's version against the affected
and fixed versions, the workaround, and the match's confidence with the conditions checked and
those the run did not show. JSON output carries the dicts themselves.
"""
from __future__ import annotations


def citation_text(c: dict) -> str:
    """'vllm#37113, vllm#13719 — upstream keeps this behaviour (won't fix); run version ...'."""
    refs = ", ".join(c.get("upstream") or []) or c["id"]
    unknown = f"; not shown by the run: {', '.join(c['unknown'])}" if c.get("unknown") else ""
    return (f"known issue {c['id']} ({refs}): {c['status']}; {c['version']}. Workaround: {c['workaround']} "
            f"[confidence {c['confidence']}; checked: {', '.join(c.get('checked') or []) or 'engine only'}{unknown}]")
