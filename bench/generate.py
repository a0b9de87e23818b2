"""Deterministic generator of realistic SGLang / vLLM server logs of a given size.

Usage::

    python bench/generate.py --engine sglang --size 200MB --seed 1 -o /tmp/sglang_200m.log
    python bench/generate.py --engine vllm --size 2GB -o /tmp/vllm_2g.log

The same (engine, size, seed) always gives the same bytes. Lines are built from the shapes
in ``parsers/*.toml`` samples and ``shared/docs/*-log-formats.md``:

* SGLang: shell preamble, bare post-init warnings, the ``server_args=ServerArgs(...)`` dump,
  startup milestones on every rank TP0..TP7 (distributed init, Gloo, weight load with shard
  bars, KV cache, CUDA graph capture with a ``\\r``-joined bar, limits), uvicorn startup,
  "fired up"; then serving: decode lines on all ranks with speculative ``accept len`` /
  ``accept rate``, prefill lines, HTTP access lines, retractions, an occasional unrecognised
  notice (template mining), an ASGI traceback, a ``sglang.bench_serving`` result block; the
  first launch dies in a ``Scheduler hit an exception`` traceback, and a second launch
  follows.
* vLLM V1 (0.10.2+ shape): ``(APIServer pid=..)`` / ``(EngineCore_DP0 pid=..)`` /
  ``(Worker_TP1 pid=..)`` process tags, banner, non-default args, engine config, worker
  startup (nccl, backend, weights, KV cache, graph capture), routes, then periodic
  ``Engine 000:`` stats, ``SpecDecoding metrics`` lines, HTTP access and request lines,
  warnings, one fatal EngineCore traceback and a restart.

``generate(path, engine, size, seed)`` is importable (the chunking tests use it with small
sizes).
"""
from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from pathlib import Path

MODEL = "deepseek-ai/DeepSeek-V3"
SITE = "/usr/local/lib/python3.12/dist-packages"


def parse_size(text: str) -> int:
    """'200MB' -> 200_000_000 (decimal units; MiB/GiB are binary)."""
    t = text.strip().upper()
    for suffix, mult in (("GIB", 1 << 30), ("MIB", 1 << 20), ("KIB", 1 << 10), ("GB", 10**9), ("MB", 10**6),
                         ("KB", 10**3), ("B", 1)):
        if t.endswith(suffix):
            return int(float(t[: -len(suffix)]) * mult)
    return int(t)


class _Out:
    """Buffered writer that counts bytes (the generator stops at the requested size)."""

    def __init__(self, fh):
        self.fh, self.n, self.buf = fh, 0, []
        self.lines = 0
        self.pending = 0  # characters buffered (bytes for ASCII; close enough for sizing)

    def w(self, line: str) -> None:
        self.buf.append(line)
        self.pending += len(line) + 1
        if len(self.buf) >= 4096:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            data = ("\n".join(self.buf) + "\n").encode("utf-8")
            self.fh.write(data)
            self.n += len(data)
            self.lines += len(self.buf)
            self.buf, self.pending = [], 0

    @property
    def size(self) -> int:
        return self.n + self.pending


# --------------------------------------------------------------------------------- SGLang

