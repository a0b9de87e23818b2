"""A large file parsed as byte ranges cut at server launches equals the file ingested whole."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

import logsleuth
from logsleuth.fleet import driver, ingest_dataset, open_dataset
from logsleuth.fleet.parts import ID_STRIDE, RUN_ID_COLUMNS, PartFailure, RUN_STRIDE
from logsleuth.fleet.ranges import RangeOutcome, seam_disagreement
from logsleuth.fleet.split import ByteRange, plan_split
from support.paths import SAMPLES

pytestmark = pytest.mark.slow  # generated multi-launch logs parsed whole and in byte ranges (12-65 s a test here)

ERAS = SAMPLES / "eras"
#: several launches of one engine in one file, as a server restarted under a supervisor writes them
LAUNCHES = {
    "sglang": [SAMPLES / "sglang_baseline.log", ERAS / "sglang_capture_oom.log", SAMPLES / "sglang_tuned_v1.log",
               ERAS / "sglang_v0.4.8_dp.log"],
    "vllm": [ERAS / "vllm_illegal_memory_access.log", ERAS / "vllm_kv_too_small.log", ERAS / "vllm_moe_untuned.log",
             ERAS / "vllm_v1_0.8.5_spec.log"],
}
#: vLLM prints no year: one restart a day in one month, as one server's log would have them
_VLLM_STAMP = re.compile(rb"\b(INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d ")


def _restarts(tmp_path: Path, engine: str) -> Path:
    out = tmp_path / f"{engine}_restarts.log"
    parts = []
    for day, p in enumerate(LAUNCHES[engine], start=10):
        text = p.read_bytes().rstrip(b"\n") + b"\n"
        parts.append(_VLLM_STAMP.sub(lambda m: m.group(1) + b" 09-%02d " % day, text) if engine == "vllm" else text)
    out.write_bytes(b"".join(parts))
    return out


def _tables(ds_root: Path) -> dict:
    return json.loads((ds_root / "_logsleuth_manifest.json").read_text())["tables"]


def _rows(con, table: str, cols: list[str]) -> list:
    quoted = ", ".join(f'"{c}"' for c in cols)
    return sorted(con.execute(f'SELECT {quoted} FROM "{table}"').fetchall(), key=repr)


@pytest.fixture(scope="module", params=sorted(LAUNCHES))
def split_and_whole(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"split_{request.param}")
    log = _restarts(tmp, request.param)
    fifth = log.stat().st_size // 5  # three ranges of these files
    plan = plan_split(str(log), fifth)
    whole = ingest_dataset(str(tmp / "whole"), [str(log)], executor="serial", split_bytes=None)
    split = ingest_dataset(str(tmp / "split"), [str(log)], executor="serial", split_bytes=fifth)
    db = logsleuth.open_db(str(tmp / "one.duckdb"))
    logsleuth.ingest_files(db, [str(log)])
    return {"log": log, "plan": plan, "whole": whole, "split": split, "tmp": tmp, "db": db}


def test_plan_cuts_at_the_first_line_of_a_run(split_and_whole):
    plan, db = split_and_whole["plan"], split_and_whole["db"]
    assert plan.split and len(plan.ranges) >= 3, plan.reason
    firsts = {r[0] for r in db.execute("SELECT first_line FROM runs").fetchall()}
    lines = split_and_whole["log"].read_bytes()
    for prev, r in zip(plan.ranges, plan.ranges[1:]):
        assert prev.end == r.start and r.first_line in firsts, r
        assert lines[:r.start].count(b"\n") + 1 == r.first_line  # the true line number of the cut
        assert lines[r.start - 1:r.start] == b"\n"
    assert plan.ranges[-1].end == len(lines)


def test_split_ingest_equals_whole_ingest_table_by_table(split_and_whole):
    tmp, split = split_and_whole["tmp"], split_and_whole["split"]
    assert not split.failed and list(split.notes.values())[0].startswith("split into ")
    assert not split_and_whole["whole"].notes
    a, b = open_dataset(str(tmp / "whole")), open_dataset(str(tmp / "split"))
    tables = _tables(tmp / "whole")
    assert tables == _tables(tmp / "split")
    assert {"lines_other", "lines_bulk", "runs", "events_other", "events_bulk", "errors", "templates"} <= set(tables)
    for table, cols in tables.items():
        names = [c for c, _ in cols if c != "ingested_at"]
        assert _rows(b, table, names) == _rows(a, table, names), table
    n_runs = a.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert n_runs >= len(split_and_whole["plan"].ranges)


def test_split_ingest_equals_the_database_ingest(split_and_whole):
    """Ids are the database's, under the dataset's strides (source 1 -> its dataset id)."""
    tmp, db = split_and_whole["tmp"], split_and_whole["db"]
    ds = open_dataset(str(tmp / "split"))
    for table, cols in _tables(tmp / "split").items():
        names = [c for c, _ in cols if c not in ("ingested_at", "path", "host", "date")]
        back = []
        for c, typ in cols:
            if c not in names:
                continue
            if c == "source_id":
                back.append('1 AS "source_id"')  # one file: source 1 of the database
            elif c in RUN_ID_COLUMNS:  # run_id and the run ids other columns hold (runs.deployment)
                back.append(f'"{c}" % {RUN_STRIDE} AS "{c}"')
            elif c.endswith("_id") and typ in ("INTEGER", "BIGINT"):
                back.append(f'"{c}" % {ID_STRIDE} AS "{c}"')
            else:
                back.append(f'"{c}"')
        got = sorted(ds.execute(f'SELECT {", ".join(back)} FROM "{table}"').fetchall(), key=repr)
        assert got == _rows(db, table, names), table


def test_a_seam_that_disagrees_ingests_the_file_whole(split_and_whole, monkeypatch, tmp_path):
    """A wrong prediction (here: the runs before a cut miscounted) is caught at the merge: the
    file is ingested whole, with the whole file's run ids, and the note says why."""
    log, plan = split_and_whole["log"], split_and_whole["plan"]

    def miscounted(path, split_bytes, grammar_dirs=()):
        for r in plan.ranges[1:]:
            r.ordinal_before += 5
        return plan

    monkeypatch.setattr(driver, "plan_split", miscounted)
    out = ingest_dataset(str(tmp_path / "ds"), [str(log)], executor="serial", split_bytes=1)
    note = out.notes[str(log)]
    assert note.startswith("not split: the launches before line ") and "were counted as" in note
    a, b = open_dataset(str(split_and_whole["tmp"] / "whole")), open_dataset(str(tmp_path / "ds"))
    for sql in ("SELECT run_id, first_line, last_line FROM runs", "SELECT run_id, line_no FROM lines_other"):
        assert sorted(b.execute(sql).fetchall()) == sorted(a.execute(sql).fetchall()), sql
    assert not (tmp_path / "ds" / "_staging").exists() or not any((tmp_path / "ds" / "_staging").rglob("*.parquet"))


