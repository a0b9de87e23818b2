"""The rules reference (docs/rules.md), generated from the rule headers.

Contract: ``render_markdown(rules)`` returns the reference for ``rules`` (id, severity,
engine, title, fix texts per engine, parameters with their defaults, requirements and the
source of each threshold), grouped by severity then id; the text depends on the rule files
only, so a test can compare it with the checked-in file. ``python -m
logsleuth.analysis.rules_doc [OUT]`` writes it (default: docs/rules.md of the checkout).
"""
from __future__ import annotations

import sys
from pathlib import Path

from .rules import _ENGINE_NAMES, SEVERITIES, Rule, load_rules


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(rules: list[Rule]) -> str:
    out = [
        "# Diagnose rules",
        "",
        "Generated from the headers of `queries/rules/*.sql` by `python -m logsleuth.analysis.rules_doc`;",
        "do not edit by hand (a test checks it is up to date). The knowledge behind the thresholds,",
        "with its sources, is in [knowledge-base.md](knowledge-base.md). A fix text marked with an",
        "engine is shown only on that engine's runs.",
        "",
        "| rule | severity | engine | parameters |",
        "|---|---|---|---|",
    ]
    ordered = sorted(rules, key=lambda r: (SEVERITIES.index(r.severity), r.id))
    for r in ordered:
        params = ", ".join(f"`{k}={v}`" for k, v in r.params.items()) or "-"
        engine = _ENGINE_NAMES.get(r.engine, r.engine) if r.engine else "both"
        out.append(f"| [`{r.id}`](#{r.id}) | {r.severity} | {engine} | {params} |")
    for r in ordered:
        out += ["", f"## {r.id}", "", f"*{r.severity}*"
                + (f", {_ENGINE_NAMES.get(r.engine, r.engine)} runs only" if r.engine else "")
                + (f", {'/'.join(r.platforms)} platforms only" if r.platforms else "")
                + f" — `queries/rules/{Path(r.path).name}`", "", f"**Finding:** {r.title}", ""]
        if r.fix:
            out.append(f"**Fix:** {r.fix}")
            out.append("")
        for engine, text in r.fixes.items():
            out.append(f"**Fix ({_ENGINE_NAMES.get(engine, engine)}):** {text}")
            out.append("")
        if r.params:
            out.append("**Parameters** (override with `--set " + r.id + ".NAME=VALUE`): "
                       + ", ".join(f"`{k}` = {v}" for k, v in r.params.items()))
            out.append("")
        if r.requires:
            out.append("**Needs:** " + ", ".join(f"`{q}`" for q in r.requires)
                       + " (silent, with the reason under `--verbose`, when the database has none)")
            out.append("")
        if r.source:
            out.append(f"**Source:** {r.source}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path(__file__).resolve().parents[3] / "docs" / "rules.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_markdown(load_rules()), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
