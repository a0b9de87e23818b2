"""Traffic anomalies: a host whose load is not what it was set up for (the client, not the server).

Contract: ``traffic_anomalies(con, runs, groups_by_id, t)`` (``runs`` as ``peers.peer_groups``
returns them) returns one dict per anomalous host: ``kind`` (``no_traffic``: a run became ready
and served nothing (end state ``ready_idle``: no busy stats line, prefill or POST request) and
no run of the host served; ``client_concurrency_not_reached``: a benchmark
client on the host was set to a concurrency C and the server never held ``min_load_ratio`` of
min(C, its cap) running requests; ``below_cap_of_peers``: its peers, capped at the same max
running requests, reach ``cap_reached_ratio`` of the cap and it never held ``min_load_ratio``
of it), ``what`` (one sentence) and ``evidence`` ((source_id, line_no) pairs: the client's
setting, the server's busiest line, its ready line). A host without any finding here may
still be lightly loaded: a light load is only an anomaly against what it was configured for.
"""
from __future__ import annotations

from statistics import median

from .sql import fleet_sql


def _requests(n: int) -> str:
    return f"{n} running request" + ("" if n == 1 else "s")


def _per_host(runs: list[dict]) -> dict[str, dict]:
    hosts: dict[str, dict] = {}
    for r in runs:
        h = hosts.setdefault(r["host"], {"runs": [], "peak": None, "peak_at": None, "ready_at": None})
        h["runs"].append(r)
        if r["peak_running"] is not None and (h["peak"] is None or r["peak_running"] > h["peak"]):
            h["peak"], h["peak_at"] = r["peak_running"], (r["source_id"], r["peak_line"])
        if r["ready"] and h["ready_at"] is None and r["ready_line"] is not None:
            h["ready_at"] = (r["source_id"], r["ready_line"])
    return hosts


def _cap(h: dict) -> int | None:
    caps = [r["settings"].get("max_running_requests") or r.get("max_running_requests") for r in h["runs"]]
    nums = [int(float(c)) for c in caps if c is not None and str(c).replace(".", "", 1).isdigit()]
    return max(nums) if nums else None


def _no_traffic(host: str, h: dict) -> dict | None:
    states = {r["end_state"] for r in h["runs"]}
    if "ready_idle" not in states or "served" in states or any(r["busy_lines"] for r in h["runs"]):
        return None
    stats = sum(r["stats_lines"] for r in h["runs"])
    said = (f"{stats} stats lines, none with a running request" if stats
            else "no stats line, prefill line or POST request")
    return {"host": host, "kind": "no_traffic",
            "what": f"ready but served no traffic: {said}; check the client and the load balancer",
            "evidence": [e for e in (h["ready_at"], h["peak_at"]) if e]}


def _client(host: str, h: dict, client: dict | None, t: dict) -> dict | None:
    if not client or client["max_concurrency"] <= 1 or h["peak"] is None:
        return None
    cap = _cap(h)
    expected = min(client["max_concurrency"], cap) if cap else client["max_concurrency"]
    if h["peak"] >= t["min_load_ratio"] * expected:
        return None
    capped = f" (capped at {cap})" if cap and cap < client["max_concurrency"] else ""
    return {"host": host, "kind": "client_concurrency_not_reached",
            "what": f"the client was set to concurrency {client['max_concurrency']}{capped} but the server never "
                    f"held more than {_requests(h['peak'])}: the client, not the server, is the suspect",
            "evidence": [(client["source_id"], client["line_no"]), h["peak_at"]]}


def _below_cap(host: str, h: dict, peers: list[dict], t: dict) -> dict | None:
    cap = _cap(h)
    if not cap or h["peak"] is None or h["peak"] >= t["min_load_ratio"] * cap or len(peers) < t["min_peers"] - 1:
        return None
    reached = median(p["peak"] / cap for p in peers)
    if reached < t["cap_reached_ratio"]:
        return None  # the group's load varies by design (a concurrency sweep): no expectation
    return {"host": host, "kind": "below_cap_of_peers",
            "what": f"never more than {_requests(h['peak'])} while its {len(peers)} peers, capped like it "
                    f"at {cap}, reach {reached:.0%} of the cap: check this host's client",
            "evidence": [e for e in (h["peak_at"],) if e]}


def traffic_anomalies(con, runs: list[dict], t: dict) -> list[dict]:
    hosts = _per_host(runs)
    clients = {}
    for row in con.execute(fleet_sql("client_concurrency")).fetchall():
        clients[row[0]] = {"max_concurrency": row[1], "source_id": row[2], "line_no": row[3]}
    group_hosts: dict[int, set] = {}
    for r in runs:
        group_hosts.setdefault(r["group"], set()).add(r["host"])
    out = []
    for host, h in sorted(hosts.items()):
        found = _no_traffic(host, h) or _client(host, h, clients.get(host), t)
        if found is None:
            mates = {m for r in h["runs"] for m in group_hosts[r["group"]]} - {host}
            peers = [hosts[m] for m in sorted(mates) if hosts[m]["peak"] is not None and _cap(hosts[m]) == _cap(h)]
            found = _below_cap(host, h, peers, t)
        if found:
            out.append(found)
    return out
