"""Everything the HTML report shows, gathered from the database into one plain data object.

Contract: ``gather(con, selectors, *, with_findings, title, generated_at) -> ReportData``; this is
the only report module that touches the connection (html.py and svg.py render ``ReportData``).
``ReportData`` holds the comparison of the selected runs (``analysis.compare.CompareResult``) and,
per server run, a :class:`RunData`: its facts, decode samples (seconds since the first one, or the
sample number when the log has no timestamps), acceptance lengths, startup timeline, errors and
findings. The SQL is queries/app/report_*.sql. On a fleet dataset whose sources come from several
hosts, ``ReportData.fleet`` holds the ``fleet.summary.FleetSummary`` the ``fleet`` command prints
(per-host rows and the flags: outliers, changes after an upgrade, crash clusters).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable

from ..analysis.compare import CompareResult, compare
from ..analysis.timeline import startup_phases
from ..db import queries
from ..telemetry.loaders import overlay as telemetry_overlay, overlay_percent
from ..version import __version__
from .svg import DASHES, PALETTE

ERRORS_PER_RUN = 12


@dataclass
class RunData:
    run_id: int
    name: str
    color: str
    dash: str | None
    summary: dict
    decode: list  # dicts: t, running, queued, kv, gen
    spec: list  # (t, accept_len)
    timeline: dict | None
    errors: list
    findings: list
    has_time: bool = True
    # GPU utilisation, SM clock, power and decode throughput on one percent axis, seconds since the
    # run's first telemetry point: [(legend label, colour, [(t, %)])] (telemetry/loaders.py)
    telemetry: list = field(default_factory=list)


@dataclass
class ReportData:
    title: str
    generated_at: str
    version: str
    compare: CompareResult
    runs: list[RunData]  # the server runs, in column order
    fleet: object | None = None  # fleet.summary.FleetSummary: the data comes from several hosts


def gather(con, selectors: Iterable[str | int] | None = None, *, with_findings: bool = True,
           title: str | None = None, generated_at: str | None = None) -> ReportData:
    result = compare(con, selectors, findings=with_findings)
    return ReportData(title=title or "logsleuth report",
                      generated_at=generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                      version=__version__, compare=result, runs=load_runs(con, result),
                      fleet=load_fleet(con, result, with_findings, all_runs=not selectors))


def load_fleet(con, result: CompareResult, with_findings: bool, all_runs: bool):
    """The fleet page's data (every host, whichever runs the report selected), or None when the
    sources name fewer than two hosts (a database's hosts are those its logs name; logs that name
    none are no second host)."""
    from ..fleet.hosts import UNKNOWN_HOST
    from ..fleet.sql import fleet_sql
    from ..fleet.summary import fleet_summary, host_count, hosts_of_database

    with hosts_of_database(con):
        if host_count(con) < 2 or con.execute(fleet_sql("named_host_count"), {"unknown": UNKNOWN_HOST}).fetchone()[0] < 2:
            return None
        # the rules already ran for the report when it covers every run: count those findings
        return fleet_summary(con, with_findings=with_findings,
                             findings=result.findings if with_findings and all_runs else None)


def load_runs(con, result: CompareResult) -> list[RunData]:
    """A RunData per server column of ``result``, coloured in column order."""
    cols = [c for c in result.columns if c.kind == "server"]
    ids = [c.run_id for c in cols]
    if not ids:
        return []
    facts = {r["run_id"]: r for r in queries.rows(con, "report_run_facts", {"run_ids": ids})}
    decode = _by_run(queries.rows(con, "report_decode", {"run_ids": ids}))
    spec = _by_run(queries.rows(con, "report_spec", {"run_ids": ids}))
    errors = _by_run(queries.rows(con, "report_errors", {"run_ids": ids, "limit": ERRORS_PER_RUN}))
    timelines = startup_phases(con, ids)
    overlay = telemetry_overlay(con, ids)
    out = []
    for i, c in enumerate(cols):
        samples, accept, has_time = _time_series(decode.get(c.run_id, []), spec.get(c.run_id))
        out.append(RunData(run_id=c.run_id, name=c.name, color=PALETTE[i % len(PALETTE)],
                           dash=DASHES[(i // len(PALETTE)) % len(DASHES)],
                           summary=facts.get(c.run_id, {}), decode=samples, spec=accept,
                           timeline=timelines.get(c.run_id), errors=errors.get(c.run_id, []),
                           findings=[f for f in result.findings if getattr(f, "run_id", None) in c.run_ids],
                           has_time=has_time, telemetry=overlay_percent(overlay.get(c.run_id, {}))))
    return out


def _by_run(rows: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in rows:
        out.setdefault(r["run_id"], []).append(r)
    return out


def _time_series(rows: list[dict], spec: list[dict] | None) -> tuple[list[dict], list[tuple], bool]:
    """(decode samples, acceptance lengths, has_time). Time counts seconds from the first decode
    sample so runs from different days overlay; a log without timestamps counts samples instead.
    Acceptance lengths come from the spec lines, else from the decode lines that carry one."""
    t0 = next((r["ts"] for r in rows if r["ts"] is not None), None)
    has_time = t0 is not None or not rows
    decode = []
    for k, r in enumerate(rows):
        t = (r["ts"] - t0).total_seconds() if has_time and r["ts"] is not None else (None if has_time else k)
        decode.append({"t": t, "running": r["running_reqs"], "queued": r["queued_reqs"], "kv": r["kv_usage"],
                       "gen": r["gen_tok_s"]})
    sp = spec or [r for r in rows if r["accept_len"] is not None]
    if has_time:
        accept = [((r["ts"] - t0).total_seconds(), r["accept_len"]) for r in sp if r["ts"] is not None]
    else:
        accept = [(k, r["accept_len"]) for k, r in enumerate(sp)]
    return decode, accept, has_time
