"""`fleet` compares peers at matched load: a generated fleet swept over concurrency and TP size.

The healthy sweep (tests/support/fleet_sweep.py: TP4 and TP8, client concurrency 1 and 8, three hosts
per point) must give no slow host although its peak throughputs differ 8x; the same fleet with
one host slowed gives exactly that host; a client that never loaded its host is a traffic
anomaly, not a slow host; what the logs do not say (here: the GPU, the year) is reported.
The fleet is ingested once into a database (hosts from the NCCL lines the logs carry); each
variant is a copy with one or two more hosts.
"""
from __future__ import annotations

import shutil

import pytest

import logsleuth
from logsleuth.fleet.summary import fleet_summary, hosts_of_database

from support.fleet_sweep import Host, swept_fleet, write_fleet


@pytest.fixture(scope="module")
def healthy_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    paths = write_fleet(root / "logs", swept_fleet(), client_apart=False)
    db = root / "healthy.duckdb"
    con = logsleuth.open_db(str(db))
    try:
        logsleuth.ingest_files(con, [str(p) for p in paths])
    finally:
        con.close()
    return db


def summarise(db, **overrides):
    con = logsleuth.open_db(str(db), read_only=True)
    try:
        with hosts_of_database(con):
            return fleet_summary(con, with_findings=False, **overrides)
    finally:
        con.close()


@pytest.fixture(scope="module")
def variant(healthy_db, tmp_path_factory):
    """variant(*hosts): the healthy fleet plus these hosts (a database of its own)."""
    def make(*hosts: Host):
        root = tmp_path_factory.mktemp("variant")
        db = root / "fleet.duckdb"
        shutil.copy(healthy_db, db)
        con = logsleuth.open_db(str(db))
        try:
            logsleuth.ingest_files(con, [str(p) for p in write_fleet(root / "logs", list(hosts), client_apart=False)])
        finally:
            con.close()
        return summarise(db)
    return make


def test_a_healthy_sweep_has_no_slow_host(healthy_db):
    s = summarise(healthy_db)
    assert len(s.hosts) == 12
    assert s.outliers == [] and s.traffic == []
    assert not [f for f in s.flags() if f["kind"] in ("outlier", "traffic_anomaly")]
    # two peer groups, by TP size, six hosts each (concurrency is load, not configuration)
    assert sorted((g["settings"]["tensor_parallel_size"], g["n_hosts"]) for g in s.groups) == [("4", 6), ("8", 6)]
    # every host compared at the load it held: the single-stream hosts at 1, the others at 8
    verdicts = {(b["host"], b["band"]): b["verdict"] for b in s.bands}
    assert set(verdicts.values()) == {"ok"}
    assert {h for h, band in verdicts if band == "1"} == {f"tp{tp}-c001-r{r}" for tp in (4, 8) for r in (1, 2, 3)}


def test_the_old_comparison_would_have_flagged_half_the_healthy_fleet(healthy_db):
    """The sweep is a real test: peak throughput across all hosts of one model differs 8x."""
    s = summarise(healthy_db)
    peaks = sorted(h["peak_gen_tok_s"] for h in s.hosts)
    assert peaks[0] < 0.25 * peaks[-1]


def test_single_stream_comes_only_from_steady_stretches(healthy_db):
    """Hosts at concurrency 8 pass through one running request while ramping up and draining
    (with a prefill, or for part of an interval): those lines are no single-stream figure."""
    s = summarise(healthy_db)
    assert not [b for b in s.bands if b["band"] == "1" and "-c008-" in b["host"]]
    single = [b for b in s.bands if b["band"] == "1"]
    assert all(0.9 <= b["ratio"] <= 1.1 for b in single)


def test_one_slowed_host_at_matched_load_is_exactly_the_outlier(variant):
    s = variant(Host("tp4-c008-r4", 4, 8, speed=0.6))
    assert [o["host"] for o in s.outliers] == ["tp4-c008-r4"]
    o = s.outliers[0]
    assert o["band"] == "5-16" and 0.35 <= o["below_by"] <= 0.45 and o["n_peers"] == 4
    assert "Running: 8 reqs" in o["evidence"][0]["text"]
    assert s.traffic == []
    host = next(h for h in s.hosts if h["host"] == "tp4-c008-r4")
    assert host["flagged"] and host["slow_at"] == ["5-16"]


def test_a_client_that_never_loaded_its_host_is_a_traffic_anomaly_not_slow(variant):
    s = variant(Host("tp8-c008-r4", 8, 8, served_at=1))
    assert s.outliers == []
    assert [(a["host"], a["kind"]) for a in s.traffic] == [("tp8-c008-r4", "client_concurrency_not_reached")]
    texts = [e["text"] for e in s.traffic[0]["evidence"]]
    assert "Maximum request concurrency:" in texts[0] and texts[0].rstrip().endswith("8")
    assert "Running: 1 reqs" in texts[1]
    assert [f["kind"] for f in s.flags()] == ["traffic_anomaly"]


def test_a_load_no_peer_held_is_not_comparable_and_a_lone_configuration_has_no_peers(variant):
    """A host at concurrency 32 (no peer held 32 running requests) decoding at half speed, and
    a TP2 host (no other host runs TP2): neither is called slow."""
    s = variant(Host("tp4-c032-r1", 4, 32, speed=0.5), Host("tp2-c008-r1", 2, 8, speed=0.5))
    assert s.outliers == []
    lone = [b for b in s.bands if b["host"] == "tp4-c032-r1"]
    assert [b["verdict"] for b in lone] == ["not comparable"]
    assert lone[0]["why"].startswith("not comparable at 17-64 running requests")
    mine = [b for b in s.bands if b["host"] == "tp2-c008-r1"]
    assert mine and {b["verdict"] for b in mine} == {"no peers"}
    assert next(h for h in s.hosts if h["host"] == "tp2-c008-r1")["peers"] == 0


def test_kv_offloading_makes_another_configuration(variant):
    """The issue's deployment swept KV offloading on and off: an offloading host at half speed
    is not a slow peer of the hosts without it, it has no peers."""
    s = variant(Host("tp4-c008-kvoff", 4, 8, speed=0.5, extra_args=", 'kv_offloading_size': 64.0"))
    assert s.outliers == []
    mine = next(g for g in s.groups if "tp4-c008-kvoff" in g["hosts"])
    assert mine["n_hosts"] == 1 and mine["settings"]["kv_offloading"] == "64"
    assert "kv_offload=64" in mine["label"]


def test_peer_keys_are_data(healthy_db):
    """Without TP among the peer settings, TP4 and TP8 hosts are one group, and the TP4 hosts sit
    below the group's reference at 8 running requests, the TP8 hosts above it."""
    s = summarise(healthy_db, settings=["max_running_requests"])
    assert [g["n_hosts"] for g in s.groups] == [12]
    at8 = {b["host"][:3]: b["ratio"] for b in s.bands if b["band"] == "5-16"}
    assert at8["tp4"] < 0.9 and at8["tp8"] > 1.1


def test_unknown_gpu_and_year_are_reported_with_how_to_give_them(healthy_db):
    s = summarise(healthy_db)
    unknown = {u["what"]: u for u in s.unknowns}
    assert unknown["gpu"]["n_hosts"] == unknown["gpu"]["of_hosts"] == 12
    assert "--gpu" in unknown["gpu"]["how"]
    assert "--year" in unknown["date"]["how"]
    assert "host" not in unknown
    assert {g["gpu"] for g in s.groups} == {"unknown GPU"}
