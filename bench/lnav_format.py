"""Benchmark: the same per-line work as lnav with a format file (issue 22, item 5).

    python bench/lnav_format.py                  # 50 MB generated SGLang log
    python bench/lnav_format.py --size 200MB
    python bench/lnav_format.py --files my_sglang.log

lnav is given ``bench/lnav/sglang_log.json``, a format that types the SGLang decode and
prefill fields (running and queued requests, tokens, token usage, accept length and rate,
generation throughput, new and cached tokens), installed into a throw-away ``HOME`` (the
user's own lnav configuration is never touched). Timed one after the other on the same file,
under ``/usr/bin/time -v``: lnav indexing the file and answering one query over every typed
decode and prefill line, and ``logsleuth ingest`` into a fresh database (which types the same
fields, and every other line, and stores them). Prints wall and CPU seconds and the ratio
lnav time / logsleuth time (1.0: as fast as lnav; the issue's floor is 0.5). ``--json FILE``
appends the figures.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import generate, parse_size  # noqa: E402
from run import CACHE, logsleuth_cmd, timed  # noqa: E402

FORMAT = HERE / "lnav" / "sglang_log.json"
QUERY = (";SELECT count(*), count(running_req), avg(gen_throughput), max(queue_req), avg(accept_len), "
         "sum(new_token), sum(cached_token) FROM sglang_log")


def lnav_home(tmp: Path) -> dict:
    """An environment whose HOME holds only the benchmark's lnav format."""
    tmp.mkdir(parents=True, exist_ok=True)  # (without it lnav writes its configuration in the working folder)
    env = {"HOME": str(tmp), "PATH": "/usr/bin:/bin"}
    subprocess.run(["lnav", "-i", str(FORMAT)], env=env, check=True, capture_output=True)
    return env


def bench(path: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-lnav-"))
    try:
        env = lnav_home(tmp / "home")
        ln = timed(["lnav", "-n", "-c", QUERY, str(path)], stdout=None, env=env)
        typed = ln["out"].split("\n")[1].split() if ln["out"].count("\n") >= 1 else []
        ls = timed(logsleuth_cmd() + ["--db", str(tmp / "l.duckdb"), "ingest", str(path)])
        if ls["rc"] != 0:
            print(ls["err"], file=sys.stderr)
        return {"file": path.name, "bytes": path.stat().st_size, "lnav_wall_s": round(ln["wall"], 2),
                "lnav_cpu_s": round(ln["cpu"], 2), "lnav_lines": typed[0] if typed else None,
                "lnav_typed_decode_prefill": typed[1] if len(typed) > 1 else None,
                "logsleuth_wall_s": round(ls["wall"], 2), "logsleuth_cpu_s": round(ls["cpu"], 2),
                "ratio_wall": round(ln["wall"] / ls["wall"], 2) if ls["wall"] else None,
                "ratio_cpu": round(ln["cpu"] / ls["cpu"], 2) if ls["cpu"] else None}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="lnav with a format file vs logsleuth ingest (see module docstring)")
    ap.add_argument("--size", default="50MB")
    ap.add_argument("--files", nargs="*", default=[])
    ap.add_argument("--json", help="append the figures to this JSON file (a list)")
    a = ap.parse_args(argv)
    if not shutil.which("lnav"):
        print("lnav is not installed (apt-get install lnav)", file=sys.stderr)
        return 2
    paths = [Path(f) for f in a.files]
    if not paths:
        CACHE.mkdir(parents=True, exist_ok=True)
        paths = [CACHE / f"sglang_{a.size}_s1.log"]
        if not paths[0].exists():
            generate(paths[0], "sglang", parse_size(a.size), 1)
    rows = [bench(p) for p in paths]
    for r in rows:
        print(f"{r['file']}: lnav+format wall {r['lnav_wall_s']} s CPU {r['lnav_cpu_s']} s "
              f"({r['lnav_lines']} lines, {r['lnav_typed_decode_prefill']} typed) | logsleuth ingest wall "
              f"{r['logsleuth_wall_s']} s CPU {r['logsleuth_cpu_s']} s | lnav/logsleuth wall {r['ratio_wall']}x "
              f"CPU {r['ratio_cpu']}x (target >= 0.5x)")
    if a.json:
        path = Path(a.json)
        old = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(old + rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
