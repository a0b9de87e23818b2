"""Fleet benchmark: generated host logs ingested three ways, and `fleet` checked against the faults.

Usage::

    python bench/fleet.py                     # 200 logs (100 hosts x 2 days), 200 MB in all
    python bench/fleet.py --size 2GB          # the issue's full case
    python bench/fleet.py --modes db local    # skip Ray

The logs are built from the bundled story logs (tests/samples): SGLang and vLLM serving
Kimi-K2.5 on 8x RTX PRO 6000, their serving sections repeated to the size asked for, day 2
one day later than day 1. Injected faults, which `fleet` must find and nothing else:
* slow hosts: two SGLang hosts decode at 60% of their peers' speed (both days);
* a rollout gone wrong: five SGLang hosts run triton attention on day 2 (flashinfer on day 1);
* a crash cluster: six vLLM hosts die on day 2 with the same illegal memory access.
Modes timed (wall and CPU of this process and its children, /proc accounting):
``db`` one process into one DuckDB file; ``local`` the dataset by local processes (one per
core); ``ray`` the dataset by Ray tasks on a local cluster of as many CPUs.
Prints a table and writes bench/fleet_results.json. Everything it writes (logs, databases,
datasets, Ray's session folder) lives in one temporary folder removed at the end, and the Ray
cluster it starts is shut down; memory stays that of one log's parse per process (peak RSS of
this process and of the largest child is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "samples"
sys.path.insert(0, str(ROOT / "src"))

SLOW = {"sgl-003", "sgl-017"}
TRITON_DAY2 = {"sgl-005", "sgl-011", "sgl-023", "sgl-031", "sgl-042"}
CRASH_DAY2 = {"vll-002", "vll-007", "vll-013", "vll-019", "vll-026", "vll-033"}


def parse_size(text: str) -> int:
    t = text.strip().upper()
    for suffix, mult in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if t.endswith(suffix):
            return int(float(t[: -len(suffix)]) * mult)
    return int(t)


def _split(path: Path, ready_marker: str) -> tuple[list[str], list[str], list[str]]:
    """(start-up up to the ready marker, serving lines up to the last throughput report, shutdown)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if ready_marker in ln) + 1
    last = max(i for i, ln in enumerate(lines) if "throughput" in ln) + 1
    return lines[:cut], lines[cut:last], lines[last:]


def _sglang(host: str, day: int, size: int) -> str:
    head, body, tail = _split(SAMPLES / "sglang_tuned_v1.log", "fired up and ready to roll")
    text = "".join(head) + _repeat(body, size - sum(map(len, head + tail))) + "".join(tail)
    if day == 2:
        text = text.replace("2026-02-04", "2026-02-05")
        if host in TRITON_DAY2:
            text = text.replace("attention_backend='flashinfer'", "attention_backend='triton'")
    if host in SLOW:
        text = re.sub(r"(gen throughput \(token/s\): )([0-9.]+)", lambda m: f"{m.group(1)}{float(m.group(2)) * 0.6:.2f}", text)
    return f"+ hostname\n{host}\n" + text


def _vllm(host: str, day: int, size: int) -> str:
    head, body, tail = _split(SAMPLES / "vllm_kimi_k25.log", "Application startup complete")
    text = "".join(head) + _repeat(body, size - sum(map(len, head + tail)))
    if day == 2 and host in CRASH_DAY2:  # the server dies instead of shutting down
        crash = (SAMPLES / "eras" / "vllm_illegal_memory_access.log").read_text(encoding="utf-8").splitlines(True)
        start = next(i for i, ln in enumerate(crash) if "hit an exception" in ln)
        text += "".join(crash[start:]).replace(" 11-03 ", " 02-09 ")
    else:
        text += "".join(tail)
    if day == 2:
        text = text.replace(" 02-09 ", " 02-10 ")
    return f"+ hostname\n{host}\n" + text


def _repeat(body: list[str], budget: int) -> str:
    out, n = [], 0
    while n < budget and body:
        for ln in body:
            out.append(ln)
            n += len(ln)
            if n >= budget:
                break
    return "".join(out)