def test_a_cut_inside_a_traceback_is_caught(tmp_path, monkeypatch):
    """A cut that falls inside a multi-line record (not where the planner cuts, but the check must
    not trust it): the record's lines would fold apart, so the file is ingested whole."""
    log = _restarts(tmp_path, "vllm")
    text = log.read_bytes()
    at = text.index(b"Traceback (most recent call last)")
    cut = text.index(b"\n", text.index(b"\n", at) + 1) + 1  # two lines into the traceback
    size = len(text)
    ranges = [ByteRange(0, 0, cut, 1), ByteRange(1, cut, size, text[:cut].count(b"\n") + 1, ordinal_before=1, rank=0,
                                                 starts=[[1, text[:cut].count(b"\n")]])]
    from logsleuth.fleet.split import SplitPlan

    monkeypatch.setattr(driver, "plan_split", lambda *a, **k: SplitPlan(ranges))
    out = ingest_dataset(str(tmp_path / "ds"), [str(log)], executor="serial", split_bytes=1)
    assert out.notes[str(log)].startswith("not split: ")
    assert not out.failed


def test_seam_checks_name_what_disagrees():
    def outcome(i, **seam):
        base = {"ordinal": 1, "prev_rank": 2, "mv_tail_from": None, "engine_start": "vllm", "engine_end": "vllm",
                "time": {"base_year": 2025, "base_date": "2025-09-15", "basis": "file mtime", "year_offset": 0,
                         "last_month": 9},
                "first_ts": None, "last_ts": None, "open_record": None}
        return RangeOutcome(i, 10, {}, {**base, **seam})

    ranges = [ByteRange(0, 0, 100, 1), ByteRange(1, 100, 200, 11, ordinal_before=1, rank=0)]
    assert seam_disagreement(ranges, [outcome(0), outcome(1)]) is None
    assert seam_disagreement(ranges, [outcome(0, prev_rank=0), outcome(1)]) is None  # banner after banner: a new run
    ranges[1].rank = 1
    assert "continues the launch before it" in seam_disagreement(ranges, [outcome(0, prev_rank=1), outcome(1)])
    ranges[1].rank = 0
    assert "launch chatter from line 9" in seam_disagreement(ranges, [outcome(0, mv_tail_from=9), outcome(1)])
    assert "engine changes" in seam_disagreement(ranges, [outcome(0, engine_end="sglang"), outcome(1)])
    rolled = {"base_year": 2025, "base_date": "2025-09-15", "basis": "file mtime", "year_offset": 1, "last_month": 1}
    assert "turns over" in seam_disagreement(ranges, [outcome(0, time=rolled), outcome(1)])
    assert "a record open" in seam_disagreement(ranges, [outcome(0, open_record="a record open at line 5 continues past the seam"),
                                                          outcome(1)])
    assert "range 2 failed" in seam_disagreement(ranges, [outcome(0), PartFailure("x", "worker died")])


