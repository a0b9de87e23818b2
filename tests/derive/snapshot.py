"""Snapshot of everything run derivation writes, for the samples and the real corpus.

Run derivation (derive/runs.py) must give the same rows whatever its shape (source by source,
or all sources of a batch in one set-based call). ``snapshot(con)`` reads what it wrote: the
``runs`` table (every column), ``errors.fatal``, ``primary_rank`` of decode/prefill stats,
``decode_primary``, ``templates`` and each unparsed line's template id, ``spec_stats`` and the
``sources`` counters. ``build(files, db)`` ingests the files with one call (in a fixed order,
so small files share batches) into a fresh database. The golden file is written from the code of the day by

    python tests/derive/snapshot.py --write       # tests/derive/golden/derivation.json

and test_derivation_golden.py compares against it: regenerate it only when a change of what a
run IS (a new grammar pattern, a fixed bug) is meant, and say so in the commit.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "derivation.json"
ROOT = HERE.parents[1]
SAMPLES = ROOT / "tests" / "samples"

# (table, columns, order): what derivation writes; big tables are kept as a digest of their rows
_FULL = {
    "runs": ("SELECT * EXCLUDE (source_id), (SELECT name FROM sources s WHERE s.source_id = r.source_id) AS source "
             "FROM runs r ORDER BY run_id"),
    "fatal_errors": ("SELECT s.name AS source, e.line_no, e.run_id FROM errors e JOIN sources s USING (source_id) "
                     "WHERE e.fatal ORDER BY s.name, e.line_no"),
    "templates": ("SELECT t.template_id, s.name AS source, t.template, t.n_lines, t.example_line_no "
                  "FROM templates t JOIN sources s USING (source_id) ORDER BY t.template_id"),
    "sources": ("SELECT name, engine, n_lines, year_basis, bad_bytes, nul_bytes, truncated_lines, crlf_lines "
                "FROM sources ORDER BY source_id"),
    "env_reports": "SELECT * EXCLUDE (source_id) FROM env_reports ORDER BY source_id",
}
_DIGEST = {
    "decode_primary_rank": ("SELECT source_id, line_no, run_id, primary_rank FROM decode_stats "
                            "ORDER BY source_id, line_no, rank NULLS FIRST"),
    "prefill_primary_rank": ("SELECT source_id, line_no, run_id, primary_rank FROM prefill_stats "
                             "ORDER BY source_id, line_no, rank NULLS FIRST"),
    "decode_primary": "SELECT * FROM decode_primary ORDER BY ALL",
    "spec_stats": "SELECT * FROM spec_stats ORDER BY ALL",
    "template_ids": ("SELECT source_id, line_no, run_id, template_id FROM lines_other "
                     "WHERE template_id IS NOT NULL OR kind = 'unparsed' ORDER BY source_id, line_no"),
    "line_runs": ("SELECT source_id, run_id, count(*), min(line_no), max(line_no) FROM lines "
                  "GROUP BY ALL ORDER BY ALL"),
    "errors": "SELECT * FROM errors ORDER BY source_id, line_no",
}


_ABS_PATH = re.compile(r"(?<![\w/.~<>:-])(/(?:[\w.@+-]+/)+)([\w.@+-]*)")


# where the checkout (or the copy of its samples that ``take`` ingests) lives is not a derived
# fact: gpu_source names report paths; each root here is written as "<repo>/" (its parent as
# "<repo>/../")
_ROOTS: list[Path] = [ROOT]
# the samples are ingested as copies with this modification time: a log whose stamps carry no
# date is dated by its file's mtime, and a checkout's mtimes are the day it was cloned
SAMPLE_MTIME = dt.datetime(2026, 6, 1, 12, 0, 0).timestamp()


def _plain(v):
    if isinstance(v, str):
        pairs = [(r, "<repo>/") for r in _ROOTS] + [(ROOT.parent, "<repo>/../")]
        for path, name in pairs:  # (a path's start only)
            v = re.sub(r"(?<![\w/.~-])" + re.escape(f"{path}/"), name, v)
        # absolute paths the logs print (model folders of the machines that wrote them) stay
        # comparable without a machine path in the repo: folder as a digest, name kept
        return _ABS_PATH.sub(lambda m: f"<abs:{hashlib.sha256(m[1].encode()).hexdigest()[:12]}>/{m[2]}", v)
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return v


def _rows(con, q) -> tuple[list[str], list[list]]:
    cur = con.execute(q)
    cols = [d[0] for d in cur.description]
    return cols, [[_plain(v) for v in row] for row in cur.fetchall()]


def snapshot(con) -> dict:
    out: dict = {}
    for name, q in _FULL.items():
        cols, rows = _rows(con, q)
        out[name] = [dict(zip(cols, row)) for row in rows]
    for name, q in _DIGEST.items():
        _, rows = _rows(con, q)
        text = json.dumps(rows, default=str)
        out[name] = {"rows": len(rows), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return out


def sample_logs() -> list[Path]:
    """Every file under tests/samples (recursively) except the manifests and READMEs that
    describe them (documentation, edited whenever a sample is added)."""
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name not in ("MANIFEST.md", "README.md"))


def corpus_logs() -> list[Path]:
    sys.path.insert(0, str(ROOT / "tests"))
    from support.paths import corpus_files

    return corpus_files()


def build(files, db: str, year: int | None = None) -> None:
    """Ingest ``files`` into the database ``db`` with one call."""
    import logsleuth
    from logsleuth.ingest.pipeline import IngestOptions

    con = logsleuth.open_db(db)
    try:
        logsleuth.ingest_files(con, [str(f) for f in files], IngestOptions(year=year))
    finally:
        con.close()


def _dated_copies(files: list[Path], checkout: Path) -> list[Path]:
    """Copies of ``files`` at their place under ``checkout`` (a stand-in for ROOT), every one
    with the modification time SAMPLE_MTIME, so the snapshot is the same whatever day it runs."""
    import os
    import shutil

    out = []
    for f in files:
        dest = checkout / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
        os.utime(dest, (SAMPLE_MTIME, SAMPLE_MTIME))
        out.append(dest)
    if checkout not in _ROOTS:
        _ROOTS.insert(0, checkout)
    return out


def take(which: str, folder: Path) -> dict:
    """Ingest the samples or the corpus into a fresh database under ``folder`` and snapshot it."""
    import logsleuth

    files = sample_logs() if which == "samples" else corpus_logs()
    if which == "samples":
        files = _dated_copies(files, folder / "checkout")
    db = str(folder / f"{which}.duckdb")
    build(files, db, year=2026 if which == "corpus" else None)
    con = logsleuth.open_db(db, read_only=True)
    try:
        snap = snapshot(con)
    finally:
        con.close()
    return snap


def main(argv=None) -> int:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {GOLDEN.relative_to(ROOT)}")
    a = ap.parse_args(argv)
    golden = {}
    with tempfile.TemporaryDirectory(prefix="ls-derive-") as tmp:
        for which in ("samples", "corpus"):
            if which == "corpus" and not corpus_logs():
                print("corpus not available: its snapshot is not written", file=sys.stderr)
                continue
            golden[which] = take(which, Path(tmp))
    text = json.dumps(golden, indent=1, sort_keys=True, default=str) + "\n"
    if a.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN} ({len(text)} bytes)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