def generate(folder: Path, total: int, hosts: int = 100) -> list[Path]:
    per_log = total // (hosts * 2)
    files = []
    for i in range(hosts):
        host = f"sgl-{i:03d}" if i < hosts * 6 // 10 else f"vll-{i - hosts * 6 // 10:03d}"
        for day in (1, 2):
            p = folder / host / f"day{day}.log"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text((_sglang if host.startswith("sgl") else _vllm)(host, day, per_log), encoding="utf-8")
            files.append(p)
    return files


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _machine_cpu() -> float | None:
    """CPU seconds of every process on the machine (/proc/stat): counts Ray's workers, which are
    not this process's children, but also whatever else runs (meaningful on a quiet machine)."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _timed(fn):
    c0, m0, t0 = _cpu(), _machine_cpu(), time.perf_counter()
    out = fn()
    m1 = _machine_cpu()
    return out, time.perf_counter() - t0, _cpu() - c0, (None if m0 is None or m1 is None else m1 - m0)


def run(args) -> dict:
    import logsleuth
    from logsleuth.fleet import fleet_summary, ingest_dataset, open_dataset
    from logsleuth.fleet.summary import thresholds

    work = Path(tempfile.mkdtemp(prefix="logsleuth-fleet-bench-"))
    # Ray keeps its session (logs, sockets, spilled objects) under RAY_TMPDIR: inside the folder
    # removed at the end instead of /tmp/ray (a short path: Ray's socket paths are length-limited)
    os.environ.setdefault("RAY_TMPDIR", str(work / "ray"))
    try:
        files = generate(work / "logs", parse_size(args.size), args.hosts)
        total_mb = sum(p.stat().st_size for p in files) / 1e6
        cpus = os.cpu_count() or 1
        rows = {}
        if "db" in args.modes:
            def db():
                con = logsleuth.open_db(str(work / "fleet.duckdb"))
                logsleuth.ingest_files(con, [str(p) for p in files])
                con.close()
            _, wall, cpu, machine = _timed(db)
            rows["db (1 process)"] = (wall, cpu, machine)
        found = None
        for mode in ("local", "ray"):
            if mode not in args.modes:
                continue
            target = work / f"ds-{mode}"
            res, wall, cpu, machine = _timed(lambda: ingest_dataset(str(target), [str(p) for p in files], host_from="{host}/*.log",
                                                            executor=mode, workers=cpus))
            assert not res.failed, res.failed
            rows[f"dataset, {mode} ({cpus} CPUs)"] = (wall, cpu, machine)
            s = fleet_summary(open_dataset(str(target)), with_findings=False)
            found = {"outliers": sorted({o["host"] for o in s.outliers}),
                     "changed": sorted({c["host"] for c in s.changes}),
                     "crash_cluster": sorted(h for c in s.crash_clusters for h in c["host_list"].split(", "))}
        made = {p.parent.name for p in files}  # fewer --hosts: the faults of hosts that exist
        crashed = CRASH_DAY2 & made  # a cluster needs min_hosts hosts (queries/fleet/fleet.toml)
        expected = {"outliers": sorted(SLOW & made), "changed": sorted(TRITON_DAY2 & made),
                    "crash_cluster": sorted(crashed) if len(crashed) >= thresholds()["min_hosts"] else []}
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"logs": len(files), "hosts": args.hosts, "mb": round(total_mb, 1), "cpus": cpus,
                "peak_rss_mb": {"this process": round(me.ru_maxrss / 1024), "largest child": round(kids.ru_maxrss / 1024)},
                "modes": {k: {"wall_s": round(w, 2), "cpu_s": round(c, 2),
                              "machine_cpu_s": None if m is None else round(m, 1), "mb_s": round(total_mb / w, 1)}
                          for k, (w, c, m) in rows.items()},
                "found": found, "expected": expected, "exact": found == expected}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="200MB", help="all logs together, e.g. 200MB, 2GB")
    ap.add_argument("--hosts", type=int, default=100, help="hosts (two daily logs each)")
    ap.add_argument("--modes", nargs="+", default=["db", "local", "ray"], choices=["db", "local", "ray"])
    args = ap.parse_args()
    out = run(args)
    print(f"{out['logs']} logs, {out['hosts']} hosts, {out['mb']} MB, {out['cpus']} CPUs")
    print(f"{'mode':<28} {'wall s':>8} {'CPU s':>8} {'machine CPU s':>14} {'MB/s':>8}")
    for name, m in out["modes"].items():
        print(f"{name:<28} {m['wall_s']:>8} {m['cpu_s']:>8} {str(m['machine_cpu_s']):>14} {m['mb_s']:>8}")
    print("(CPU s: this process and its local workers; machine CPU s: every process, Ray's workers "
          "included, and anything else running)")
    if "dataset, ray" in " ".join(out["modes"]) and any(k.startswith("dataset, local") for k in out["modes"]):
        ray_w = next(v["wall_s"] for k, v in out["modes"].items() if k.startswith("dataset, ray"))
        loc_w = next(v["wall_s"] for k, v in out["modes"].items() if k.startswith("dataset, local"))
        print(f"Ray overhead against local processes: {ray_w - loc_w:+.1f} s ({ray_w / loc_w:.2f}x)")
    print(f"peak RSS: {out['peak_rss_mb']['this process']} MB this process, "
          f"{out['peak_rss_mb']['largest child']} MB the largest local worker (Ray workers not counted)")
    print(f"fleet found exactly the injected faults: {'yes' if out['exact'] else 'no'}")
    if not out["exact"]:
        print(f"  found:    {out['found']}\n  expected: {out['expected']}")
    (ROOT / "bench" / "fleet_results.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
