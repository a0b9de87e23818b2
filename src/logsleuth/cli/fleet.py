"""`logsleuth fleet`: peer groups, per-host verdicts and fleet flags over a Parquet dataset.

Contract: parses the options, opens the dataset named by ``--dataset`` (or ``--db``
pointing at a dataset folder), makes one library call (``fleet.fleet_summary``) and
renders it (``fleet_view.write_fleet``: peer groups, hosts flagged first, flags with their
evidence, what was not compared, what is unknown); ``--format json`` carries everything,
``markdown`` is for issues. Registered on the app with ``register(app)``.
"""
from __future__ import annotations

import enum
import json
import sys
from typing import List, Optional

import typer


class FleetFormat(str, enum.Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    markdown = "markdown"


def register(app: typer.Typer) -> None:
    @app.command("fleet")
    def fleet_cmd(
        fmt: FleetFormat = typer.Option(FleetFormat.table, "--format", help="Output format."),
        no_findings: bool = typer.Option(False, "--no-findings", help="Skip the rules (faster)."),
        rules_dir: List[str] = typer.Option(None, "--rules-dir", help="Extra folder of rule .sql files."),
        min_drop: Optional[float] = typer.Option(None, "--min-drop", help="Slow: this far below the peers' median at the same load (default 0.25)."),
        min_hosts: Optional[int] = typer.Option(None, "--min-hosts", help="Hosts sharing a crash cause that make a cluster (default 3)."),
        min_peers: Optional[int] = typer.Option(None, "--min-peers", min=2,
                                                help="Hosts of a peer group at one load before a median means anything (default 3)."),
        max_hosts: int = typer.Option(40, "--max-hosts", min=0,
                                      help="Unflagged hosts listed after the flagged ones (0: all; JSON has all)."),
    ):
        """Compare each host with its peers (same configuration) at the same load; flag slow hosts,
        traffic anomalies, changes between days and crash clusters; say what is unknown."""
        from .. import api
        from ..errors import UsageError
        from .context import state
        from .fleet_view import write_fleet
        from .output import plain_json

        if not state.db or not api.is_dataset(state.db):
            raise UsageError("fleet reads a dataset: give --dataset DIR (written by `logsleuth ingest --dataset DIR`)")
        con = api.open_dataset(state.db)
        try:
            summary = api.fleet_summary(con, with_findings=not no_findings, rules_dirs=rules_dir or None,
                                        min_drop=min_drop, min_hosts=min_hosts, min_peers=min_peers)
        finally:
            con.close()
        if fmt is FleetFormat.json:
            sys.stdout.write(plain_json(summary.as_dict(), indent=2) + "\n")
            return
        if fmt is FleetFormat.jsonl:  # one object a line: the hosts, then the flags
            from .output import write_jsonl

            doc = summary.as_dict()
            write_jsonl([{"record": "host", **h} for h in doc.get("hosts", [])]
                        + [{"record": "flag", **f} for f in summary.flags()], sys.stdout)
            return
        write_fleet(summary, fmt.value, max_hosts)
