"""Fleet questions over a dataset (or a database whose sources carry a host).

Contract: ``fleet_summary(con)`` returns a ``FleetSummary``: one row per host (engine and
version, model, GPU, attention backend, speculative method and acceptance, single-stream
and peak decode throughput, end states, findings by severity) and three kinds of flags,
each a list of plain dicts: ``outliers`` (a host at least ``min_drop`` below the median of
its peers on the same model and GPU), ``changes`` (what changed on a host between
consecutive days: version, model, backend, speculative method, configuration) and
``crash_clusters`` (one masked root cause on at least ``min_hosts`` hosts). Thresholds are
data (``queries/fleet/fleet.toml``) and can be overridden by keyword.
"""
from __future__ import annotations

import contextlib
import tomllib
from collections import Counter
from dataclasses import dataclass, field

from ..resources import data_path
from .hosts import probes, safe_host
from .sql import fleet_sql


#: configuration changes named in one change flag (the rest are counted; all are in ``changes``)
CHANGES_SHOWN = 6


def _short(value, width: int = 40) -> str:
    text = "unset" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class FleetSummary:
    hosts: list = field(default_factory=list)
    outliers: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    crash_clusters: list = field(default_factory=list)
    thresholds: dict = field(default_factory=dict)

    def flags(self) -> list[dict]:
        """Every flag as one row: kind, host(s), what — the short list a person reads first."""
        out = [{"kind": "outlier", "hosts": o["host"],
                "what": f"{o['metric']} {o['value']} is {o['below_by']:.0%} below the median {o['peer_median']} "
                        f"of {o['n_peers']} hosts on {o['model']} / {o['gpu']}"} for o in self.outliers]
        by_day: dict = {}
        for c in self.changes:  # one flag per host and pair of days, naming what changed
            by_day.setdefault((c["host"], c["before_date"], c["after_date"]), []).append(c)
        for (host, before, after), items in by_day.items():
            named = "; ".join(f"{c['what']}: {_short(c['before'])} -> {_short(c['after'])}" for c in items[:CHANGES_SHOWN])
            more = f"; +{len(items) - CHANGES_SHOWN} more" if len(items) > CHANGES_SHOWN else ""
            out.append({"kind": "change", "hosts": host, "what": f"{before} -> {after}: {named}{more}"})
        out += [{"kind": "crash_cluster", "hosts": c["host_list"],
                 "what": f"{c['hosts']} hosts, {c['runs']} runs: {c['example']}"} for c in self.crash_clusters]
        return out

    def as_dict(self) -> dict:
        return {"hosts": self.hosts, "outliers": self.outliers, "changes": self.changes,
                "crash_clusters": self.crash_clusters, "thresholds": self.thresholds}


def thresholds(**overrides) -> dict:
    with open(data_path("queries/fleet/fleet.toml"), "rb") as fh:
        raw = tomllib.load(fh)
    flat = {k: v for section in raw.values() for k, v in section.items()}
    unknown = set(overrides) - set(flat)
    if unknown:
        raise ValueError(f"unknown fleet threshold(s): {', '.join(sorted(unknown))}")
    flat.update({k: v for k, v in overrides.items() if v is not None})
    return flat


def _rows(con, name: str, params: dict | None = None) -> list[dict]:
    cur = con.execute(fleet_sql(name), params or {})
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


@contextlib.contextmanager
def hosts_of_database(con):
    """For the length of the block, a database's ``sources`` carry the ``host`` and ``date``
    columns of a dataset's (a temporary view; the database is not written): the host its log
    names (the probes of parsers/hosts.toml, as a dataset ingest without ``--host`` names it),
    else ``unknown``. A dataset is left as it is."""
    if con.execute(fleet_sql("has_hosts")).fetchone()[0]:
        yield
        return
    hosts: dict = {}
    for _name, regex in probes():
        for sid, host in con.execute(fleet_sql("db_source_hosts"), {"re": regex}).fetchall():
            hosts.setdefault(sid, safe_host(host))
    catalog = '"' + con.execute("SELECT current_database()").fetchone()[0].replace('"', '""') + '"'
    con.execute("CREATE OR REPLACE TEMP TABLE _fleet_hosts (source_id INTEGER, host VARCHAR)")
    if hosts:
        con.executemany("INSERT INTO temp.main._fleet_hosts VALUES (?, ?)", list(hosts.items()))
    con.execute(fleet_sql("db_sources_view").replace("{catalog}", catalog))
    try:
        yield
    finally:
        con.execute("DROP VIEW IF EXISTS temp.main.sources")
        con.execute("DROP TABLE IF EXISTS temp.main._fleet_hosts")


def host_count(con) -> int:
    """Hosts the connection's sources come from: 0 for a database (it records no host)."""
    if not con.execute(fleet_sql("has_hosts")).fetchone()[0]:
        return 0
    return int(con.execute(fleet_sql("host_count")).fetchone()[0] or 0)


def fleet_summary(con, *, with_findings: bool = True, rules_dirs: list[str] | None = None,
                  findings: list | None = None, **overrides) -> FleetSummary:
    """``findings``: the diagnose findings of every run when the caller has them already
    (counted per host instead of running the rules again)."""
    t = thresholds(**overrides)
    summary = FleetSummary(thresholds=t)
    summary.hosts = _rows(con, "hosts")
    summary.outliers = _rows(con, "outliers", {"min_drop": t["min_drop"], "min_peers": t["min_peers"]})
    summary.changes = _rows(con, "changes", {"volatile_keys": t["volatile_keys"]})
    summary.crash_clusters = _rows(con, "crash_clusters", {"min_hosts": t["min_hosts"]})
    if with_findings:
        from ..analysis.rules import diagnose

        host_of = {r["run_id"]: r["host"] for r in _rows(con, "run_hosts")}
        found = findings if findings is not None else diagnose(con, extra_dirs=rules_dirs)
        counts = Counter((host_of.get(f.run_id), f.severity) for f in found)
        for h in summary.hosts:
            h["findings"] = {sev: n for (host, sev), n in sorted(counts.items()) if host == h["host"]}
    return summary
