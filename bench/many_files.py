"""Benchmark: what a file costs. The same bytes ingested as one file and as N files.

    python bench/many_files.py                    # 50 MB SGLang, cut into 40 files
    python bench/many_files.py --size 20MB -n 40 --engine vllm
    python bench/many_files.py --profile          # cProfile of the N-file ingest, in-process

Generates the first SIZE of the generated log (bench/generate.py, cached), cuts it into N
files at line boundaries (about SIZE/N bytes each: a fleet's day, a rotated set), then
times, one after the other into fresh databases, ``logsleuth ingest ONE_FILE`` and
``logsleuth ingest FOLDER`` (the N files), each under ``/usr/bin/time -v``. Prints wall and
CPU seconds side by side and the ratio one-file time / N-file time (1.0: a file costs only
its bytes; issue 22's target is >= 0.7). ``--json FILE`` appends the figures.
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
from generate import generate, parse_size  # noqa: E402
from run import CACHE, logsleuth_cmd, timed  # noqa: E402


def cut(path: Path, n: int, folder: Path) -> list[Path]:
    """Cut ``path`` into ``n`` files of about equal size, each ending at a newline."""
    data = path.read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    out, start = [], 0
    for i in range(n):
        end = len(data) if i == n - 1 else data.find(b"\n", max(start, len(data) * (i + 1) // n)) + 1
        if end <= start:
            end = len(data)
        p = folder / f"part_{i:03d}.log"
        p.write_bytes(data[start:end])
        out.append(p)
        start = end
    return out


def inputs(engine: str, size: str, n: int, seed: int = 1) -> tuple[Path, Path]:
    """(one file, folder of n files with the same bytes), generated once and cached."""
    CACHE.mkdir(parents=True, exist_ok=True)
    one = CACHE / f"{engine}_{size}_s{seed}.log"
    if not one.exists():
        generate(one, engine, parse_size(size), seed)
    folder = CACHE / f"{engine}_{size}_s{seed}_in{n}"
    if not folder.exists() or len(list(folder.iterdir())) != n:
        shutil.rmtree(folder, ignore_errors=True)
        cut(one, n, folder)
    return one, folder


def bench(engine: str, size: str, n: int) -> dict:
    one, folder = inputs(engine, size, n)
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-many-"))
    try:
        r1 = timed(logsleuth_cmd() + ["--db", str(tmp / "one.duckdb"), "ingest", str(one)])
        rn = timed(logsleuth_cmd() + ["--db", str(tmp / "many.duckdb"), "ingest", str(folder)])
        for r in (r1, rn):
            if r["rc"] != 0:
                print(r["err"], file=sys.stderr)
        return {"engine": engine, "size": size, "files": n, "bytes": one.stat().st_size,
                "one_wall_s": round(r1["wall"], 2), "one_cpu_s": round(r1["cpu"], 2),
                "many_wall_s": round(rn["wall"], 2), "many_cpu_s": round(rn["cpu"], 2),
                "ratio_wall": round(r1["wall"] / rn["wall"], 2) if rn["wall"] else None,
                "ratio_cpu": round(r1["cpu"] / rn["cpu"], 2) if rn["cpu"] else None,
                "rc": (r1["rc"], rn["rc"])}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def profile(engine: str, size: str, n: int, top: int = 45) -> None:
    import cProfile
    import pstats

    from logsleuth.cli.app import app

    _, folder = inputs(engine, size, n)
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-many-"))
    try:
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
    ap = argparse.ArgumentParser(description="one file vs the same bytes in N files (see module docstring)")
    ap.add_argument("--engine", nargs="*", default=["sglang"])
    ap.add_argument("--size", default="50MB")
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", help="append the figures to this JSON file (a list)")
    a = ap.parse_args(argv)
    if a.profile:
        profile(a.engine[0], a.size, a.n)
        return 0
    rows = []
    for engine in a.engine:
        r = bench(engine, a.size, a.n)
        rows.append(r)
        print(f"{engine} {a.size}: one file wall {r['one_wall_s']} s CPU {r['one_cpu_s']} s | "
              f"{a.n} files wall {r['many_wall_s']} s CPU {r['many_cpu_s']} s | "
              f"one/many wall {r['ratio_wall']}x CPU {r['ratio_cpu']}x (target >= 0.7x)")
    if a.json:
        path = Path(a.json)
        old = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(old + rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
