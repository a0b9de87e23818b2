"""Benchmark: what a command costs before it does any work (issue 22's fixed-cost targets).

    python bench/fixed_cost.py              # median of 5 runs of each command
    python bench/fixed_cost.py -n 9 --json bench/fixed_cost_results.json

The floor is what any command pays: Python importing duckdb and opening the database file
(``python -c "import duckdb; duckdb.connect(DB, read_only=True).close()"``). Against it,
side by side: ``logsleuth runs``, ``logsleuth sql "SELECT ..."``, ``logsleuth schema``,
``logsleuth --help`` on a database holding one bundled sample, and ``logsleuth ingest`` of
a 200-line log into a fresh database. Each figure is the median CPU (user + system) and wall
time of N runs under ``/usr/bin/time -v``; the ratio is command / floor by CPU, which drifts
less than wall time on a shared machine. Targets: runs and sql <= 2.0x, ingest of 200 lines
<= 4.0x.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import logsleuth_cmd, timed  # noqa: E402

SAMPLE = HERE.parent / "tests" / "samples" / "sglang_tuned_v1.log"
TARGETS = {"runs": 2.0, "sql": 2.0, "ingest 200 lines": 4.0}


def median_of(cmd: list[str], n: int, fresh=None) -> dict:
    runs = []
    for _ in range(n):
        if fresh is not None:
            fresh()
        r = timed(cmd)
        if r["rc"] != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({r['rc']}): {r['err']}")
        runs.append(r)
    return {"cpu": statistics.median(r["cpu"] for r in runs), "wall": statistics.median(r["wall"] for r in runs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="runs of each command (the median is kept)")
    ap.add_argument("--json", help="append the figures to this JSON file")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lsbench-fixed-"))
    db, small, fresh_db = work / "one.duckdb", work / "small.log", work / "fresh.duckdb"
    small.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:200]))
    ls = logsleuth_cmd()
    assert timed(ls + ["--db", str(db), "ingest", str(SAMPLE)])["rc"] == 0

    def new_db() -> None:
        fresh_db.unlink(missing_ok=True)

    floor = median_of([sys.executable, "-c", f"import duckdb; duckdb.connect({str(db)!r}, read_only=True).close()"],
                      args.n)
    rows = {
        "runs": median_of(ls + ["--db", str(db), "runs"], args.n),
        "sql": median_of(ls + ["--db", str(db), "sql", "SELECT run_id, engine FROM runs"], args.n),
        "schema": median_of(ls + ["--db", str(db), "schema"], args.n),
        "--help": median_of(ls + ["--help"], args.n),
        "ingest 200 lines": median_of(ls + ["--db", str(fresh_db), "ingest", str(small)], args.n, fresh=new_db),
    }
    print(f"{'command':<18} {'cpu s':>7} {'wall s':>7} {'x floor (cpu)':>14} {'target':>7}")
    print(f"{'floor':<18} {floor['cpu']:7.3f} {floor['wall']:7.3f} {1.0:14.2f} {'':>7}")
    for name, r in rows.items():
        target = TARGETS.get(name)
        print(f"{name:<18} {r['cpu']:7.3f} {r['wall']:7.3f} {r['cpu'] / floor['cpu']:14.2f} "
              f"{('<= %.1f' % target) if target else '':>7}")
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else []
        old.append({"floor": floor, **rows})
        path.write_text(json.dumps(old, indent=1) + "\n")


if __name__ == "__main__":
    main()