def _sgl_server_args(rng: random.Random, tp: int, spec: bool) -> str:
    keys = [
        ("model_path", f"'{MODEL}'"), ("tokenizer_path", f"'{MODEL}'"), ("tokenizer_mode", "'auto'"),
        ("skip_tokenizer_init", "False"), ("load_format", "'auto'"), ("model_loader_extra_config", "'{}'"),
        ("trust_remote_code", "True"), ("context_length", "131072"), ("is_embedding", "False"),
        ("revision", "None"), ("host", "'0.0.0.0'"), ("port", "30000"), ("dtype", "'auto'"),
        ("quantization", "'fp8'"), ("kv_cache_dtype", "'auto'"), ("mem_fraction_static", "0.85"),
        ("max_running_requests", "48" if spec else "None"), ("max_total_tokens", "None"),
        ("chunked_prefill_size", "8192"), ("max_prefill_tokens", "16384"), ("schedule_policy", "'fcfs'"),
        ("schedule_conservativeness", "1.0"), ("page_size", "1"), ("device", "'cuda'"),
        ("tp_size", str(tp)), ("pp_size", "1"), ("stream_interval", "1"), ("random_seed", str(rng.randint(1, 10**9))),
        ("watchdog_timeout", "300"), ("download_dir", "None"), ("base_gpu_id", "0"), ("log_level", "'info'"),
        ("log_requests", "False"), ("enable_metrics", "False"), ("enable_metrics_for_all_schedulers", "True"),
        ("decode_log_interval", "40"), ("api_key", "'sk-secretsecretsecret1234'"),
        ("served_model_name", f"'{MODEL}'"), ("chat_template", "None"), ("dp_size", "1"),
        ("load_balance_method", "'round_robin'"), ("dist_init_addr", "None"), ("nnodes", "1"), ("node_rank", "0"),
        ("json_model_override_args", "'{}'"), ("attention_backend", "'fa3'"), ("sampling_backend", "'flashinfer'"),
        ("grammar_backend", "'xgrammar'"),
        ("speculative_algorithm", "'EAGLE3'" if spec else "None"),
        ("speculative_draft_model_path", "'/models/eagle3/DeepSeek-V3-eagle3'" if spec else "None"),
        ("speculative_num_steps", "3" if spec else "None"), ("speculative_eagle_topk", "1" if spec else "None"),
        ("speculative_num_draft_tokens", "4" if spec else "None"), ("ep_size", "1"),
        ("moe_runner_backend", "'auto'"), ("enable_dp_attention", "False"), ("cuda_graph_max_bs", "256"),
        ("cuda_graph_bs", "None"), ("disable_cuda_graph", "False"), ("disable_radix_cache", "False"),
        ("enable_torch_compile", "False"), ("torch_compile_max_bs", "32"), ("disable_custom_all_reduce", "False"),
        ("disable_overlap_schedule", "False"), ("num_continuous_decode_steps", "1"),
    ]
    # pad with the long tail of rarely used flags, as real dumps have 300+ fields
    for i in range(220):
        keys.append((f"flag_{i:03d}_setting", rng.choice(["None", "False", "True", "0", "1.0", "'auto'"])))
    return "server_args=ServerArgs(" + ", ".join(f"{k}={v}" for k, v in keys) + ")"


def _traceback_sglang(rng: random.Random) -> list[str]:
    frames = [
        ("sglang/srt/managers/scheduler.py", 2810, "run_scheduler_process", "scheduler.event_loop_overlap()"),
        ("torch/utils/_contextlib.py", 120, "decorate_context", "return func(*args, **kwargs)"),
        ("sglang/srt/managers/scheduler.py", 1045, "event_loop_overlap", "batch_result = self.run_batch(batch)"),
        ("sglang/srt/managers/scheduler.py", 1912, "run_batch", "logits_output, next_token_ids = self.tp_worker.forward_batch_generation("),
        ("sglang/srt/managers/tp_worker.py", 250, "forward_batch_generation", "logits_output = self.model_runner.forward(forward_batch)"),
        ("sglang/srt/model_executor/model_runner.py", 1840, "forward", "return self.forward_decode(forward_batch)"),
    ]
    out = ["Traceback (most recent call last):"]
    for path, line, fn, code in frames:
        out.append(f'  File "{SITE}/{path}", line {line + rng.randint(0, 3)}, in {fn}')
        out.append(f"    {code}")
    return out


