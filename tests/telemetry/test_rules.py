"""Each telemetry rule fires on its sample and stays silent on the healthy counterpart.

The samples are the generated run folders of conftest.py around a real SGLang log; the
same-minute telemetry is linked to the log's run by run_telemetry (tested in
test_run_folder.py)."""
from __future__ import annotations

import pytest

import logsleuth
from logsleuth.analysis.rules import diagnose

FOLDER_RULES = ["telemetry_gpu_idle_while_queued", "telemetry_gpu_throttled", "telemetry_pcie_link_degraded",
                "telemetry_gpu_memory_headroom", "telemetry_ttft_queueing", "telemetry_preemption_burst",
                "nccl_transport_below_topology", "nccl_env_not_honoured"]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """{healthy: connection} for the two run folders (ingested once for all rules)."""
    import importlib.util
    from pathlib import Path

    # this folder's conftest holds the folder writer (a module-scoped fixture cannot use the
    # function-scoped ones); loaded by path under its own name
    spec = importlib.util.spec_from_file_location("telemetry_builders", Path(__file__).with_name("conftest.py"))
    builders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builders)
    cons = {}
    for healthy in (False, True):
        base = tmp_path_factory.mktemp("healthy" if healthy else "unhealthy")
        folder = builders.write_run_folder(base / "run", healthy)
        con = logsleuth.open_db(str(base / "t.duckdb"))
        logsleuth.ingest_files(con, [str(folder)])
        cons[healthy] = con
    yield cons
    for con in cons.values():
        con.close()


@pytest.mark.parametrize("rule", FOLDER_RULES)
def test_rule_fires_on_sample_silent_on_healthy(ingested, rule):
    fired = diagnose(ingested[False], rule_ids=[rule])
    assert fired, f"{rule} silent on its sample"
    f = fired[0]
    assert f.run_id is not None and f.line_no is not None and f.evidence, f
    assert "?" not in f.title, f.title  # every placeholder filled
    assert diagnose(ingested[True], rule_ids=[rule]) == []


def test_findings_point_at_the_telemetry_lines(ingested):
    by_rule = {f.rule_id: f for f in diagnose(ingested[False], rule_ids=FOLDER_RULES)}
    assert by_rule["telemetry_gpu_throttled"].source == "gpu.csv"
    assert "0x0000000000000024" in by_rule["telemetry_gpu_throttled"].evidence
    assert by_rule["telemetry_ttft_queueing"].evidence.startswith("sglang:queue_time_seconds_bucket")
    assert by_rule["telemetry_preemption_burst"].evidence.startswith("sglang:num_retracted_requests_total")
    assert "NCCL_PROTO set by environment to LL" in by_rule["nccl_env_not_honoured"].evidence
    assert "via SHM" in by_rule["nccl_transport_below_topology"].evidence
    assert by_rule["telemetry_gpu_throttled"].values["reasons"] == "sw_power_cap, sw_thermal_slowdown"


@pytest.mark.parametrize("log_len,fires", [(2.0, True), (2.85, False)])
def test_spec_acceptance_counters_vs_log(ingested, tmp_path, builders, log_len, fires):
    """vLLM counters give 1 + accepted/drafts = 1 + 1900/1000 = 2.9 over the scrape."""
    from prometheus_client import CollectorRegistry, Counter, generate_latest

    con = ingested[False]
    run_id = con.execute("SELECT run_id FROM runs WHERE model IS NOT NULL").fetchone()[0]
    reg = CollectorRegistry()
    lab = {"engine": "0", "model_name": builders.MODEL}
    drafts = Counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", list(lab), registry=reg)
    acc = Counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", list(lab), registry=reg)
    text = ""
    for k in range(3):
        drafts.labels(**lab).inc(500 if k else 100)
        acc.labels(**lab).inc(950 if k else 123)
        text += f"# {(builders.T0 + k * builders.STEP).isoformat()}\n" + generate_latest(reg).decode()
    f = tmp_path / "spec.prom"
    f.write_text(text)
    (res,) = logsleuth.ingest_files(con, [str(f)])
    # the log side: a spec_stats row of the run in the scrape's minutes (the sample log has no
    # speculative decoding, so the log's figure is stated here)
    con.execute("INSERT INTO spec_stats (source_id, line_no, run_id, ts, accept_len) VALUES (1, 112, ?, ?, ?)",
                [run_id, builders.T0 + builders.STEP, log_len])
    try:
        found = diagnose(con, rule_ids=["telemetry_spec_acceptance_mismatch"])
        assert bool(found) is fires
        if fires:
            assert found[0].values["prom_accept_len"] == 2.9 and found[0].values["log_accept_len"] == 2.0
    finally:
        con.execute("DELETE FROM spec_stats WHERE line_no = 112 AND accept_len = ?", [log_len])
        for table in ("metrics", "lines_other", "telemetry_sources", "sources"):
            con.execute(f"DELETE FROM {table} WHERE source_id = ?", [res.source_id])


def test_every_telemetry_rule_is_tested_here():
    """The rule table of tests/rules/ points here for these rules: keep the two in step."""
    from pathlib import Path

    rules_dir = Path(__file__).resolve().parents[2] / "queries" / "rules"
    shipped = {p.stem for p in rules_dir.glob("*.sql")
               if p.stem.startswith("telemetry_") or p.stem in ("nccl_transport_below_topology", "nccl_env_not_honoured")}
    assert shipped == set(FOLDER_RULES) | {"telemetry_spec_acceptance_mismatch"}
