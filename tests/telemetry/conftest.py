"""Fixtures of the telemetry tests: sample files, and a run folder generated around a real log.

The folder holds the real SGLang log of ``tests/samples/telemetry/run_folder`` (a run from
2026-04-17 00:31:41 to 00:39:14, port 30000) and, from the same minutes, a Prometheus scrape
loop written by prometheus_client itself for SGLang's documented metric names, an
nvidia-smi ``--query-gpu`` CSV loop, a bench_serving JSONL result and NCCL_DEBUG output.
``healthy=False`` puts into them what each telemetry rule looks for; ``healthy=True`` the
counterpart the rules must stay silent on.
"""
from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "telemetry"
LOG = SAMPLES / "run_folder" / "sglang_server.log"
#: the model path the sample server log serves (its server_args), so scrapes match that run
MODEL = re.search(r"model_path='([^']+)'", LOG.read_text(encoding="utf-8")).group(1)
T0 = dt.datetime(2026, 4, 17, 0, 33, 0)  # the run serves from 00:32:21 to 00:39:14
STEP = dt.timedelta(seconds=30)
N = 10  # snapshots / GPU samples, 00:33:00 .. 00:37:30


def sglang_scrape(healthy: bool, n: int = N, t0: dt.datetime = T0) -> str:
    """A scrape loop's file: `# <ISO time>` then prometheus_client's exposition, n times."""
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

    reg = CollectorRegistry()
    sched = ["model_name", "engine_type", "tp_rank", "pp_rank"]
    waiting = Gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", sched, registry=reg)
    running = Gauge("sglang:num_running_reqs", "The number of running requests.", sched, registry=reg)
    usage = Gauge("sglang:token_usage", "The token usage.", sched, registry=reg)
    retracted = Counter("sglang:num_retracted_requests", "Total retracted requests.", sched, registry=reg)
    queue = Histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sched, registry=reg,
                      buckets=[0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 20, 40, 60, 80, 100, 200, 400])
    ttft = Histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                     ["model_name"], registry=reg,
                     buckets=[0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400])
    gen = Counter("sglang:generation_tokens", "Number of generation tokens processed.", ["model_name"], registry=reg)
    lab = dict(model_name=MODEL, engine_type="unified", tp_rank="0", pp_rank="0")
    parts = []
    for k in range(n):
        busy_queue = not healthy and k < 5  # the first half: requests wait while the GPU idles
        waiting.labels(**lab).set(8 if busy_queue else 0)
        running.labels(**lab).set(4)
        usage.labels(**lab).set(0.62)
        retracted.labels(**lab).inc(0)  # the series exists from the start, as SGLang's collector makes it
        if not healthy and k == 6:
            retracted.labels(**lab).inc(15)  # a burst of retractions in one 30 s interval
        elif k == 6:
            retracted.labels(**lab).inc(1)
        for j in range(20):
            if healthy:
                queue.labels(**lab).observe(0.005 + 0.001 * j)
                ttft.labels(model_name=MODEL).observe(0.12 + 0.01 * j)
            else:
                queue.labels(**lab).observe(2.5 + 0.1 * j)
                ttft.labels(model_name=MODEL).observe(3.0 + 0.1 * j)
        gen.labels(model_name=MODEL).inc(600 + 10 * k)
        parts.append(f"# {(t0 + k * STEP).isoformat()}\n" + generate_latest(reg).decode())
    return "".join(parts)


