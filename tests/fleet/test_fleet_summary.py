"""`fleet` flags exactly what was injected: one slow host, one crash cluster."""
from __future__ import annotations

import pytest

from logsleuth.fleet import fleet_summary, ingest_dataset, open_dataset

pytestmark = pytest.mark.slow  # a seven-host fleet dataset built per module (~70 s here)


@pytest.fixture(scope="module")
def fleet_con(fleet_dir, tmp_path_factory):
    target = tmp_path_factory.mktemp("fleetds") / "ds"
    logs = sorted(str(p) for p in fleet_dir.rglob("server.log"))
    result = ingest_dataset(str(target), logs, host_from="{host}/server.log", executor="local", workers=2)
    assert not result.failed
    return open_dataset(str(target))


def test_fleet_flags_the_slow_host_and_the_crash_cluster_and_nothing_else(fleet_con):
    s = fleet_summary(fleet_con)
    assert {o["host"] for o in s.outliers} == {"gpu-04"}
    assert all(0.35 <= o["below_by"] <= 0.45 for o in s.outliers)
    assert [sorted(c["host_list"].split(", ")) for c in s.crash_clusters] == [["gpu-05", "gpu-06", "gpu-07"]]
    assert "illegal memory access" in s.crash_clusters[0]["example"]
    assert s.changes == []
    assert {f["kind"] for f in s.flags()} == {"outlier", "crash_cluster"}


def test_fleet_hosts_table(fleet_con):
    hosts = {h["host"]: h for h in fleet_summary(fleet_con).hosts}
    assert sorted(hosts) == [f"gpu-{i:02d}" for i in range(1, 8)]
    assert hosts["gpu-01"]["engine"].startswith("sglang") and hosts["gpu-05"]["engine"].startswith("vllm")
    assert hosts["gpu-01"]["single_stream_tok_s"] == pytest.approx(63.6)
    assert hosts["gpu-04"]["single_stream_tok_s"] == pytest.approx(63.6 * 0.6, rel=0.02)
    assert hosts["gpu-05"]["failed_runs"] == 1 and hosts["gpu-01"]["failed_runs"] == 0
    assert sum(hosts["gpu-05"]["findings"].values()) >= 1


def test_a_change_between_days_is_named(tmp_path):
    from support.paths import SAMPLES

    day1 = (SAMPLES / "sglang_baseline.log")
    day2 = (SAMPLES / "sglang_tuned_v1.log")
    target = str(tmp_path / "ds")
    ingest_dataset(target, [str(day1), str(day2)], host="box", executor="serial")
    s = fleet_summary(open_dataset(target), with_findings=False)
    whats = {c["what"] for c in s.changes}
    dates = {(c["before_date"], c["after_date"]) for c in s.changes}
    assert len(dates) == 1 and all(b < a for b, a in dates)
    assert whats, "the tuned launch changed its configuration"
    assert not any(w.startswith("config:random_seed") for w in whats)


def test_single_stream_lines_right_after_a_prefill_are_left_out(fleet_con):
    """The SGLang sample has 249 steady lines at one running request (the reports before and
    after it also at one); 11 of them follow a Prefill batch line: 238 are compared."""
    s = fleet_summary(fleet_con, with_findings=False)
    single = {b["host"]: b for b in s.bands if b["band"] == "1"}
    assert single["gpu-01"]["lines"] == single["gpu-01"]["compared_lines"] == 238
    assert single["gpu-01"]["verdict"] == "ok" and single["gpu-04"]["verdict"] == "slow"
    # the three vLLM hosts that crashed are peers of each other, not of the SGLang hosts
    groups = {g["engine"]: g["n_hosts"] for g in s.groups}
    assert groups == {"sglang": 4, "vllm": 3}
