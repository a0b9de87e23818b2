"""Telemetry figures for compare and the report, from the generated run folder."""
from __future__ import annotations

import pytest

import logsleuth
from logsleuth.telemetry import loaders


@pytest.fixture
def linked(run_folder, tmp_path):
    con = logsleuth.open_db(str(tmp_path / "t.duckdb"))
    logsleuth.ingest_files(con, [str(run_folder(False))])
    run_id = con.execute("SELECT run_id FROM run_telemetry LIMIT 1").fetchone()[0]
    yield con, run_id
    con.close()


def test_gpu_figures_while_serving(linked):
    con, run_id = linked
    fig = loaders.gpu_figures(con, [run_id])[run_id]
    # 5 idle samples at 4 % and 5 busy ones at 97 %, all while 4 requests ran
    assert fig["gpu_samples_serving"] == 10 and fig["gpus"] == 1 and fig["gpu_tools"] == "nvidia-smi"
    assert fig["gpu_util_serving"] == pytest.approx(0.505) and fig["power_w_serving"] == pytest.approx(375.75)
    assert loaders.gpu_figures(con, [run_id + 100]) == {}


def test_bench_latency_per_concurrency(linked):
    con, run_id = linked
    (b,) = loaders.bench_latency(con, [run_id])[run_id]
    assert (b["max_concurrency"], b["ttft_p50_ms"], b["ttft_p99_ms"], b["itl_p99_ms"]) == (4.0, 3500.0, 5200.0, 40.0)


def test_overlay_on_one_time_axis(linked):
    con, run_id = linked
    series = loaders.overlay(con, [run_id])[run_id]
    assert set(series) == set(loaders.OVERLAY_SERIES)
    assert [x for x, _ in series["gpu_util"]] == [30.0 * k for k in range(10)]
    assert series["sm_clock_mhz"][-1] == (270.0, 1215.0)
    # decode throughput from the counter's rate (the log has 2 stats lines, the scrape 9 intervals)
    assert len(series["decode_tok_s"]) == 9 and series["decode_tok_s"][0][0] == 30.0


def test_overlay_percent_one_axis(linked):
    con, run_id = linked
    lines = loaders.overlay_percent(loaders.overlay(con, [run_id])[run_id])
    labels = [label for label, _, _ in lines]
    assert labels[0] == "GPU utilisation (% busy)" and labels[1] == "SM clock (% of 1,980 MHz)"
    assert all(0 <= y <= 100 for _, _, pts in lines for _, y in pts)
    clock = dict(lines[1][2])
    assert clock[0.0] == 100.0 and round(clock[270.0], 1) == round(100 * 1215 / 1980, 1)


def test_compare_gains_telemetry_rows(run_folder, tmp_path):
    import json

    from support.cli import run_in_process

    db = str(tmp_path / "c.duckdb")
    assert run_in_process("ingest", str(run_folder(False)), db=db)[0] == 0
    code, out, err = run_in_process("compare", "--format", "json", db=db)
    assert code == 0, err
    data = json.loads(out)
    keys = [m["key"] for m in data["metrics"] if m["group"] == "telemetry"]
    assert keys == ["gpu_util_serving", "gpu_power_w_serving", "telemetry_bench_c4_ttft_p50_ms",
                    "telemetry_bench_c4_ttft_p99_ms", "telemetry_bench_c4_itl_p50_ms", "telemetry_bench_c4_itl_p99_ms"]
    values = data["runs"][0]["metrics"]
    assert values["gpu_util_serving"] == 0.505 and values["telemetry_bench_c4_ttft_p99_ms"] == 5200.0


def test_compare_without_telemetry_has_no_telemetry_rows(tmp_path, samples):
    import json

    from support.cli import run_in_process

    db = str(tmp_path / "c.duckdb")
    assert run_in_process("ingest", str(samples / "run_folder" / "sglang_server.log"), db=db)[0] == 0
    data = json.loads(run_in_process("compare", "--format", "json", db=db)[1])
    assert not [m for m in data["metrics"] if m["group"] == "telemetry"]
