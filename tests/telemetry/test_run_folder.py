"""Done-when of issue 14: a folder with a server log, a metrics scrape, an nvidia-smi CSV loop
and a bench JSON from the same time ingests in one command into one run holding all four,
and diagnose raises the telemetry rules there."""
from __future__ import annotations

import json

from support.cli import run_in_process

TELEMETRY_RULES = {"telemetry_gpu_idle_while_queued", "telemetry_gpu_throttled", "telemetry_pcie_link_degraded",
                   "telemetry_gpu_memory_headroom", "telemetry_ttft_queueing", "telemetry_preemption_burst",
                   "nccl_transport_below_topology", "nccl_env_not_honoured"}


def test_one_command_one_run_all_four(run_folder, tmp_path):
    folder = run_folder(False)
    db = str(tmp_path / "t.duckdb")
    code, out, err = run_in_process("ingest", str(folder), db=db)
    assert code == 0, err
    code, out, _ = run_in_process("runs", "--format", "json", db=db)
    runs = json.loads(out)
    assert len(runs) == 1
    linked = runs[0]["telemetry"]
    for piece in ("prometheus metrics.prom (time overlap + model name)", "nvidia-smi gpu.csv (time overlap)",
                  "sglang.bench_serving bench.jsonl (same folder + model name)", "nccl nccl.txt (same folder)"):
        assert piece in linked, linked
    code, out, err = run_in_process("diagnose", "--format", "json", db=db)
    fired = {f["rule_id"] for f in json.loads(out)}
    assert TELEMETRY_RULES <= fired, TELEMETRY_RULES - fired
    assert all(f["run_id"] == runs[0]["run_id"] for f in json.loads(out))


def test_healthy_folder_raises_no_telemetry_rule(run_folder, tmp_path):
    db = str(tmp_path / "t.duckdb")
    assert run_in_process("ingest", str(run_folder(True)), db=db)[0] == 0
    code, out, _ = run_in_process("diagnose", "--format", "json", db=db)
    assert not TELEMETRY_RULES & {f["rule_id"] for f in json.loads(out)}


def test_other_times_and_models_are_not_linked_but_run_attaches_by_hand(run_folder, tmp_path, builders):
    import datetime as dt

    folder = run_folder(True)
    db = str(tmp_path / "t.duckdb")
    assert run_in_process("ingest", str(folder / "sglang_server.log"), db=db)[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    later = elsewhere / "later.csv"  # a GPU loop of the next day
    later.write_text(builders.nvidia_csv(True, n=3, t0=builders.T0 + dt.timedelta(days=1)))
    other_model = elsewhere / "other.prom"  # same minutes, another served model
    other_model.write_text(builders.sglang_scrape(True, n=3).replace(builders.MODEL, "meta-llama/Llama-3.1-8B"))
    assert run_in_process("ingest", str(later), str(other_model), db=db)[0] == 0
    assert json.loads(run_in_process("runs", "--format", "json", db=db)[1])[0]["telemetry"] is None
    attached = elsewhere / "attached.csv"
    attached.write_text(builders.nvidia_csv(True, n=2, t0=builders.T0 + dt.timedelta(days=2)))
    run_id = json.loads(run_in_process("runs", "--format", "json", db=db)[1])[0]["run_id"]
    code, _, err = run_in_process("ingest", str(attached), "--run", str(run_id), db=db)
    assert code == 0, err
    assert json.loads(run_in_process("runs", "--format", "json", db=db)[1])[0]["telemetry"] == \
        "nvidia-smi attached.csv (attached by hand (ingest --run))"
    code, _, err = run_in_process("ingest", str(folder / "bench.jsonl"), "--run", "999", db=db)
    assert code == 2 and "no run matches '999'" in err  # the one run resolver: a usage error


def test_folder_walk_leaves_other_json_out_but_a_named_one_is_refused(run_folder, tmp_path):
    folder = run_folder(True)
    (folder / "config.json").write_text('{"architectures": ["Qwen3VLForConditionalGeneration"], "hidden_size": 4096}\n')
    db = str(tmp_path / "t.duckdb")
    code, _, err = run_in_process("ingest", str(folder), db=db)
    assert code == 0 and "config.json" in err and "not a benchmark result" in err
    code, _, err = run_in_process("ingest", str(folder / "config.json"), db=db)
    assert code == 3 and "JSON but not a benchmark result" in err


def test_report_overlays_gpu_telemetry_with_throughput(run_folder, tmp_path):
    import re

    db = str(tmp_path / "t.duckdb")
    assert run_in_process("ingest", str(run_folder(False)), db=db)[0] == 0
    out = tmp_path / "r.html"
    code, _, err = run_in_process("report", "-o", str(out), db=db)
    assert code == 0, err
    html = out.read_text()
    start = html.index('data-kind="telemetry"')
    svg = html[html.rfind("<svg", 0, start):html.index("</svg>", start)]
    names = re.findall(r'data-name="([^"]+)"', svg)
    assert names == ["GPU utilisation (% busy)", "SM clock (% of 1,980 MHz)", "GPU power (% of 446 W)",
                     "decode throughput (% of 23.0 tok/s)"], names
    assert svg.count("<polyline") == 4 and "seconds since the first telemetry sample" in svg


def test_report_without_telemetry_has_no_overlay(tmp_path, samples):
    db = str(tmp_path / "t.duckdb")
    assert run_in_process("ingest", str(samples / "run_folder" / "sglang_server.log"), db=db)[0] == 0
    out = tmp_path / "r.html"
    assert run_in_process("report", "-o", str(out), db=db)[0] == 0
    assert 'data-kind="telemetry"' not in out.read_text()
