"""Benchmark: a folder of many small logs ingested with one command (issue 15 target: 5,000
two-line files in under a minute).

    python bench/small_files.py                # N=500
    python bench/small_files.py -n 500 5000    # one folder per N, each into a fresh database
    python bench/small_files.py -n 200 --profile   # cProfile of the ingest (in-process), top 40
    python bench/small_files.py --launches 2000    # one file of 2,000 SGLang launches (per-run cost)

Generates N two-line logs in a temporary folder, deterministically (file i is always the
same bytes): even i an SGLang log (a decode-stats line and an HTTP access line), odd i a vLLM
V1 log (an ``Engine 000:`` stats line and an access line). Every file is distinct (sha256),
so none is skipped as already ingested. Then times ``logsleuth --db FRESH ingest FOLDER``
under ``/usr/bin/time -v`` and prints wall and CPU seconds, files/s, the per-file cost and the
projection to 5,000 files. ``--launches N`` instead writes one SGLang log of N short
launches (server args, weights, ready, a decode line and a request each: 6 lines, N runs),
deterministically, and times its ingest (CPU per run); with ``--profile`` it is profiled.
``--json FILE`` appends the figures.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import logsleuth_cmd, timed  # noqa: E402


def small_log(i: int) -> str:
    """The two lines of file ``i`` (SGLang for even ``i``, vLLM for odd)."""
    mm, ss = i // 60 % 60, i % 60
    if i % 2 == 0:
        return (f"[2026-02-06 09:{mm:02d}:{ss:02d} TP0] Decode batch. #running-req: {1 + i % 7}, "
                f"#token: {100 + i}, token usage: 0.0{i % 10}, gen throughput (token/s): {50 + i % 40}.{i % 10}, "
                f"#queue-req: 0\n"
                f"[2026-02-06 09:{mm:02d}:{ss:02d}] INFO:     127.0.0.1:{40000 + i % 20000} - "
                f"\"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")
    return (f"(APIServer pid={1000 + i}) INFO 02-06 09:{mm:02d}:{ss:02d} [loggers.py:123] Engine 000: "
            f"Avg prompt throughput: {i % 97}.0 tokens/s, Avg generation throughput: {40 + i % 50}.{i % 10} tokens/s, "
            f"Running: {1 + i % 5} reqs, Waiting: 0 reqs, GPU KV cache usage: {i % 9}.{i % 7}%, "
            f"Prefix cache hit rate: 0.0%\n"
            f"(APIServer pid={1000 + i}) INFO:     127.0.0.1:{40000 + i % 20000} - "
            f"\"POST /v1/completions HTTP/1.1\" 200 OK\n")


def launches_log(n: int) -> str:
    """One SGLang log of ``n`` launches, one after the other (6 lines each), a minute apart."""
    out = []
    for i in range(n):
        day, minute = 1 + i // 1440, i % 1440
        ts = lambda s, d=day, m=minute: f"[2026-03-{d:02d} {m // 60:02d}:{m % 60:02d}:{s:02d}]"  # noqa: E731
        out += [f"{ts(0)} server_args=ServerArgs(model_path='org/model-{i % 5}', tp_size=1, dp_size=1, "
                f"mem_fraction_static=0.8{i % 10}, attention_backend='fa3', cuda_graph_max_bs={8 << i % 4}, "
                f"random_seed={1000 + i})",
                f"{ts(1)} Load weight begin. avail mem=78.{i % 10} GB",
                f"{ts(9)} Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.63 GB, "
                f"mem usage=15.05 GB.",
                f"{ts(20)} The server is fired up and ready to roll!",
                f"{ts(30)} Decode batch, #running-req: 1, #token: {100 + i}, token usage: 0.00, cuda graph: True, "
                f"gen throughput (token/s): {90 + i % 20}.5, #queue-req: 0, ",
                f"{ts(31)} INFO:     127.0.0.1:{40000 + i % 20000} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"]
    return "\n".join(out) + "\n"


def write_folder(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"server_{i:05d}.log").write_text(small_log(i), encoding="utf-8")
    return folder


def bench(n: int, keep: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-small-"))
    try:
        folder = write_folder(tmp / f"small_{n}", n)
        db = tmp / "small.duckdb"
        r = timed(logsleuth_cmd() + ["--db", str(db), "ingest", str(folder)])
        if r["rc"] != 0:
            print(r["err"], file=sys.stderr)
        per_file = r["cpu"] / n
        return {"files": n, "rc": r["rc"], "wall_s": round(r["wall"], 2), "cpu_s": round(r["cpu"], 2),
                "rss_mb": round(r["rss_mb"], 1), "files_per_s_wall": round(n / r["wall"], 1) if r["wall"] else None,
                "files_per_s_cpu": round(n / r["cpu"], 1) if r["cpu"] else None,
                "cpu_ms_per_file": round(1000 * per_file, 2),
                "projected_5000_cpu_s": round(5000 * r["cpu"] / n, 1),
                "projected_5000_wall_s": round(5000 * r["wall"] / n, 1)}
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def bench_launches(n: int) -> dict:
    """Ingest one log of ``n`` launches into a fresh database."""
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-launches-"))
    try:
        path = tmp / f"launches_{n}.log"
        path.write_text(launches_log(n), encoding="utf-8")
        r = timed(logsleuth_cmd() + ["--db", str(tmp / "l.duckdb"), "ingest", str(path)])
        if r["rc"] != 0:
            print(r["err"], file=sys.stderr)
        return {"launches": n, "rc": r["rc"], "wall_s": round(r["wall"], 2), "cpu_s": round(r["cpu"], 2),
                "rss_mb": round(r["rss_mb"], 1), "cpu_ms_per_run": round(1000 * r["cpu"] / n, 2)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def profile(n: int, top: int = 40, launches: bool = False) -> None:
    """cProfile of one in-process ingest of ``n`` files, or of one file of ``n`` launches
    (sorted by cumulative time)."""
    import cProfile
    import pstats

    from logsleuth.cli.app import app

    tmp = Path(tempfile.mkdtemp(prefix="lsbench-small-"))
    try:
        if launches:
            folder = tmp / f"launches_{n}.log"
            folder.write_text(launches_log(n), encoding="utf-8")
        else:
            folder = write_folder(tmp / f"small_{n}", n)
        prof = cProfile.Profile()
        prof.enable()
        try:
            app(["--db", str(tmp / "p.duckdb"), "ingest", str(folder)], standalone_mode=False)
        except SystemExit:
            pass
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(top)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ingest a folder of N two-line logs (see module docstring)")
    ap.add_argument("-n", type=int, nargs="*", default=[500])
    ap.add_argument("--profile", action="store_true", help="cProfile an in-process ingest instead of timing")
    ap.add_argument("--launches", type=int, help="one log of this many launches instead of a folder")
    ap.add_argument("--json", help="append the figures to this JSON file (a list)")
    a = ap.parse_args(argv)
    if a.profile:
        for n in ([a.launches] if a.launches else a.n):
            profile(n, launches=bool(a.launches))
        return 0
    rows = []
    if a.launches:
        r = bench_launches(a.launches)
        rows.append(r)
        print(f"{a.launches} launches in one file: wall {r['wall_s']} s, CPU {r['cpu_s']} s, "
              f"{r['cpu_ms_per_run']} ms CPU per run, RSS {r['rss_mb']} MB" + ("" if r["rc"] == 0 else f"  (exit {r['rc']})"))
    for n in ([] if a.launches else a.n):
        r = bench(n)
        rows.append(r)
        print(f"{n} files: wall {r['wall_s']} s, CPU {r['cpu_s']} s, {r['files_per_s_wall']} files/s (wall), "
              f"{r['cpu_ms_per_file']} ms CPU per file, RSS {r['rss_mb']} MB; 5,000 files: "
              f"~{r['projected_5000_wall_s']} s wall, ~{r['projected_5000_cpu_s']} s CPU"
              + ("" if r["rc"] == 0 else f"  (exit {r['rc']})"))
    if a.json:
        path = Path(a.json)
        old = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(old + rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
