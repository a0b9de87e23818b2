"""How `logsleuth fleet` shows a ``FleetSummary`` to a person (table or Markdown).

Contract: ``write_fleet(summary, fmt, max_hosts, out)`` writes, in order: one line saying what
was compared; the peer groups (configuration, hosts, how many flagged, the loads held); the
hosts, flagged ones first, then by group, names cropped to ``HOST_WIDTH`` (``crop``; at most ``max_hosts``
unflagged hosts, 0: all; a line says how many were left out); the flags with their evidence
lines; what could not be compared and why (counted per reason, a few hosts named); what is
unknown and how to give it. The JSON output (``summary.as_dict()``) carries everything this
leaves out. Log text passes through ``inert`` (a log line may hold terminal escapes).
"""
from __future__ import annotations

import sys

import polars as pl

from ..inert import inert
from .output import write_frame

HOST_WIDTH = 28
NAMED = 6  # hosts named in one line of the "not compared" and "unknown" sections


def crop(name: str, width: int = HOST_WIDTH) -> str:
    """A long host name shortened: first its domain dropped (node-0017.dc1.example.com reads as
    node-0017…), then its middle cut out, since the ends tell hosts apart (rack-07-…-node-0017)."""
    if len(name) <= width:
        return name
    short, dot, _domain = name.partition(".")
    if dot and short and not short.isdigit():  # an IP address keeps its dots
        name = short + "…"
        if len(name) <= width:
            return name
    keep = width - 1
    return name[: keep - keep // 2] + "…" + name[len(name) - keep // 2:]


def _named(hosts: list[str]) -> str:
    shown = ", ".join(crop(h) for h in hosts[:NAMED])
    return shown + (f" and {len(hosts) - NAMED} more" if len(hosts) > NAMED else "")


def _groups_frame(summary) -> pl.DataFrame:
    flagged = {h["host"] for h in summary.hosts if h.get("flagged")}
    held: dict[int, set] = {}
    for b in summary.bands:
        held.setdefault(b["group"], set()).add(b["band"])
    order = {label: i for i, label in enumerate(["1", "2-4", "5-16", "17-64", "65-256", ">256"])}
    rows = [{"group": g["group"], "hosts": g["n_hosts"], "flagged": len(flagged & set(g["hosts"])),
             "configuration": g["label"],
             "loads held (running requests)": ", ".join(sorted(held.get(g["group"], ()), key=lambda b: order.get(b, 9)))}
            for g in summary.groups]
    return pl.DataFrame(rows, infer_schema_length=None)


def _host_row(h: dict) -> dict:
    return {"host": crop(h["host"]), "group": ", ".join(map(str, h.get("groups", []))) or "-",
            "peers": h.get("peers", 0), "runs": h.get("runs"), "peak running": h.get("peak_running"),
            "slow at": ", ".join(h.get("slow_at", [])), "not comparable at": ", ".join(h.get("not_comparable_at", [])),
            "traffic": (h.get("traffic") or "").replace("_", " "), "end states": h.get("end_states"),
            "findings": ", ".join(f"{n} {sev}" for sev, n in h.get("findings", {}).items())}


def _hosts_frame(summary, max_hosts: int) -> tuple[pl.DataFrame, int]:
    ordered = sorted(summary.hosts, key=lambda h: (not h.get("flagged"), min(h.get("groups") or [1 << 30]), h["host"]))
    shown = [h for h in ordered if h.get("flagged")]
    rest = [h for h in ordered if not h.get("flagged")]
    keep = rest if max_hosts <= 0 else rest[:max_hosts]
    return pl.DataFrame([_host_row(h) for h in shown + keep], infer_schema_length=None), len(rest) - len(keep)


def _evidence_lines(summary) -> list[str]:
    out = []
    for item in summary.outliers + summary.traffic:
        for e in item.get("evidence", []):
            out.append(f"  {crop(item['host'])}  {e.get('file')}:{e.get('line')}  {inert(e.get('text') or '')}")
    return out


def _not_compared_lines(summary) -> list[str]:
    no_peers = sorted({b["host"] for b in summary.bands if b["verdict"] == "no peers"})
    lines = [f"  no peers (no other host runs its configuration): {len(no_peers)} hosts: {_named(no_peers)}"] if no_peers else []
    by_band: dict[str, list] = {}
    for b in summary.bands:
        if b["verdict"] == "not comparable":
            by_band.setdefault(b["band"], []).append(b)
    for band, items in by_band.items():
        load = f"{band} running request" + ("" if band == "1" else "s")
        lines.append(f"  not comparable at {load}: {len(items)} hosts: "
                     f"{_named(sorted(b['host'] for b in items))}; e.g. {items[0]['why']}")
    return lines


def _unknown_lines(summary) -> list[str]:
    return [f"  {u['what']} unknown on {u['n_hosts']} of {u['of_hosts']} hosts ({_named(u['hosts'])}): "
            f"{u['why']}. How: {u['how']}" for u in summary.unknowns]


def _intro(summary) -> str:
    t = summary.thresholds
    return (f"{len(summary.hosts)} hosts in {len(summary.groups)} peer groups. A host is compared only with its "
            f"peers (same engine, model, GPU and settings) at the same running requests; slow = "
            f"{t.get('min_drop', 0):.0%} below the median of {t.get('min_peers')}+ hosts over "
            f"{t.get('min_samples')}+ stats lines.\n")


def write_fleet(summary, fmt: str, max_hosts: int, out=None) -> None:
    out = out or sys.stdout
    out_fmt = "markdown" if fmt == "markdown" else "table"
    out.write(_intro(summary) + "\n")
    if summary.groups:
        write_frame(_groups_frame(summary), out_fmt, out=out, title="peer groups")
        out.write("\n")
    hosts, left = _hosts_frame(summary, max_hosts)
    write_frame(hosts, out_fmt, out=out, title="hosts (flagged first)")
    if left:
        out.write(f"… {left} more unflagged hosts not shown (--max-hosts 0 shows all; --format json has everything)\n")
    flags = summary.flags() or [{"kind": "none", "hosts": "", "what": "no slow host, traffic anomaly, change or crash cluster"}]
    out.write("\n")
    write_frame(pl.DataFrame([{**f, "hosts": _named(str(f["hosts"]).split(", "))} for f in flags]), out_fmt,
                out=out, title="flags")
    for title, lines in (("evidence", _evidence_lines(summary)), ("not compared", _not_compared_lines(summary)),
                         ("unknown", _unknown_lines(summary))):
        if lines:
            out.write(f"\n{title}:\n" + "\n".join(lines) + "\n")
