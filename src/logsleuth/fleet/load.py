"""Throughput compared at matched load: a host against its peers at the same running requests.

Contract: ``matched_load(con, runs, t)`` (``runs`` as ``peers.peer_groups`` returns them) runs
``queries/fleet/matched_load.sql`` and sorts each (host, peer group, band of running requests)
into one verdict: ``slow`` (at least ``min_drop`` below the peers' reference over at least
``min_samples`` compared lines, with ``min_peers`` hosts at those levels), ``ok``, ``no peers``
(no other host runs its configuration), or ``not comparable`` (lines in the band, but too few of them at running counts that enough peers also
ran at: "not comparable at load X", never "slow"). Returns ``(outliers, bands)``: ``outliers``
one dict per slow (host, band), ``bands`` one dict per (host, group, band) with its verdict.
The bands are ``compare``'s; the levels inside them are finer (a band spans up to 4x the load).
"""
from __future__ import annotations

from .sql import fleet_sql


def _band_rows(con, runs: list[dict], t: dict) -> list[dict]:
    from ..analysis.compare import BANDS

    if not runs:
        return []
    cur = con.execute(fleet_sql("matched_load"), {
        "run_ids": [r["run_id"] for r in runs], "hosts": [r["host"] for r in runs],
        "groups": [r["group"] for r in runs],
        "band_labels": [b for b, _, _ in BANDS], "band_lows": [lo for _, lo, _ in BANDS],
        "band_highs": [hi for _, _, hi in BANDS], "level_step": t["level_step"],
        "min_level_lines": t["min_level_lines"], "min_peers": t["min_peers"]})
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def load_text(band: str) -> str:
    """'1 running request', '5-16 running requests': a band as words."""
    return f"{band} running request" + ("" if band == "1" else "s")


def _span(r: dict) -> str:
    return str(r["min_running"]) if r["min_running"] == r["max_running"] else f"{r['min_running']}-{r['max_running']}"


def _peer_running(rows: list[dict]) -> dict:
    """(group, band) -> {host: 'lo-hi'} of the running counts each host showed there."""
    out: dict = {}
    for r in rows:
        out.setdefault((r["grp"], r["band"]), {})[r["host"]] = _span(r)
    return out


def _verdict(r: dict, n_hosts: int, t: dict) -> str:
    if n_hosts < 2:
        return "no peers"
    if r["n_compared"] < t["min_samples"] or r["ratio"] is None:
        return "not comparable"
    return "slow" if r["ratio"] <= 1 - t["min_drop"] else "ok"


def _why_not(r: dict, others: dict, n_hosts: int, t: dict) -> str:
    load = f"{load_text(r['band'])} ({r['n_lines']} stats lines at {_span(r)})"
    if n_hosts < 2:
        return f"no peers: no other host runs its configuration (load {load_text(r['band'])})"
    if n_hosts < t["min_peers"]:
        return f"not comparable at {load}: its group has {n_hosts} hosts, a median needs {t['min_peers']}"
    if not others:
        return f"not comparable at {load}: no peer has stats lines in this band"
    seen = ", ".join(f"{h} at {span}" for h, span in sorted(others.items())[:4])
    more = f" and {len(others) - 4} more" if len(others) > 4 else ""
    return (f"not comparable at {load}: only {r['n_compared']} of its lines sit at running counts that "
            f"{t['min_peers']} hosts of its group ran at (need {t['min_samples']}); peers: {seen}{more}")


def matched_load(con, runs: list[dict], groups_by_id: dict, t: dict) -> tuple[list[dict], list[dict]]:
    rows = _band_rows(con, runs, t)
    seen = _peer_running(rows)
    outliers, bands = [], []
    for r in rows:
        g = groups_by_id[r["grp"]]
        verdict = _verdict(r, len(g.hosts), t)
        others = {h: s for h, s in seen[(r["grp"], r["band"])].items() if h != r["host"]}
        band = {"host": r["host"], "group": r["grp"], "band": r["band"], "verdict": verdict,
                "lines": r["n_lines"], "compared_lines": r["n_compared"], "ratio": r["ratio"],
                "host_tok_s": r["host_tok_s"], "peer_tok_s": r["peer_tok_s"], "n_peers": r["n_peers"],
                "running": [r["min_running"], r["max_running"]],
                "evidence": _where(r), "why": _why_not(r, others, len(g.hosts), t) if verdict in ("not comparable", "no peers") else None}
        bands.append(band)
        if verdict == "slow":
            outliers.append({"host": r["host"], "group": r["grp"], "model": g.model, "gpu": g.gpu,
                             "engine": g.engine, "metric": f"gen_tok_s at {r['band']} running",
                             "band": r["band"], "value": r["host_tok_s"], "peer_median": r["peer_tok_s"],
                             "n_peers": r["n_peers"], "below_by": round(1 - r["ratio"], 3),
                             "compared_lines": r["n_compared"], "evidence": _where(r)})
    return outliers, bands


def _where(r: dict) -> str | None:
    return (r["evidence_source_id"], r["evidence_line"]) if r.get("evidence_line") is not None else None
