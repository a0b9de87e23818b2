"""`logsleuth formats export --lnav DIR`: lnav format files for the engines' logs.

Contract: parses the option, makes one library call (``api.export_lnav_formats``), prints the
files written on stdout (one path a line) and how to install them on stderr. A folder that
cannot be created is one ``Error:`` line and exit 3. Registered on the formats group with
``register(formats_app)``.
"""
from __future__ import annotations

import sys

import typer


def register(formats_app: typer.Typer) -> None:
    @formats_app.command("export")
    def formats_export(
        lnav: str = typer.Option(..., "--lnav", metavar="DIR",
                                 help="Folder to write the lnav format files into (created if missing)."),
    ):
        """Export the grammars as lnav formats (one JSON file per engine: timestamps, levels, ranks, typed stats)."""
        from .. import api
        from ..errors import BadInputError

        try:
            written = api.export_lnav_formats(lnav)
        except OSError as exc:
            raise BadInputError(f"cannot write lnav formats to {lnav}: {exc.strerror or exc}") from None
        for path in written:
            sys.stdout.write(f"{path}\n")
        sys.stderr.write("install with: " + " && ".join(f"lnav -i {p}" for p in written)
                         + "  (then: lnav server.log; docs/lnav.md has SQL examples)\n")