def _sgl_startup(o: _Out, rng: random.Random, t: dt.datetime, tp: int, spec: bool) -> dt.datetime:
    def ts():
        return t.strftime("%Y-%m-%d %H:%M:%S")

    o.w("+ export NCCL_PROTO=LL")
    o.w("+ export NCCL_ALGO=Ring")
    o.w(f"+ python3 -m sglang.launch_server --model-path {MODEL} --tp {tp} --trust-remote-code "
        f"--mem-fraction-static 0.85 --enable-metrics-for-all-schedulers"
        + (" --speculative-algorithm EAGLE3 --speculative-num-steps 3" if spec else ""))
    if spec:
        o.w("Max running requests is reset to 48 for speculative decoding. You can override this by "
            "explicitly setting --max-running-requests.")
        o.w("Overlap scheduler is disabled because of using eagle3 or standalone speculative decoding.")
    o.w(f"[{ts()}] {_sgl_server_args(rng, tp, spec)}")
    o.w(f"[{ts()}] Using default HuggingFace chat template with detected content format: openai")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Init torch distributed begin.")
    t += dt.timedelta(seconds=2)
    for r in rng.sample(range(tp), tp):
        o.w(f"[Gloo] Rank {r} is connected to {tp - 1} peer ranks. Expected number of connected peer ranks is : {tp - 1}")
    o.w(f"[{ts()} TP0] sglang is using nccl==2.27.3")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Init torch distributed ends. mem usage={rng.uniform(0.5, 0.7):.2f} GB")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Load weight begin. avail mem={rng.uniform(93, 94):.2f} GB")
    n_shards = 163
    for i in range(0, n_shards + 1, 3):
        o.w(f"Loading safetensors checkpoint shards: {100 * i // n_shards:3d}% Completed | {i}/{n_shards} "
            f"[{i // 10:02d}:{i % 60:02d}<{(n_shards - i) // 10:02d}:{(n_shards - i) % 60:02d},  {rng.uniform(5, 7):.2f}s/it]")
    o.w("")
    t += dt.timedelta(seconds=380)
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, "
            f"avail mem={rng.uniform(29, 30):.2f} GB, mem usage={rng.uniform(63.5, 64.5):.2f} GB.")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] KV Cache is allocated. #tokens: 1933682, KV size: 12.45 GB")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Memory pool end. avail mem={rng.uniform(14, 15):.2f} GB")
    bs = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48] + ([] if spec else list(range(56, 257, 8)))
    o.w(f"[{ts()} TP0] Capture cuda graph bs {bs}")
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Capture cuda graph begin. This can take up to several minutes. avail mem={rng.uniform(14, 15):.2f} GB")
    bar = "".join(f"Capturing batches (bs={b} avail_mem={rng.uniform(11, 12):.2f} GB): {100 * i // len(bs):3d}%|"
                  f"{'█' * (10 * i // len(bs)):<10}| {i}/{len(bs)} [00:{i:02d}<00:{len(bs) - i:02d},  2.00s/it]\r"
                  for i, b in enumerate(reversed(bs)))
    o.w("  0%|          | 0/10 [00:00<?, ?it/s]" + bar.rstrip("\r"))
    t += dt.timedelta(seconds=40)
    for r in rng.sample(range(tp), tp):
        o.w(f"[{ts()} TP{r}] Capture cuda graph end. Time elapsed: {rng.uniform(38, 44):.2f} s. "
            f"mem usage={rng.uniform(1.5, 1.7):.2f} GB. avail mem={rng.uniform(12.8, 13):.2f} GB.")
    o.w(f"[{ts()} TP0] max_total_num_tokens=1933682, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests={48 if spec else 2048}, context_len=131072, available_gpu_mem=12.85 GB")
    o.w(f"[{ts()}] INFO:     Started server process [{rng.randint(1000, 99999)}]")
    o.w(f"[{ts()}] INFO:     Waiting for application startup.")
    o.w(f"[{ts()}] INFO:     Application startup complete.")
    o.w(f"[{ts()}] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")
    o.w(f"[{ts()}] INFO:     127.0.0.1:{rng.randint(30000, 60000)} - \"GET /model_info HTTP/1.1\" 200 OK")
    o.w(f"[{ts()} TP0] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
        f"#running-req: 0, #queue-req: 0, ")
    o.w(f"[{ts()}] INFO:     127.0.0.1:{rng.randint(30000, 60000)} - \"POST /generate HTTP/1.1\" 200 OK")
    o.w(f"[{ts()}] The server is fired up and ready to roll!")
    return t


