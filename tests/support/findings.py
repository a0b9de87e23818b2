"""An ingested database with its diagnose findings, addressed by file name and launch ordinal.

The rule tests ask "which findings of rule R are on the run of file F, launch N", so runs are keyed by
(source file name, ordinal) rather than by run id (which depends on ingest order)."""
from __future__ import annotations

from collections.abc import Iterable


class Findings:
    """Every finding of every rule on one database (``rule_ids`` narrows the diagnosis)."""

    def __init__(self, con, rule_ids: list[str] | None = None):
        import logsleuth

        self.con = con
        self.findings = logsleuth.diagnose(con, rule_ids=rule_ids)
        self.runs = {(name, ordinal): run_id for run_id, name, ordinal in con.execute(
            "SELECT r.run_id, s.name, r.ordinal FROM runs r JOIN sources s USING (source_id)").fetchall()}
        self.by_run = {rid: key for key, rid in self.runs.items()}

    def run(self, name: str, ordinal: int = 1) -> int:
        return self.runs[(name, ordinal)]

    def of(self, rule: str, name: str | None = None, ordinal: int | None = None) -> list:
        """Findings of ``rule``, on the runs of file ``name`` (launch ``ordinal``) when given."""
        out = [f for f in self.findings if f.rule_id == rule]
        if name is not None:
            ids = {rid for (n, o), rid in self.runs.items() if n == name and (ordinal is None or o == ordinal)}
            out = [f for f in out if f.run_id in ids]
        return out

    def one(self, rule: str, name: str, ordinal: int = 1):
        """The single finding of ``rule`` on launch ``ordinal`` of file ``name``."""
        found = self.of(rule, name, ordinal)
        assert len(found) == 1, (rule, name, ordinal, [f.title for f in self.findings if f.rule_id == rule])
        return found[0]

    def keys(self, names: Iterable[str] | None = None, rules: Iterable[str] | None = None) -> set:
        """{(rule, file, ordinal, severity)} of the findings on files ``names`` for ``rules`` (default all)."""
        names = None if names is None else set(names)
        rules = None if rules is None else set(rules)
        return {(f.rule_id, *self.by_run[f.run_id], f.severity) for f in self.findings
                if (names is None or self.by_run[f.run_id][0] in names) and (rules is None or f.rule_id in rules)}

    def rules_by_file(self, rules: Iterable[str] | None = None) -> dict[str, set]:
        """{file name: {rule ids that fire on it}}, for ``rules`` (default all)."""
        rules = None if rules is None else set(rules)
        out: dict[str, set] = {}
        for f in self.findings:
            if rules is None or f.rule_id in rules:
                out.setdefault(self.by_run[f.run_id][0], set()).add(f.rule_id)
        return out


def ingest_each(path: str, files: Iterable) -> Findings:
    """A new database at ``path`` holding ``files``, one ingest call per file (keeps run ids in this order)."""
    import logsleuth

    con = logsleuth.open_db(path)
    for p in files:
        logsleuth.ingest_files(con, [str(p)])
    return Findings(con)
