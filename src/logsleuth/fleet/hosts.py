"""Naming the host of a source: ``--host``, a path pattern, or what the log itself says.

Contract: ``host_from_path(pattern, path)`` applies a ``--host-from`` pattern such as
``'{host}/*.log'`` or ``'logs/{host}-{date}.log'`` to the end of a path; ``host_from_log(con)``
runs the probes of ``parsers/hosts.toml`` over a freshly ingested source's lines.
``safe_host`` makes a name usable as a hive partition value.
"""
from __future__ import annotations

import re
import tomllib

from ..resources import data_path
from .sql import fleet_sql

UNKNOWN_HOST = "unknown"


def host_from_path(pattern: str, path: str) -> str | None:
    """The ``{host}`` part of ``path`` under ``pattern`` (matched against the path's end)."""
    if "{host}" not in pattern:
        raise ValueError(f"--host-from {pattern!r}: the pattern must contain {{host}}")
    out, i = [], 0
    for m in re.finditer(r"\{host\}|\{[a-z_]+\}|\*\*|\*|\?", pattern):
        out.append(re.escape(pattern[i:m.start()]))
        tok = m.group()
        out.append({"{host}": r"(?P<host>[^/]+?)", "**": r".*", "*": r"[^/]*", "?": r"[^/]"}.get(tok, r"[^/]+?"))
        i = m.end()
    out.append(re.escape(pattern[i:]))
    m = re.search(r"(?:^|/)" + "".join(out) + r"$", path.replace("\\", "/"))
    return m.group("host") if m else None


def probes() -> list[tuple[str, str]]:
    with open(data_path("parsers/hosts.toml"), "rb") as fh:
        return [(p["name"], p["regex"]) for p in tomllib.load(fh).get("probe", [])]


def host_from_log(con) -> str | None:
    """The first host a probe finds in the stored lines of the (only) source in ``con``."""
    # lines_other holds the few % of lines that are not periodic stats: NCCL and Ray lines live there
    for _name, regex in probes():
        row = con.execute(fleet_sql("host_probe"), {"re": regex}).fetchone()
        if row and row[0]:
            return row[0]
    return None


def safe_host(name: str) -> str:
    """A host name fit for a path segment ``host=NAME`` (no separators, no '=')."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip()).strip("._") or UNKNOWN_HOST
    return cleaned[:128]