def nvidia_csv(healthy: bool, n: int = N, t0: dt.datetime = T0) -> str:
    header = ("timestamp, index, name, pstate, utilization.gpu [%], memory.used [MiB], memory.total [MiB], "
              "power.draw [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, clocks_throttle_reasons.active, "
              "pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max")
    rows = [header]
    for k in range(n):
        ts = (t0 + k * STEP).strftime("%Y/%m/%d %H:%M:%S.000")
        if healthy:
            util, used, clock, temp, mask, gen, width = 93, 75000, 1980, 62, 0x0, 4, 16
        elif k < 5:
            util, used, clock, temp, mask, gen, width = 4, 79500, 1980, 55, 0x0, 4, 8
        else:  # busy, hot and capped: sw_power_cap + sw_thermal_slowdown, link trained at Gen3
            util, used, clock, temp, mask, gen, width = 97, 79500, 1215, 87, 0x24, 3, 8
        rows.append(f"{ts}, 0, NVIDIA A100-SXM4-80GB, P0, {util:>3} %, {used} MiB, 81559 MiB, {300 + util * 1.5:.2f} W, "
                    f"{clock} MHz, 1980 MHz, {temp}, 0x{mask:016x}, {gen}, 4, {width}, 16")
    return "\n".join(rows) + "\n"


def bench_jsonl(healthy: bool) -> str:
    import json

    ttfts = [0.12, 0.15, 0.2, 0.25] if healthy else [2.8, 3.5, 4.1, 5.2]
    obj = {"tag": None, "backend": "sglang", "dataset_name": "random", "request_rate": float("inf"),
           "max_concurrency": 4, "server_info": {"model_path": MODEL}, "duration": 120.0, "completed": 4,
           "total_input_tokens": 512, "total_output_tokens": 64, "request_throughput": 0.03,
           "output_throughput": 0.53, "mean_ttft_ms": 1000 * sum(ttfts) / 4, "median_ttft_ms": 1000 * ttfts[1],
           "p99_ttft_ms": 1000 * ttfts[-1], "mean_itl_ms": 21.0, "p99_itl_ms": 40.0, "concurrency": 3.9,
           "accept_length": None, "ttfts": ttfts, "itls": [[0.02, 0.021], [0.019, 0.02], [0.022, 0.04], [0.02, 0.02]],
           "input_lens": [128] * 4, "output_lens": [16] * 4, "errors": [""] * 4}
    return json.dumps(obj) + "\n"  # json.dumps writes inf as Infinity, as bench_serving does


def nccl_output(healthy: bool) -> str:
    p = "node0:23440:23664 [0] NCCL INFO "
    lines = ["NCCL version 2.21.5+cuda12.4", p + "Using network Socket",
             p + "NCCL_PROTO set by environment to LL",
             p + "comm 0x563d5b2b3360 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
             p + "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"]
    if healthy:
        lines += [p + "Channel 01/0 : 0[0] -> 1[1] via P2P/IPC/read",
                  p + "AllReduce: 4 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"]
    else:  # one channel fell back to host memory, and NCCL chose Simple although LL was set
        lines += ["node0:23440:23664 [0] NCCL INFO Channel 01 : 0[0] -> 1[1] via SHM/direct/direct",
                  p + "AllReduce: 4 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}"]
    return "\n".join(lines) + "\n"


def write_run_folder(folder: Path, healthy: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(LOG, folder / "sglang_server.log")
    (folder / "metrics.prom").write_text(sglang_scrape(healthy))
    (folder / "gpu.csv").write_text(nvidia_csv(healthy))
    (folder / "bench.jsonl").write_text(bench_jsonl(healthy))
    (folder / "nccl.txt").write_text(nccl_output(healthy))
    return folder


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def builders():
    """The generators above, for tests that write their own variants."""
    import types

    return types.SimpleNamespace(sglang_scrape=sglang_scrape, nvidia_csv=nvidia_csv, bench_jsonl=bench_jsonl,
                                 nccl_output=nccl_output, T0=T0, STEP=STEP, MODEL=MODEL)


@pytest.fixture
def run_folder(tmp_path):
    """write_run_folder(healthy) -> a folder under tmp_path (one per call)."""
    made = []

    def make(healthy: bool) -> Path:
        made.append(healthy)
        return write_run_folder(tmp_path / f"run{len(made)}_{'healthy' if healthy else 'unhealthy'}", healthy)
    return make
