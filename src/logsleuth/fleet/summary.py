"""Fleet questions over a dataset (or a database whose sources carry a host).

Contract: ``fleet_summary(con)`` returns a ``FleetSummary``:
* ``hosts``: one row per host (engine and version, model, GPU, attention backend, speculative
  method and acceptance, throughput figures, end states, findings by severity) with its peer
  group(s), how many peers it has, its peak running requests and its verdicts;
* ``groups``: the peer groups (``peers.py``: engine, model, GPU and the settings of
  ``queries/fleet/fleet.toml`` [peers], read as ``compare`` reads them) with their hosts;
* ``outliers``: a host at least ``min_drop`` below its peers at the same load (``load.py``);
  ``bands``: every (host, group, band of running requests) with its verdict (ok, slow, not
  comparable, no peers);
* ``traffic``: hosts whose load is not what they were set up for (``traffic.py``), with evidence;
* ``changes`` (what changed on a host between consecutive days) and ``crash_clusters`` (one
  masked root cause on at least ``min_hosts`` hosts);
* ``unknowns``: the GPU, date or host the logs do not give, with how to give them (``unknowns.py``).
Thresholds are data (``queries/fleet/fleet.toml``) and can be overridden by keyword.
"""
from __future__ import annotations

import contextlib
import tomllib
from collections import Counter
from dataclasses import dataclass, field

from ..resources import data_path
from .evidence import attach_evidence
from .hosts import probes, safe_host
from .load import load_text, matched_load
from .peers import peer_groups
from .sql import fleet_sql
from .traffic import traffic_anomalies
from .unknowns import unknowns


#: configuration changes named in one change flag (the rest are counted; all are in ``changes``)
CHANGES_SHOWN = 6


def _short(value, width: int = 40) -> str:
    text = "unset" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _slow_text(o: dict) -> str:
    where = f"at {load_text(o['band'])}" if o.get("band") else o.get("metric", "")
    peers = f"{o.get('n_peers')} hosts" + (f" of group {o['group']}" if o.get("group") else "")
    lines = f", {o['compared_lines']} lines" if o.get("compared_lines") else ""
    return (f"{where} {o.get('value')} tok/s, {o.get('below_by', 0):.0%} below its peers' "
            f"{o.get('peer_median')} ({peers}{lines})")


@dataclass
class FleetSummary:
    hosts: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    outliers: list = field(default_factory=list)
    bands: list = field(default_factory=list)
    traffic: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    crash_clusters: list = field(default_factory=list)
    unknowns: list = field(default_factory=list)
    thresholds: dict = field(default_factory=dict)

    def flags(self) -> list[dict]:
        """Every flag as one row: kind, host(s), what — the short list a person reads first."""
        slow: dict[str, list] = {}
        for o in self.outliers:  # one flag per host, naming every band where it is slow
            slow.setdefault(o["host"], []).append(o)
        out = [{"kind": "outlier", "hosts": host, "what": "; ".join(_slow_text(o) for o in items)}
               for host, items in slow.items()]
        out += [{"kind": "traffic_anomaly", "hosts": a["host"], "what": a["what"]} for a in self.traffic]
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

    def not_compared(self) -> list[dict]:
        """The (host, band) pairs that could not be compared, with why: never a slow flag."""
        return [b for b in self.bands if b["verdict"] in ("not comparable", "no peers")]

    def as_dict(self) -> dict:
        return {"hosts": self.hosts, "groups": self.groups, "outliers": self.outliers, "bands": self.bands,
                "traffic": self.traffic, "changes": self.changes, "crash_clusters": self.crash_clusters,
                "unknowns": self.unknowns, "thresholds": self.thresholds}


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
    catalog = '"' + con.execute(fleet_sql("current_catalog")).fetchone()[0].replace('"', '""') + '"'
    con.execute(fleet_sql("db_hosts_table"))
    if hosts:
        con.executemany(fleet_sql("db_hosts_insert"), list(hosts.items()))
    con.execute(fleet_sql("db_sources_view").replace("{catalog}", catalog))
    try:
        yield
    finally:
        con.execute(fleet_sql("db_hosts_drop"))


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
    runs, groups = peer_groups(con, t)
    by_id = {g.group: g for g in groups}
    summary.groups = [g.as_dict() for g in groups]
    summary.outliers, summary.bands = matched_load(con, runs, by_id, t)
    summary.traffic = traffic_anomalies(con, runs, t)
    attach_evidence(con, summary.outliers + summary.traffic + summary.bands)
    summary.changes = _rows(con, "changes", {"volatile_keys": t["volatile_keys"]})
    summary.crash_clusters = _rows(con, "crash_clusters", {"min_hosts": t["min_hosts"]})
    summary.unknowns = unknowns(runs)
    _host_verdicts(summary, runs, by_id)
    if with_findings:
        from ..analysis.rules import diagnose

        host_of = {r["run_id"]: r["host"] for r in _rows(con, "run_hosts")}
        found = findings if findings is not None else diagnose(con, extra_dirs=rules_dirs)
        counts = Counter((host_of.get(f.run_id), f.severity) for f in found)
        for h in summary.hosts:
            h["findings"] = {sev: n for (host, sev), n in sorted(counts.items()) if host == h["host"]}
    return summary


def _host_verdicts(summary: FleetSummary, runs: list[dict], groups_by_id: dict) -> None:
    """Each host row gains its peer groups, its number of peers, its peak running requests, the
    bands where it is slow or not comparable, its traffic anomaly and whether anything flags it."""
    groups: dict[str, set] = {}
    peak: dict[str, int] = {}
    for r in runs:
        groups.setdefault(r["host"], set()).add(r["group"])
        if r["peak_running"] is not None:
            peak[r["host"]] = max(peak.get(r["host"], 0), r["peak_running"])
    verdicts: dict[str, dict[str, list]] = {}
    for b in summary.bands:
        verdicts.setdefault(b["host"], {}).setdefault(b["verdict"], []).append(b["band"])
    traffic = {a["host"]: a["kind"] for a in summary.traffic}
    flagged = {h.strip() for f in summary.flags() for h in str(f["hosts"]).split(",")}
    for h in summary.hosts:
        name = h["host"]
        gids = sorted(groups.get(name, ()))
        h["groups"] = gids
        h["peers"] = max((len(groups_by_id[g].hosts) - 1 for g in gids), default=0)
        h["peak_running"] = peak.get(name)
        h["slow_at"] = verdicts.get(name, {}).get("slow", [])
        h["not_comparable_at"] = verdicts.get(name, {}).get("not comparable", []) + \
            verdicts.get(name, {}).get("no peers", [])
        h["traffic"] = traffic.get(name)
        h["flagged"] = name in flagged
