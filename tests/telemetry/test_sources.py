"""Each telemetry source kind ingests into its table, keeps every line, and re-ingests idempotently."""
from __future__ import annotations

import math

import pytest

import logsleuth


def _ingest(con, path, **options):
    (res,) = logsleuth.ingest_files(con, [str(path)], logsleuth.IngestOptions(**options) if options else None)
    return res


def _lines_text(con, source_id):
    rows = con.execute("SELECT raw FROM lines WHERE source_id = ? ORDER BY line_no", [source_id]).fetchall()
    return "\n".join(r[0] for r in rows) + "\n"


@pytest.mark.parametrize("name", ["nvidia_smi_padded.csv", "dmon_td.txt", "dcgm.prom", "rocm_smi.csv",
                                  "amd_smi_metric.csv", "vllm_bench.json", "sglang_bench.jsonl", "nccl_debug.log"])
def test_every_line_stored_once(db, samples, name):
    # --keep-prompts: the bench files hold generated texts, which are masked by default (request content)
    res = _ingest(db, samples / name, keep_prompts=True)
    assert res.status == "ingested"
    assert _lines_text(db, res.source_id) == (samples / name).read_text()
    kind, n_lines = db.execute("SELECT kind, n_lines FROM sources WHERE source_id = ?", [res.source_id]).fetchone()
    assert kind == res.kind and n_lines == len((samples / name).read_text().splitlines())
    assert _ingest(db, samples / name).status == "skipped"  # same sha256
    assert db.execute("SELECT count(*) FROM sources").fetchone()[0] == 1


def test_nvidia_smi_csv_units_and_ratios(db, samples):
    res = _ingest(db, samples / "nvidia_smi_padded.csv")
    rows = db.execute("SELECT line_no, ts, gpu_index, gpu_name, gpu_util, mem_used_mib, mem_total_mib, power_w, temp_c"
                      " FROM gpu_samples WHERE source_id = ? ORDER BY line_no", [res.source_id]).fetchall()
    assert [r[0] for r in rows] == [2, 3]
    assert str(rows[1][1]) == "2026-03-06 16:45:59"
    assert rows[1][2:] == (0, "NVIDIA GH200 120GB", 0.02, 1035.0, 97871.0, 99.02, 32.0)


def test_throttle_reasons_from_bitmask_and_per_reason_fields(db, samples, tmp_path, builders):
    res = _ingest(db, samples / "nvidia_smi_reasons.csv")
    rows = db.execute("SELECT throttle_mask, throttle_reasons, sm_clock_mhz FROM gpu_samples WHERE source_id = ?"
                      " ORDER BY line_no", [res.source_id]).fetchall()
    assert rows == [(0, None, 144.0), (0x24, "sw_power_cap,sw_thermal_slowdown", 1200.0)]
    f = tmp_path / "loop.csv"
    f.write_text(builders.nvidia_csv(False, n=6))
    res = _ingest(db, f)
    last = db.execute("SELECT throttle_mask, throttle_reasons, pcie_gen, pcie_gen_max, pcie_width, pcie_width_max"
                      " FROM gpu_samples WHERE source_id = ? ORDER BY line_no DESC LIMIT 1", [res.source_id]).fetchone()
    assert last == (0x24, "sw_power_cap,sw_thermal_slowdown", 3, 4, 8, 16)


def test_dmon_columns_by_header_name(db, samples):
    a = _ingest(db, samples / "dmon_default.txt")
    b = _ingest(db, samples / "dmon_td.txt")
    assert db.execute("SELECT ts, power_w, temp_c, mem_temp_c, gpu_util, sm_clock_mhz FROM gpu_samples"
                      " WHERE source_id = ?", [a.source_id]).fetchone() == (None, 31.0, 38.0, None, 0.0, 210.0)
    assert any("no timestamps" in n for n in a.notes)
    ts, fb, util, mem_clock = db.execute("SELECT ts, mem_used_mib, gpu_util, mem_clock_mhz FROM gpu_samples"
                                         " WHERE source_id = ?", [b.source_id]).fetchone()
    assert (str(ts), fb, util, mem_clock) == ("2024-01-04 13:54:35", 239.0, 0.06, 6250.0)


def test_dcgm_scrape_becomes_gpu_samples(db, samples):
    res = _ingest(db, samples / "dcgm.prom")
    assert db.execute("SELECT count(*) FROM metrics WHERE source_id = ?", [res.source_id]).fetchone()[0] == 4
    rows = db.execute("SELECT uuid, host, gpu_name, sm_clock_mhz, gpu_util, mem_temp_c, tool FROM gpu_samples"
                      " WHERE source_id = ? ORDER BY line_no", [res.source_id]).fetchall()
    # one row per GPU and host: these real lines come from three exporters, so three GPUs
    by_gpu = {(r[0], r[1]): r for r in rows}
    assert len(rows) == 3
    plain = by_gpu[("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", None)]
    assert plain[3] == 139.0 and plain[5] is None  # MEMORY_TEMP's 2^63 blank marker is NULL
    k80 = by_gpu[("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", "dcgm-exporter-cmhft")]
    assert k80[2] == "Tesla K80" and k80[4] == 0.0
    assert by_gpu[("GPU-8f1f4d06-0000", "hami-workshop")][2] == "Tesla T4"  # lowercase hostname label
    assert {r[6] for r in rows} == {"dcgm-exporter"}


