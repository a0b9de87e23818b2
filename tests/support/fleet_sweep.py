"""A generated fleet swept over benchmark concurrency and tensor-parallel size (vLLM V1 logs).

Each host serves one model with one TP size and is driven by a benchmark client at one
concurrency, as a deployment sweep does. Its log has the vLLM V1 shape of bench/generate.py
(banner, non-default args, engine config, worker start-up, "Application startup complete",
``Engine 000:`` stats every 10 s) with a load story of its own: ramp-up with prefills, a
steady stretch at the client's concurrency, drain; at concurrency 1 each request starts with
a prefill interval and decodes alone for the next ones. Beside it, ``bench.log`` holds the
client's ``vllm bench serve`` result block with its "Maximum request concurrency".

Throughput is a simple model of a decode-bound server: per-request speed falls as the batch
grows, TP8 decodes faster than TP4, and every host differs from the model by a few percent
(``jitter``), so a healthy fleet is not a fleet of identical numbers. ``Host.speed`` scales
one host (a slow node); ``Host.served_at`` makes the server see fewer requests than the
client was set to (a client that never loaded its host).
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from pathlib import Path

MODEL = "meta-llama/Llama-3.3-70B-Instruct"
BASE_TOK_S = {2: 24.0, 4: 38.0, 8: 55.0}  # one request's decode speed by TP size


@dataclass
class Host:
    name: str
    tp: int
    concurrency: int
    speed: float = 1.0  # 0.6: decodes at 60% of its peers' speed
    served_at: int | None = None  # the running requests the server really saw (None: the concurrency)
    steady: int = 24  # stats lines of the steady stretch
    extra_args: str = ""  # more non-default args, e.g. ", 'kv_offloading_size': 64.0"


def per_request_tok_s(tp: int, running: int) -> float:
    return BASE_TOK_S[tp] / (1 + running / 48)


def _stats(rng: random.Random, running: int, gen: float, prompt: float, waiting: int = 0) -> str:
    return (f"Engine 000: Avg prompt throughput: {prompt:.1f} tokens/s, Avg generation throughput: {gen:.1f} "
            f"tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: "
            f"{min(99.0, 0.4 * running + rng.uniform(0, 1)):.1f}%, Prefix cache hit rate: {rng.uniform(0, 5):.1f}%")


def _load_story(h: Host, rng: random.Random, jitter: float) -> list[tuple[int, float, float]]:
    """(running, gen tok/s, prompt tok/s) per 10 s stats interval."""
    c = h.served_at or h.concurrency

    def gen(running: int, share: float = 1.0) -> float:
        return running * per_request_tok_s(h.tp, running) * h.speed * jitter * share * rng.uniform(0.97, 1.03)

    out: list[tuple[int, float, float]] = [(0, 0.0, 0.0)]
    if c == 1:  # one request at a time: a prefill interval, then decoding alone
        for i in range(h.steady):
            out.append((1, gen(1, 0.55), rng.uniform(300, 900)) if i % 6 == 0 else (1, gen(1), 0.0))
    else:
        ramp = sorted({max(1, c // 4), max(1, c // 2)})
        out += [(1, gen(1, 0.3), rng.uniform(2000, 4000))] + [(r, gen(r, 0.7), rng.uniform(2000, 6000)) for r in ramp]
        out += [(c, gen(c), rng.uniform(50, 400)) for _ in range(h.steady)]
        out += [(max(1, c // 2), gen(max(1, c // 2), 0.6), 0.0), (1, gen(1, 0.35), 0.0)]
    out += [(0, 0.0, 0.0), (0, 0.0, 0.0)]
    return out


def server_log(h: Host, seed: int = 0) -> str:
    rng = random.Random(f"{h.name}:{seed}")
    jitter = rng.uniform(0.95, 1.05)
    t = dt.datetime(2026, 3, 2, 9, 0, 0) + dt.timedelta(minutes=rng.randint(0, 50))
    api, core = rng.randint(100, 999), rng.randint(1000, 1999)
    lines: list[str] = []

    def stamp() -> str:
        return t.strftime("%m-%d %H:%M:%S")

    def api_line(msg: str, where: str = "api_server.py:1805") -> None:
        lines.append(f"(APIServer pid={api}) INFO {stamp()} [{where}] {msg}")

    def core_line(msg: str, where: str = "core.py:76") -> None:
        lines.append(f"(EngineCore_DP0 pid={core}) INFO {stamp()} [{where}] {msg}")

    lines.append(f"INFO {stamp()} [__init__.py:216] Automatically detected platform cuda.")
    api_line("vLLM API server version 0.10.2")
    api_line("non-default args: {'model_tag': '" + MODEL + "', 'host': '0.0.0.0', 'model': '" + MODEL
             + f"', 'max_model_len': 16384, 'tensor_parallel_size': {h.tp}, 'max_num_seqs': 256{h.extra_args}}}",
             "utils.py:328")
    core_line("Initializing a V1 LLM engine (v0.10.2) with config: model='" + MODEL + "', speculative_config=None, "
              "tokenizer='" + MODEL + "', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
              f"trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=16384, download_dir=None, load_format=auto, "
              f"tensor_parallel_size={h.tp}, pipeline_parallel_size=1, data_parallel_size=1, "
              "disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, "
              f"device_config=cuda, seed=0, served_model_name={MODEL}, enable_prefix_caching=True, "
              "chunked_prefill_enabled=True, pooler_config=None")
    # NCCL_DEBUG=INFO names the host (parsers/hosts.toml probes it when no --host is given); NCCL
    # writes from C, so its lines carry no (Worker_TP0 pid=...) prefix
    lines.append(f"{h.name}:{core + 10}:{core + 10} [0] NCCL INFO Bootstrap : "
                 "Using lo:127.0.0.1<0>")
    for i in range(h.tp):
        lines.append(f"(Worker_TP{i} pid={core + 10 + i}) INFO {stamp()} [parallel_state.py:1165] rank {i} in world "
                     f"size {h.tp} is assigned as DP rank 0, PP rank 0, TP rank {i}, EP rank {i}")
    lines.append(f"(Worker_TP0 pid={core + 10}) INFO {stamp()} [cuda.py:328] Using Flash Attention backend on V1 engine.")
    t += dt.timedelta(seconds=240)
    lines.append(f"(Worker_TP0 pid={core + 10}) INFO {stamp()} [gpu_model_runner.py:2392] Model loading took "
                 f"{140 / h.tp:.4f} GiB and 200.5 seconds")
    core_line("GPU KV cache size: 1,034,560 tokens", "kv_cache_utils.py:864")
    core_line("init engine (profile, create kv cache, warmup model) took 60.50 seconds", "core.py:218")
    api_line("Starting vLLM API server 0 on http://0.0.0.0:8000", "api_server.py:1857")
    lines.append(f"(APIServer pid={api}) INFO:     Application startup complete.")
    for running, gen, prompt in _load_story(h, rng, jitter):
        t += dt.timedelta(seconds=10)
        if prompt:
            lines.append(f"(APIServer pid={api}) INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "
                         "\"POST /v1/completions HTTP/1.1\" 200 OK")
        api_line(_stats(rng, running, gen, prompt), "loggers.py:123")
    api_line("Shutting down FastAPI HTTP server.", "launcher.py:80")
    return "\n".join(lines) + "\n"


def bench_log(h: Host) -> str:
    """The client's result block (vllm bench serve) with the concurrency it was set to."""
    n = max(8, 4 * h.concurrency)
    rows = [("Successful requests:", n), ("Failed requests:", 0), ("Maximum request concurrency:", h.concurrency),
            ("Benchmark duration (s):", "240.00"), ("Total input tokens:", n * 512),
            ("Total generated tokens:", n * 256), ("Request throughput (req/s):", f"{n / 240:.2f}"),
            ("Output token throughput (tok/s):", f"{n * 256 / 240:.2f}"),
            ("Total token throughput (tok/s):", f"{n * 768 / 240:.2f}")]
    body = ["Traffic request rate: inf", f"Maximum request concurrency: {h.concurrency}",
            "============ Serving Benchmark Result ============"]
    body += [f"{k:<40} {v:<10}" for k, v in rows]
    body += ["---------------Time to First Token----------------", f"{'Mean TTFT (ms):':<40} {120.5:<10}",
             "==================================================" ]
    return "\n".join(body) + "\n"


def write_fleet(root: Path, hosts: list[Host], client_apart: bool = True) -> list[Path]:
    """root/HOST/server.log and root/HOST/bench.log for each host; the paths written.
    ``client_apart=False``: the client's block at the end of server.log instead (one console
    for both, as a launcher script that runs the server and then the benchmark writes it)."""
    paths = []
    for h in hosts:
        folder = root / h.name
        folder.mkdir(parents=True, exist_ok=True)
        text = server_log(h)
        (folder / "server.log").write_text(text if client_apart else text + bench_log(h), encoding="utf-8")
        paths.append(folder / "server.log")
        if client_apart:
            (folder / "bench.log").write_text(bench_log(h), encoding="utf-8")
            paths.append(folder / "bench.log")
    return paths


def swept_fleet(concurrencies=(1, 8), tps=(4, 8), replicas: int = 3) -> list[Host]:
    """Every (TP, concurrency) point on ``replicas`` hosts, named tp4-c008-r1 and so on."""
    return [Host(f"tp{tp}-c{c:03d}-r{r}", tp, c) for tp in tps for c in concurrencies for r in range(1, replicas + 1)]