_SGL_NOTICES = [
    "Cache flushed successfully!",
    "Received abort request for rid={rid}",
    "Finish request rid={rid} with {n} output tokens after {s:.2f} s",
    "Scheduler idle for {s:.1f} s, {n} cached prefixes kept",
    "Rid {rid} stream chunk {n} delivered in {s:.3f} s",
]


def _sglang(o: _Out, rng: random.Random, size: int) -> None:
    tp, spec = 8, True
    t = dt.datetime(2026, 2, 6, 9, 15, 42)
    launches = 2
    for launch in range(launches):
        t = _sgl_startup(o, rng, t, tp, spec)
        budget = size * (launch + 1) // launches
        last_bench = o.size
        tb_at = o.size + (budget - o.size) // 2  # one ASGI traceback mid-run
        running, queued, tokens = 1, 0, 720
        step = 0
        while o.size < budget - 4096:
            step += 1
            t += dt.timedelta(seconds=1)
            ts = t.strftime("%Y-%m-%d %H:%M:%S")
            running = max(1, min(48, running + rng.randint(-3, 3)))
            queued = max(0, queued + rng.randint(-2, 2))
            tokens = max(100, tokens + rng.randint(-500, 600))
            usage = min(0.99, tokens / 1933682)
            # prefill on every rank then decode on every rank (--enable-metrics-for-all-schedulers)
            if step % 3 == 0:
                new_tok = rng.randint(1, 8192)
                cached = rng.randint(0, 4000)
                for r in range(tp):
                    o.w(f"[{ts} TP{r}] Prefill batch, #new-seq: {rng.randint(1, 4)}, #new-token: {new_tok}, "
                        f"#cached-token: {cached}, token usage: {usage:.2f}, #running-req: {running}, "
                        f"#queue-req: {queued}, ")
            acc = rng.uniform(1.5, 3.2)
            gen = rng.uniform(20, 60) * running
            for r in range(tp):
                o.w(f"[{ts} TP{r}] Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
                    f"accept len: {acc:.2f}, accept rate: {acc / 4:.2f}, cuda graph: {running <= 48}, "
                    f"gen throughput (token/s): {gen:.2f}, #queue-req: {queued}, ")
            for _ in range(rng.randint(1, 4)):
                o.w(f"[{ts}] INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "
                    f"\"POST /v1/chat/completions HTTP/1.1\" 200 OK")
            x = rng.random()
            if x < 0.02:
                r = rng.randrange(tp)
                o.w(f"[{ts} TP{r}] KV cache pool is full. Retract requests. #retracted_reqs: {rng.randint(1, 5)}, "
                    f"#new_token_ratio: {rng.uniform(0.1, 0.5):.4f} -> {rng.uniform(0.5, 0.9):.4f}")
            elif x < 0.10:
                tmpl = rng.choice(_SGL_NOTICES)
                o.w(f"[{ts}] " + tmpl.format(rid=f"{rng.getrandbits(64):016x}", n=rng.randint(1, 4000),
                                            s=rng.uniform(0, 30)))
            elif x < 0.11:
                o.w(f"[{ts}] Request is disconnected from the client side (type 1). Abort request "
                    f"obj.rid='{rng.getrandbits(64):016x}'")
            if o.size >= tb_at:
                tb_at = 1 << 62
                o.w(f"[{ts}] ERROR:    Exception in ASGI application")
                for line in _traceback_sglang(rng)[:5]:
                    o.w(line)
                o.w("ValueError: Input length (140000 tokens) exceeds the maximum allowed length (131072 tokens).")
            if o.size - last_bench > 64 << 20 or step == 50:
                last_bench = o.size
                _bench_block(o, rng)
        ts = t.strftime("%Y-%m-%d %H:%M:%S")
        if launch == 0:  # the first launch crashes
            o.w(f"[{ts} TP3] Scheduler hit an exception: " + _traceback_sglang(rng)[0])
            for line in _traceback_sglang(rng)[1:]:
                o.w(line)
            o.w("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 3 has a total capacity "
                "of 79.19 GiB of which 1.12 GiB is free.")
            o.w("")
            o.w(f"[{ts}] Received sigquit from a child process. It usually means the child failed.")
            t += dt.timedelta(minutes=5)
        else:
            o.w(f"[{ts}] Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].")