def test_files_that_are_not_split_say_why(tmp_path):
    one = tmp_path / "one_launch.log"
    one.write_bytes((SAMPLES / "sglang_tuned_v1.log").read_bytes())
    assert plan_split(str(one), 1 << 40).reason.startswith("not above --split-bytes")
    plan = plan_split(str(one), 10_000)
    assert not plan.split and "no second server launch" in plan.reason
    gz = tmp_path / "restarts.log.gz"
    gz.write_bytes(gzip.compress(_restarts(tmp_path, "sglang").read_bytes()))
    assert "gzip" in plan_split(str(gz), 10_000).reason
    out = ingest_dataset(str(tmp_path / "ds"), [str(one)], executor="serial", split_bytes=10_000)
    assert out.notes[str(one)].startswith("not split: no second server launch")


def test_fewer_files_than_cores_parse_on_the_idle_cores(tmp_path, monkeypatch):
    """One file on two local cores: its task parses with two processes (the same rows: the
    pipeline's result does not depend on --jobs); several files: one process each."""
    from logsleuth.ingest import pipeline

    seen = []
    real = pipeline.ingest_source

    def spy(con, path, opts):
        seen.append(opts.jobs)
        return real(con, path, opts)

    monkeypatch.setattr(pipeline, "ingest_source", spy)
    one = tmp_path / "a.log"
    one.write_bytes((SAMPLES / "vllm_eagle3.log").read_bytes())
    ingest_dataset(str(tmp_path / "ds"), [str(one)], executor="local", workers=2)
    assert seen == [2]
    two = tmp_path / "b.log"
    two.write_bytes((ERAS / "vllm_kv_too_small.log").read_bytes())
    seen.clear()
    ingest_dataset(str(tmp_path / "ds2"), [str(one), str(two)], executor="serial")
    assert seen == [1, 1]


def test_among_several_files_only_one_above_its_share_of_the_cpus_is_split(tmp_path):
    big = _restarts(tmp_path, "sglang")
    small = tmp_path / "small.log"
    small.write_bytes((ERAS / "vllm_kv_too_small.log").read_bytes())
    out = ingest_dataset(str(tmp_path / "ds"), [str(big), str(small)], executor="local", workers=2,
                         split_bytes=big.stat().st_size // 5)
    assert not out.failed
    assert out.notes[str(big)].startswith("split into ") and str(small) not in out.notes
    # two files of the same size on two CPUs: each keeps one busy, neither is split
    twin = tmp_path / "twin.log"
    twin.write_bytes(big.read_bytes() + b"\n")
    out = ingest_dataset(str(tmp_path / "ds2"), [str(big), str(twin)], executor="serial",
                         split_bytes=big.stat().st_size // 5)
    assert not out.notes and len(out.ingested) == 2
