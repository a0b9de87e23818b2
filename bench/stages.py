"""Where an ingest spends its time: wall seconds per stage, in process.

    python bench/stages.py FILE [--jobs N] [--chunk-mb M]

Ingests FILE into a fresh database under a temporary folder with timers around the stages
of ingest/pipeline.py: reading and splitting lines, encoding line shapes, redaction, parsing (header peel,
classification, typed-row extraction), the fold, timestamps and run ids, the writer thread's
line context of the typed rows and inserts (these overlap the stages of the next chunk), run derivation and COMMIT. Prints
one row per stage (wall seconds, calls, share of the ingest's wall time) plus the process's
CPU time; ``--json FILE`` writes the same. The writer rows are busy time of the writer
thread, not time the ingest waited for it. Timers wrap module attributes, so a stage this
script does not know (a renamed function) is reported as missing rather than mismeasured.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from logsleuth import api  # noqa: E402
from logsleuth.ingest import parse, pipeline, read, workers, write  # noqa: E402
from logsleuth.ingest.options import IngestOptions  # noqa: E402

#: (stage, module, attribute, thread) in pipeline order
STAGES = [
    ("read: split lines (per chunk)", read, "_block_frame", "main"),
    ("encode line shapes", pipeline, "encode", "main"),
    ("redact", pipeline, "redact_shaped", "main"),
    ("parse: by shape (header, pattern)", parse, "_parse_by_shape", "main/worker"),
    ("parse: header peel", parse, "peel", "main/worker"),
    ("parse: classify", parse, "classify", "main/worker"),
    ("parse: extract typed rows", parse, "extract", "main/worker"),
    ("parse: whole chunk", workers, "parse_segments", "main/worker"),
    ("fold", pipeline, "_fold", "main"),
    ("timestamps + run ids", pipeline, "_stamp", "main"),
    ("writer: line context of typed rows", pipeline, "with_line_context", "writer"),
    ("writer: DuckDB inserts", write, "insert", "writer"),
    ("writer: whole chunk", pipeline, "_store_folded", "writer"),
    ("run derivation", pipeline, "_finish", "main"),
]


class Timer:
    def __init__(self):
        self.lock = threading.Lock()
        self.wall: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, module, attr: str) -> bool:
        fn = getattr(module, attr, None)
        if fn is None:
            return False

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - t0
                    self.calls[name] = self.calls.get(name, 0) + 1

        setattr(module, attr, timed)
        return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--jobs", type=int, default=0, help="parse processes (0: the default for this machine)")
    ap.add_argument("--chunk-mb", type=float, default=None, help="chunk size in MiB (default: the pipeline's)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    timer = Timer()
    missing = [name for name, mod, attr, _ in STAGES if not timer.wrap(name, mod, attr)]
    # the parse stages run in worker processes when jobs > 1: time them inline
    jobs = args.jobs or 1
    tmp = Path(tempfile.mkdtemp(prefix="lsbench-stages-"))
    try:
        con = api.open_db(str(tmp / "x.duckdb"))
        cpu0, t0 = time.process_time(), time.perf_counter()
        opts = IngestOptions(jobs=jobs)
        if args.chunk_mb:
            opts.chunk_bytes = int(args.chunk_mb * (1 << 20))
        api.ingest_files(con, [args.file], opts)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        con.close()
        db_bytes = sum(f.stat().st_size for f in tmp.iterdir())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    size = os.path.getsize(args.file)
    rows = [{"stage": name, "thread": thread, "wall_s": round(timer.wall.get(name, 0.0), 3),
             "calls": timer.calls.get(name, 0), "share": round(timer.wall.get(name, 0.0) / wall, 3)}
            for name, _, _, thread in STAGES if name not in missing]
    print(f"{Path(args.file).name}: {size / 1e6:.0f} MB, ingest {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"(process, all threads), peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, "
          f"database {db_bytes / 1e6:.0f} MB, jobs {jobs}")
    print(f"{'stage':34} {'thread':12} {'wall s':>8} {'calls':>6} {'share':>6}")
    for r in rows:
        print(f"{r['stage']:34} {r['thread']:12} {r['wall_s']:8.2f} {r['calls']:6d} {r['share']:6.0%}")
    if missing:
        print("not timed (not found): " + ", ".join(missing))
    if args.json:
        Path(args.json).write_text(json.dumps({"file": args.file, "bytes": size, "wall": wall, "cpu": cpu,
                                               "db_bytes": db_bytes, "stages": rows}, indent=2))


if __name__ == "__main__":
    main()
