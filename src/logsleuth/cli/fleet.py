"""`logsleuth fleet`: per-host summary and fleet flags over a Parquet dataset.

Contract: parses the options, opens the dataset named by ``--dataset`` (or ``--db``
pointing at a dataset folder), makes one library call (``fleet.fleet_summary``) and
renders it: a table per host, then the flags (outliers against peers, changes between
days, crash clusters); ``--format json|markdown`` for machines and issues. Registered on
the app with ``register(app)``.
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
        min_drop: Optional[float] = typer.Option(None, "--min-drop", help="Outlier margin below the peers' median (default 0.25)."),
        min_hosts: Optional[int] = typer.Option(None, "--min-hosts", help="Hosts sharing a crash cause that make a cluster (default 3)."),
    ):
        """Summarise a fleet dataset per host and flag slow hosts, changes between days and crash clusters."""
        import polars as pl

        from .. import api
        from ..errors import UsageError
        from .context import state
        from .output import plain_json, write_frame

        if not state.db or not api.is_dataset(state.db):
            raise UsageError("fleet reads a dataset: give --dataset DIR (written by `logsleuth ingest --dataset DIR`)")
        con = api.open_dataset(state.db)
        try:
            summary = api.fleet_summary(con, with_findings=not no_findings, rules_dirs=rules_dir or None,
                                    min_drop=min_drop, min_hosts=min_hosts)
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
        hosts = [{**{k: v for k, v in h.items() if k != "findings"},
                  "findings": ", ".join(f"{n} {sev}" for sev, n in h.get("findings", {}).items())}
                 for h in summary.hosts]
        flags = summary.flags() or [{"kind": "none", "hosts": "", "what": "no outlier, change or crash cluster"}]
        out_fmt = "markdown" if fmt is FleetFormat.markdown else "table"
        write_frame(pl.DataFrame(hosts, infer_schema_length=None), out_fmt, title="hosts")
        sys.stdout.write("\n")
        write_frame(pl.DataFrame(flags), out_fmt, title="flags")