def _bench_block(o: _Out, rng: random.Random) -> None:
    rows = [
        ("Backend:", "sglang"), ("Traffic request rate:", "inf"), ("Max request concurrency:", "64"),
        ("Successful requests:", "1000"), ("Benchmark duration (s):", f"{rng.uniform(100, 140):.2f}"),
        ("Total input tokens:", "1024000"), ("Total generated tokens:", "256000"),
        ("Total generated tokens (retokenized):", "255870"), ("Request throughput (req/s):", f"{rng.uniform(7, 9):.2f}"),
        ("Input token throughput (tok/s):", f"{rng.uniform(8000, 9000):.2f}"),
        ("Output token throughput (tok/s):", f"{rng.uniform(2000, 2300):.2f}"),
        ("Total token throughput (tok/s):", f"{rng.uniform(10000, 11000):.2f}"), ("Concurrency:", "62.87"),
        ("Accept length:", f"{rng.uniform(2, 3):.2f}"),
    ]
    o.w("============ Serving Benchmark Result ============")
    for k, v in rows:
        o.w(f"{k:<40} {v:<10}")
    o.w("----------------End-to-End Latency----------------")
    o.w(f"{'Mean E2E Latency (ms):':<40} {rng.uniform(7000, 8000):<10.2f}")
    o.w(f"{'Median E2E Latency (ms):':<40} {rng.uniform(7000, 8000):<10.2f}")
    o.w("---------------Time to First Token----------------")
    for k in ("Mean", "Median", "P99"):
        o.w(f"{k + ' TTFT (ms):':<40} {rng.uniform(200, 1500):<10.2f}")
    o.w("---------------Inter-Token Latency----------------")
    for k in ("Mean", "Median", "P99"):
        o.w(f"{k + ' ITL (ms):':<40} {rng.uniform(20, 90):<10.2f}")
    o.w("==================================================")


# ----------------------------------------------------------------------------------- vLLM

