"""`logsleuth known-issues`: list the known upstream issues.

Contract: ``register(app)`` adds the command: filters (--engine, --gpu, --version,
--category), --known-issues-dir for the user's folders, --format table|csv|json|markdown;
results on stdout.
"""
from __future__ import annotations

from typing import List, Optional

import typer

from .output import Format

#: columns of the listing (table, csv, markdown); JSON carries every field
_COLUMNS = ("id", "engine", "category", "severity", "confidence", "title", "upstream", "status", "hardware",
            "versions", "workaround")
_TABLE = ("id", "engine", "category", "confidence", "title", "upstream", "status")


def register(app: typer.Typer) -> None:
    @app.command("known-issues")
    def known_issues_cmd(
        engine: Optional[str] = typer.Option(None, "--engine", help="sglang or vllm."),
        gpu: Optional[str] = typer.Option(None, "--gpu", help="An SM (SM120), a vendor (amd, nvidia) or a GPU name."),
        version: Optional[str] = typer.Option(None, "--version", help="Engine version: entries affecting it, "
                                                                      "not fixed in a release at or before it."),
        category: Optional[str] = typer.Option(None, "--category", help="blackwell, multi_gpu, startup_memory, ..."),
        known_dir: List[str] = typer.Option(None, "--known-issues-dir", metavar="DIR",
                                            help="Extra folder of known-issue .toml files (repeatable)."),
        fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    ):
        """List the known upstream issues (signature, hardware, versions, upstream links, fix, workaround)."""
        from .. import api
        from ..errors import UsageError

        if engine and engine.lower() not in ("sglang", "vllm"):
            raise UsageError(f"--engine {engine}: one of sglang, vllm")
        rows = api.known_issues(engine=engine, gpu=gpu, version=version, category=category,
                                extra_dirs=known_dir or None)
        _write(rows, fmt.value)


def _write(rows: list[dict], fmt: str) -> None:
    import sys

    from .output import plain_json, write_frame

    if fmt == "json":
        sys.stdout.write(plain_json(rows, indent=2) + "\n")
        return
    import polars as pl

    cols = _TABLE if fmt == "table" else _COLUMNS
    frame = pl.DataFrame({c: ["; ".join(r[c]) if isinstance(r[c], list) else r[c] for r in rows] for c in cols},
                         schema={c: pl.Utf8 for c in cols})
    write_frame(frame, fmt, title=f"{len(rows)} known issue(s)")