def test_amd_tools(db, samples):
    r = _ingest(db, samples / "rocm_smi.csv")
    gpu, util, total, used = db.execute("SELECT gpu_index, gpu_util, mem_total_mib, mem_used_mib FROM gpu_samples"
                                        " WHERE source_id = ?", [r.source_id]).fetchone()
    assert (gpu, util, total) == (0, 0.0, 68702699520 / 2**20) and abs(used - 10.47) < 0.01
    a = _ingest(db, samples / "amd_smi_metric.csv")
    rows = db.execute("SELECT gpu_util, power_w, sm_clock_mhz, temp_c, mem_temp_c, throttle_reasons FROM gpu_samples"
                      " WHERE source_id = ? ORDER BY line_no", [a.source_id]).fetchall()
    assert rows == [(0.97, 998.0, 2100.0, None, 88.0, "THERMAL"), (0.96, 1002.0, 2400.0, None, 80.0, None)]


def test_bench_json_files(db, samples):
    v = _ingest(db, samples / "vllm_bench.json")
    row = db.execute("SELECT tool, backend, model_id, started_at, successful_requests, failed_requests, duration_s,"
                     " output_tok_s, total_tok_s, peak_concurrency, mean_ttft_ms, p99_ttft_ms, p99_itl_ms"
                     " FROM bench_results WHERE source_id = ?", [v.source_id]).fetchone()
    assert row[:6] == ("vllm bench serve", "openai", "./Qwen2.5-VL-3B-Instruct", __import__("datetime").datetime(
        2026, 7, 22, 6, 1, 14), 199, 1)
    assert row[6:] == pytest.approx((204.45408433000557, 124.58542994370372, 319.2501642307408, 14.0,
                                     97.50969301155726, 113.88637554366143, 38.25465443544089))
    s = _ingest(db, samples / "sglang_bench.jsonl")
    rows = db.execute("SELECT line_no, tool, request_rate, max_concurrency, model_id, n_detailed, detail_p50_ttft_ms,"
                      " detail_p99_ttft_ms, detail_p99_itl_ms FROM bench_results WHERE source_id = ? ORDER BY line_no",
                      [s.source_id]).fetchall()
    assert [r[0] for r in rows] == [1, 2] and {r[1] for r in rows} == {"sglang.bench_serving"}
    assert rows[0][5] is None and rows[1][4] == "Qwen/Qwen3-8B" and math.isinf(rows[1][2])
    assert rows[1][5] == 4 and rows[1][6] == pytest.approx(200.0) and rows[1][7] == pytest.approx(394.0)  # numpy-style linear interpolation
    assert rows[1][8] == pytest.approx(38.9)
    reqs = db.execute("SELECT request_index, ttft_ms, itl_mean_ms, itl_max_ms, error FROM bench_requests"
                      " WHERE source_id = ? ORDER BY request_index", [s.source_id]).fetchall()
    assert len(reqs) == 4 and reqs[3][1] == pytest.approx(400.0) and reqs[2][3] == pytest.approx(40.0)
    assert all(r[4] is None for r in reqs)


def test_scrape_loop_snapshots_rates_and_quantiles(db, tmp_path, builders):
    f = tmp_path / "scrape.txt"
    f.write_text(builders.sglang_scrape(False, n=10))
    res = _ingest(db, f)
    snaps = db.execute("SELECT count(DISTINCT snapshot), min(ts), max(ts) FROM metrics WHERE source_id = ?",
                       [res.source_id]).fetchone()
    assert snaps[0] == 10 and str(snaps[1]) == "2026-04-17 00:33:00" and str(snaps[2]) == "2026-04-17 00:37:30"
    # the counter's 15 retractions between snapshot 5 and 6, i.e. in 30 s
    burst = db.execute("SELECT delta, interval_s, rate_per_s FROM metric_rates WHERE name ="
                       " 'sglang:num_retracted_requests_total' AND snapshot = 6").fetchone()
    assert burst == pytest.approx((15.0, 30.0, 0.5))
    # 20 TTFTs of 3.0 .. 4.9 s per snapshot: the interval p50 lies in the (2, 4] bucket
    p50 = db.execute("SELECT value, observations FROM metric_quantiles WHERE family = 'sglang:time_to_first_token_seconds'"
                     " AND \"window\" = 'interval' AND quantile = 0.5 AND snapshot = 3").fetchone()
    assert p50[1] == 20 and 2.0 < p50[0] <= 4.0
    cum = db.execute("SELECT observations FROM metric_quantiles WHERE family = 'sglang:time_to_first_token_seconds'"
                     " AND \"window\" = 'cumulative' AND quantile = 0.99 AND snapshot = 9").fetchone()
    assert cum == (200.0,)