def _vllm(o: _Out, rng: random.Random, size: int) -> None:
    tp = 4
    t = dt.datetime(2025, 9, 15, 10, 0, 0)
    launches = 2
    for launch in range(launches):
        api, core = rng.randint(1, 50), rng.randint(200, 400)
        workers = [core + 60 + i for i in range(tp)]

        def ts():
            return t.strftime("%m-%d %H:%M:%S")

        def A(msg, lvl="INFO", f="api_server.py:1805"):
            o.w(f"(APIServer pid={api}) {lvl} {ts()} [{f}] {msg}")

        def C(msg, lvl="INFO", f="core.py:76"):
            o.w(f"(EngineCore_DP0 pid={core}) {lvl} {ts()} [{f}] {msg}")

        def W(i, msg, lvl="INFO", f="gpu_worker.py:276"):
            o.w(f"(Worker_TP{i} pid={workers[i]}) {lvl} {ts()} [{f}] {msg}")

        o.w(f"INFO {ts()} [__init__.py:216] Automatically detected platform cuda.")
        A("vLLM API server version 0.10.2")
        A("non-default args: {'model_tag': '" + MODEL + "', 'host': '0.0.0.0', 'model': '" + MODEL
          + "', 'trust_remote_code': True, 'max_model_len': 32768, 'tensor_parallel_size': 4, "
          "'api_key': ['sk-secretsecretsecret1234'], 'speculative_config': {'method': 'deepseek_mtp', "
          "'num_speculative_tokens': 3}}", f="utils.py:328")
        A("Resolved architecture: DeepseekV3ForCausalLM", f="__init__.py:742")
        A("Using max model len 32768", f="__init__.py:1815")
        A("Chunked prefill is enabled with max_num_batched_tokens=8192.", f="scheduler.py:222")
        C("Initializing a V1 LLM engine (v0.10.2) with config: model='" + MODEL + "', speculative_config="
          "SpeculativeConfig(method='deepseek_mtp', model='" + MODEL + "', num_spec_tokens=3), tokenizer='" + MODEL
          + "', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=True, "
          "dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, tensor_parallel_size=4, "
          "pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, quantization=fp8, "
          "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=" + MODEL
          + ", enable_prefix_caching=True, chunked_prefill_enabled=True, pooler_config=None, "
          "compilation_config={\"level\":3,\"cudagraph_mode\":[2,1],\"use_inductor\":true}")
        C("Reducing Torch parallelism from 48 threads to 1 to avoid unnecessary CPU contention.", "WARNING",
          "multiproc_worker_utils.py:273")
        for i in range(tp):
            W(i, "vLLM is using nccl==2.27.3", f="pynccl.py:70")
        for i in range(tp):
            W(i, f"rank {i} in world size {tp} is assigned as DP rank 0, PP rank 0, TP rank {i}, EP rank {i}",
              f="parallel_state.py:1165")
        for i in range(tp):
            W(i, f"Starting to load model {MODEL}...", f="gpu_model_runner.py:2338")
            W(i, "Using Flash Attention backend on V1 engine.", f="cuda.py:328")
        for k in range(0, 164, 4):
            o.w(f"(Worker_TP0 pid={workers[0]}) Loading safetensors checkpoint shards: {100 * k // 163:3d}% "
                f"Completed | {k}/163 [00:{k % 60:02d}<00:{(163 - k) % 60:02d},  1.57it/s]")
        t += dt.timedelta(seconds=300)
        for i in range(tp):
            W(i, f"Loading weights took {rng.uniform(280, 300):.2f} seconds", f="default_loader.py:268")
            W(i, f"Model loading took {rng.uniform(160, 170):.4f} GiB and {rng.uniform(290, 310):.6f} seconds",
              f="gpu_model_runner.py:2392")
        for i in range(tp):
            W(i, f"Available KV cache memory: {rng.uniform(18, 19):.2f} GiB")
        C("GPU KV cache size: 1,234,560 tokens", f="kv_cache_utils.py:864")
        C("Maximum concurrency for 32,768 tokens per request: 37.68x", f="kv_cache_utils.py:868")
        o.w(f"(Worker_TP0 pid={workers[0]}) Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|"
            f"██████████| 67/67 [00:09<00:00,  7.04it/s]")
        for i in range(tp):
            W(i, f"Graph capturing finished in {rng.randint(8, 12)} secs, took 0.85 GiB", f="gpu_model_runner.py:2708")
        C("init engine (profile, create kv cache, warmup model) took 120.50 seconds", f="core.py:218")
        A("Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 77160", f="loggers.py:142")
        A("Starting vLLM API server 0 on http://0.0.0.0:8000", f="api_server.py:1857")
        for route in ("/openapi.json", "/docs", "/health", "/v1/models", "/v1/chat/completions", "/v1/completions"):
            A(f"Route: {route}, Methods: GET, POST", f="launcher.py:37")
        o.w(f"(APIServer pid={api}) INFO:     Started server process [{api}]")
        o.w(f"(APIServer pid={api}) INFO:     Waiting for application startup.")
        o.w(f"(APIServer pid={api}) INFO:     Application startup complete.")
        budget = size * (launch + 1) // launches
        tb_at = o.size + (budget - o.size) * 3 // 4 if launch == 0 else 1 << 62
        step = 0
        running = 1
        while o.size < budget - 4096:
            step += 1
            t += dt.timedelta(seconds=1)
            for _ in range(rng.randint(1, 6)):
                rid = f"chatcmpl-{rng.getrandbits(96):024x}"
                A(f"Added request {rid}.", f="async_llm.py:326")
                o.w(f"(APIServer pid={api}) INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "
                    f"\"POST /v1/chat/completions HTTP/1.1\" 200 OK")
            if step % 10 == 0:
                running = max(0, min(256, running + rng.randint(-10, 10)))
                A(f"Engine 000: Avg prompt throughput: {rng.uniform(0, 9000):.1f} tokens/s, Avg generation "
                  f"throughput: {rng.uniform(0, 2000):.1f} tokens/s, Running: {running} reqs, Waiting: "
                  f"{rng.randint(0, 50)} reqs, GPU KV cache usage: {rng.uniform(0, 99):.1f}%, Prefix cache hit "
                  f"rate: {rng.uniform(0, 80):.1f}%", f="loggers.py:123")
                acc, drf = rng.randint(50, 400), rng.randint(400, 600)
                pp = ", ".join(f"{rng.uniform(0.1, 0.9):.3f}" for _ in range(3))
                A(f"SpecDecoding metrics: Mean acceptance length: {1 + 3 * acc / drf:.2f}, Accepted throughput: "
                  f"{acc / 10:.2f} tokens/s, Drafted throughput: {drf / 10:.2f} tokens/s, Accepted: {acc} tokens, "
                  f"Drafted: {drf} tokens, Per-position acceptance rate: {pp}, Avg Draft acceptance rate: "
                  f"{100 * acc / drf:.1f}%", f="metrics.py:96")
            x = rng.random()
            if x < 0.01:
                W(rng.randrange(tp), "No available shared memory broadcast block found in 60 seconds. This typically "
                  "happens when some processes are hanging or doing some time-consuming work (e.g. compilation)",
                  f="shm_broadcast.py:466")
            elif x < 0.05:
                A(f"Aborted request chatcmpl-{rng.getrandbits(96):024x}.", f="async_llm.py:400")
            elif x < 0.08:
                A(f"Detokenizer stream for chatcmpl-{rng.getrandbits(96):024x} flushed {rng.randint(1, 900)} "
                  f"tokens in {rng.uniform(0, 3):.3f} s", f="detokenizer.py:{0}".format(rng.randint(100, 200)))
            if o.size >= tb_at:
                break
        if launch == 0:
            C("EngineCore encountered a fatal error.", "ERROR", "core.py:700")
            p = f"(EngineCore_DP0 pid={core}) "
            o.w(p + "Traceback (most recent call last):")
            for path, ln, fn, code in [
                ("vllm/v1/engine/core.py", 691, "run_engine_core", "engine_core.run_busy_loop()"),
                ("vllm/v1/engine/core.py", 718, "run_busy_loop", "self._process_engine_step()"),
                ("vllm/v1/engine/core.py", 743, "_process_engine_step", "outputs, model_executed = self.step_fn()"),
                ("vllm/v1/executor/multiproc_executor.py", 243, "get_response",
                 "raise RuntimeError(f\"Worker failed with error '{e}'\")"),
            ]:
                o.w(p + f'  File "{SITE}/{path}", line {ln}, in {fn}')
                o.w(p + f"    {code}")
            o.w(p + "RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was encountered', "
                "please check the stack trace above for the root cause")
            A("AsyncLLM output_handler failed.", "ERROR", "async_llm.py:480")
            A("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", "ERROR", "core_client.py:564")
            t += dt.timedelta(minutes=3)
        else:
            A("Shutting down FastAPI HTTP server.", f="launcher.py:80")


def generate(path: str | Path, engine: str = "sglang", size: int = 200 << 20, seed: int = 1) -> Path:
    rng = random.Random(f"{engine}:{seed}")
    path = Path(path)
    with open(path, "wb") as fh:
        o = _Out(fh)
        (_sglang if engine == "sglang" else _vllm)(o, rng, size)
        o.flush()
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=["sglang", "vllm"], default="sglang")
    ap.add_argument("--size", default="200MB", help="target size, e.g. 200MB, 2GB")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    p = generate(a.output, a.engine, parse_size(a.size), a.seed)
    sys.stderr.write(f"wrote {p} ({p.stat().st_size / 1e6:.1f} MB)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
