"""`logsleuth scrape URL...`: poll live Prometheus endpoints into the database.

Contract: parses the options, opens the database, makes one library call
(``telemetry.scrape.scrape``) and prints a summary on stderr. An unreachable or
non-Prometheus endpoint at the start is one ``Error:`` line and exit 3 with nothing
stored; an endpoint that goes away later keeps its stored snapshots and also ends with
exit 3, naming it. Ctrl-C ends the scrape normally (exit 0). Registered on the app with
``register(app)``.
"""
from __future__ import annotations

import sys
from typing import List, Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("scrape")
    def scrape_cmd(
        urls: List[str] = typer.Argument(..., help="Endpoints, e.g. http://localhost:8000/metrics (path defaults to /metrics)."),
        interval: float = typer.Option(5.0, "--interval", help="Seconds between polls."),
        duration: Optional[float] = typer.Option(None, "--duration", help="Seconds to scrape (default: until Ctrl-C)."),
        nvidia_smi: bool = typer.Option(False, "--nvidia-smi", help="Also sample the local GPUs with nvidia-smi --query-gpu."),
        label: Optional[str] = typer.Option(None, "--label", help="Label for the sources stored."),
        run: Optional[int] = typer.Option(None, "--run", help="Attach the scrape to this run (see `logsleuth runs`)."),
        max_bytes: int = typer.Option(64 << 20, "--max-bytes", metavar="BYTES",
                                      help="Refuse a response larger than this (after gzip decoding)."),
    ):
        """Poll /metrics (and optionally nvidia-smi) every --interval, storing snapshots as they come."""
        from ..errors import BadInputError
        from ..telemetry.scrape import scrape
        from .context import open_database as _db

        con = _db()
        try:
            def progress(res) -> None:
                if sys.stderr.isatty():
                    done = ", ".join(f"{e.url}: {e.snapshots}" for e in res.endpoints)
                    sys.stderr.write(f"\rsnapshots {done}" + (f"; GPU samples {res.gpu_samples}" if res.gpu_samples else ""))
                    sys.stderr.flush()

            result = scrape(con, urls, interval_s=interval, duration_s=duration, nvidia_smi=nvidia_smi, label=label,
                            run=run, on_poll=progress, max_bytes=max_bytes)
        finally:
            con.close()
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        for ep in result.endpoints:
            sys.stderr.write(f"{ep.url}: {ep.snapshots} snapshot(s), {ep.lines} line(s) stored as source {ep.source_id}\n")
        if result.gpu_source_id:
            sys.stderr.write(f"nvidia-smi: {result.gpu_samples} GPU sample(s) stored as source {result.gpu_source_id}\n")
        for note in result.notes:
            sys.stderr.write(note + "\n")
        if result.lost:
            url, n, why = result.lost[0]
            more = f" (and {len(result.lost) - 1} more)" if len(result.lost) > 1 else ""
            raise BadInputError(f"{why}; went away after {n} snapshot(s), which are kept{more}")