def test_bare_date_lines_split_a_scrape_loop(db, tmp_path):
    body = ('# HELP vllm:num_requests_waiting Number of requests waiting.\n# TYPE vllm:num_requests_waiting gauge\n'
            'vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} %d.0\n')
    f = tmp_path / "loop.txt"
    f.write_text("Fri Apr 17 00:33:00 UTC 2026\n" + body % 3 + "Fri Apr 17 00:33:05 UTC 2026\n" + body % 5)
    res = _ingest(db, f)
    rows = db.execute("SELECT snapshot, ts, value FROM metrics WHERE source_id = ? ORDER BY line_no",
                      [res.source_id]).fetchall()
    assert [(r[0], r[2]) for r in rows] == [(0, 3.0), (1, 5.0)] and (rows[1][1] - rows[0][1]).total_seconds() == 5


def test_nccl_views_from_a_server_log_and_an_nccl_file(db, samples, tmp_path):
    log = tmp_path / "server.log"
    log.write_text((samples / "run_folder" / "sglang_server.log").read_text()
                   + (samples / "nccl_debug.log").read_text())  # NCCL lines interleaved in a server log
    res = _ingest(db, log)
    assert res.kind == "server_log"
    ch = db.execute("SELECT host, cuda_dev, channel, src_rank, dst_rank, transport, via FROM nccl_channels"
                    " WHERE source_id = ? ORDER BY line_no", [res.source_id]).fetchall()
    assert ch[0] == ("deepseek-v2-5-0", 0, 0, 0, 1, "P2P", "P2P/IPC/read") and len(ch) == 2
    cfg = dict(db.execute("SELECT key, value FROM nccl_config WHERE source_id = ?", [res.source_id]).fetchall())
    assert cfg["version"] == "2.21.5+cuda12.4" and cfg["network"] == "IB" and cfg["NCCL_IB_DISABLE"] == "0"
    assert cfg["nnodes"] == "1" and cfg["nranks"] == "8"
    assert db.execute("SELECT count(*) FROM nccl_channels WHERE run_id IS NOT NULL").fetchone()[0] == 2


def test_old_nccl_channel_forms(db, tmp_path):
    f = tmp_path / "nccl.txt"
    f.write_text("tesla-105:1477:2150 [1] NCCL INFO Channel 00 : 1[1a000] -> 2[af000] via direct shared memory\n"
                 "fsdp-worker-1:73:356 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [receive] via NET/Socket/0\n"
                 "h:1:1 [0] NCCL INFO Channel 00/0 : 1[102000] -> 2[202000] via P2P/IPC comm 0x7f2ab8622e40 nRanks 08\n")
    _ingest(db, f)
    rows = db.execute("SELECT src_dev, transport, direction, via FROM nccl_channels ORDER BY line_no").fetchall()
    assert rows == [("1a000", "SHM", None, "direct shared memory"), ("1", "NET", "receive", "NET/Socket/0"),
                    ("102000", "P2P", None, "P2P/IPC")]


def test_a_growing_loop_file_replaces_its_earlier_self(db, tmp_path, builders):
    f = tmp_path / "gpu.csv"
    f.write_text(builders.nvidia_csv(True, n=3))
    first = _ingest(db, f)
    f.write_text(builders.nvidia_csv(True, n=5))  # the sampler kept writing
    again = _ingest(db, f)
    assert again.status == "replaced" and again.source_id == first.source_id and again.notes
    assert db.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM gpu_samples").fetchone()[0] == 5
    assert _lines_text(db, again.source_id) == f.read_text()


def test_headers_printed_again_are_header_lines(db, tmp_path, samples, builders):
    csv = builders.nvidia_csv(True, n=2)
    f = tmp_path / "two_loops.csv"
    f.write_text(csv + csv)  # two `nvidia-smi -l` runs appended to one file
    res = _ingest(db, f)
    kinds = [k for (k,) in db.execute("SELECT kind FROM lines WHERE source_id = ? ORDER BY line_no",
                                      [res.source_id]).fetchall()]
    assert kinds == ["gpu_header", "gpu_samples", "gpu_samples"] * 2
    dmon = (samples / "dmon_default.txt").read_text()
    g = tmp_path / "dmon.txt"
    g.write_text(dmon + dmon.splitlines()[-1] + "\n" + dmon)  # dmon repeats its header
    res = _ingest(db, g)
    assert db.execute("SELECT count(*) FROM gpu_samples WHERE source_id = ?", [res.source_id]).fetchone()[0] == 3
