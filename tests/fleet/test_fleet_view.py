"""`logsleuth fleet` as a person reads it: groups with counts, flagged hosts first, names cropped,
a bounded host list at hundreds of hosts, evidence and unknowns said; and the CLI on a dataset."""
from __future__ import annotations

import io
import json

import pytest

from logsleuth.cli.fleet_view import HOST_WIDTH, crop, write_fleet
from logsleuth.fleet.summary import FleetSummary
from support.cli import run_in_process
from support.fleet_sweep import Host, swept_fleet, write_fleet as write_logs

LONG = "rack-07-very-long-datacenter-prefix-node-{:04d}.example.internal"


def big_fleet(n: int = 600) -> FleetSummary:
    """n hosts in two groups; host 17 slow, host 400 a traffic anomaly, host 599 alone."""
    hosts = [{"host": LONG.format(i), "runs": 1, "groups": [1 if i < 300 else 2], "peers": 299,
              "peak_running": 8, "slow_at": ["5-16"] if i == 17 else [], "not_comparable_at": [],
              "traffic": "client_concurrency_not_reached" if i == 400 else None, "end_states": "served",
              "flagged": i in (17, 400)} for i in range(n)]
    groups = [{"group": g, "n_hosts": 300, "hosts": [h["host"] for h in hosts if h["groups"] == [g]],
               "label": f"vllm llama unknown GPU tp={4 * g}"} for g in (1, 2)]
    evidence = [{"file": "server.log", "line": 12, "text": "Running: 1 reqs \x1b[31mred\x1b[0m"}]
    return FleetSummary(
        hosts=hosts, groups=groups,
        outliers=[{"host": LONG.format(17), "group": 1, "band": "5-16", "value": 180.0, "peer_median": 300.0,
                   "below_by": 0.4, "n_peers": 300, "compared_lines": 24, "evidence": evidence}],
        bands=[{"host": LONG.format(599), "group": 2, "band": "5-16", "verdict": "no peers", "why": "no peers: x"}],
        traffic=[{"host": LONG.format(400), "kind": "client_concurrency_not_reached",
                  "what": "the client was set to concurrency 8 but ...", "evidence": evidence}],
        unknowns=[{"what": "gpu", "hosts": [h["host"] for h in hosts], "n_hosts": n, "of_hosts": n,
                   "why": "no log names it", "how": "--gpu at ingest"}],
        thresholds={"min_drop": 0.25, "min_peers": 3, "min_samples": 5})


def test_crop_keeps_both_ends():
    name = LONG.format(123)
    assert len(crop(name)) == HOST_WIDTH and crop(name).startswith("rack-07") and crop(name).endswith("node-0123…")
    assert crop("gpu-01") == "gpu-01"
    assert crop("node-0017.dc1.cluster.example.com") == "node-0017…"
    assert crop("10.120.200.17-serving-logs-collected").startswith("10.120.200.17-")


def test_six_hundred_hosts_read_as_groups_then_flagged_hosts_first(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    out = io.StringIO()
    write_fleet(big_fleet(), "table", max_hosts=10, out=out)
    text = out.getvalue()
    assert text.startswith("600 hosts in 2 peer groups")
    groups, hosts = text.index("peer groups"), text.index("hosts (flagged first)")
    assert groups < hosts
    body = text[hosts:text.index("flags")]
    rows = [ln for ln in body.splitlines() if ln.startswith("│")]
    assert len(rows) == 12  # the two flagged hosts, then ten others
    assert "0017" in rows[0] and "0400" in rows[1]
    assert "588 more unflagged hosts not shown" in text
    assert LONG.format(17) not in text  # cropped everywhere
    assert "\x1b" not in text  # log text is inert
    assert "gpu unknown on 600 of 600 hosts" in text and "--gpu at ingest" in text
    assert "no peers (no other host runs its configuration): 1 hosts" in text


def test_markdown_and_all_hosts():
    out = io.StringIO()
    write_fleet(big_fleet(40), "markdown", max_hosts=0, out=out)
    text = out.getvalue()
    assert "| group | hosts | flagged | configuration |" in text
    assert sum(1 for ln in text.splitlines() if ln.startswith("| rack-07")) == 40


@pytest.mark.slow
def test_cli_fleet_on_a_dataset_with_separate_client_logs(tmp_path):
    """The sweep as a dataset: server.log and the client's bench.log per host folder
    (--host-from); the client that never loaded its host is found through its own file."""
    hosts = swept_fleet(concurrencies=(8,), tps=(4,)) + [Host("tp4-c008-r4", 4, 8, served_at=1)]
    logs = [str(p) for p in write_logs(tmp_path / "logs", hosts)]
    ds = str(tmp_path / "ds")
    code, _, err = run_in_process("ingest", "--dataset", ds, "--host-from", "{host}/*.log", "--executor", "serial",
                                  *logs, db=None)
    assert code == 0, err
    code, out, err = run_in_process("--dataset", ds, "fleet", "--format", "json", "--no-findings", db=None)
    assert code == 0, err
    data = json.loads(out)
    assert data["outliers"] == []
    assert [(a["host"], a["kind"]) for a in data["traffic"]] == [("tp4-c008-r4", "client_concurrency_not_reached")]
    assert data["traffic"][0]["evidence"][0]["file"] == "bench.log"
    code, out, err = run_in_process("--dataset", ds, "fleet", "--no-findings", "--max-hosts", "1", db=None)
    assert code == 0, err
    assert "traffic_anomaly" in out and "2 more unflagged hosts not shown" in out
