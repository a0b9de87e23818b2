"""Telemetry files are recognised by content, and no server log is ever taken for one."""
from __future__ import annotations

import pytest

from logsleuth.formats.telemetry_detect import detect_telemetry

EXPECTED = {
    "nvidia_smi_lms.csv": "nvidia_smi_csv", "nvidia_smi_padded.csv": "nvidia_smi_csv",
    "nvidia_smi_reasons.csv": "nvidia_smi_csv", "dmon_default.txt": "nvidia_smi_dmon", "dmon_td.txt": "nvidia_smi_dmon",
    "dcgm.prom": "prometheus", "rocm_smi.csv": "rocm_smi_csv", "amd_smi_metric.csv": "amd_smi_csv",
    "vllm_bench.json": "bench_json", "sglang_bench.jsonl": "bench_json", "nccl_debug.log": "nccl_debug",
}


@pytest.mark.parametrize("name,kind", sorted(EXPECTED.items()))
def test_samples_detected_by_content(samples, tmp_path, name, kind):
    text = (samples / name).read_text()
    assert detect_telemetry(text) == kind
    # the file name plays no part: the same bytes under a neutral name are the same kind
    assert detect_telemetry((tmp_path / "x").write_text(text) and text) == kind


def test_generated_scrape_and_loop_detected(builders):
    assert detect_telemetry(builders.sglang_scrape(True, n=2)) == "prometheus"
    assert detect_telemetry(builders.nvidia_csv(True, n=2)) == "nvidia_smi_csv"
    assert detect_telemetry(builders.bench_jsonl(True)) == "bench_json"


def test_no_real_server_log_is_telemetry(corpus_dir):
    for f in sorted(corpus_dir.iterdir()):
        if f.suffix == ".md" and f.name == "MANIFEST.md":
            continue
        head = f.read_bytes()[:256 * 1024].decode("utf-8", "replace")
        assert detect_telemetry(head) is None, f.name


def test_structured_json_log_is_not_a_bench_result():
    assert detect_telemetry('{"level": "info", "msg": "started"}\n{"level": "info", "msg": "ok"}\n') is None
