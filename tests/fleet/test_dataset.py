"""The dataset target: same tables as a database, atomic commits, re-ingest and growth."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import logsleuth
from logsleuth.fleet import ingest_dataset, open_dataset
from logsleuth.fleet.manifest import MANIFEST
from logsleuth.fleet.parts import ID_STRIDE, RUN_ID_COLUMNS, RUN_STRIDE
from support.paths import SAMPLES

#: columns that hold when or where something was ingested, not what the log said
VOLATILE = {"ingested_at", "path", "host", "date"}


def _logs(fleet_dir: Path) -> list[str]:
    return sorted(str(p) for p in fleet_dir.rglob("server.log"))


def _table_rows(con, table: str, names: dict) -> list[tuple]:
    """A table's rows with ids replaced by what they stand for (file name, run ordinal)."""
    cur = con.execute(f'SELECT * FROM "{table}"')
    cols = [d[0] for d in cur.description]
    out = []
    for row in cur.fetchall():
        rec = []
        for c, v in zip(cols, row):
            if c in VOLATILE:
                continue
            if c == "source_id" and v is not None:
                v = names["source"][v]
            elif c in RUN_ID_COLUMNS and v is not None:
                v = names["run"][v]
            elif c.endswith("_id") and isinstance(v, int):
                v = names["other"].get((c, v), v)
            rec.append((c, v))
        out.append(tuple(rec))
    return sorted(out, key=repr)


def _names(con) -> dict:
    source = {sid: name for sid, name in con.execute("SELECT source_id, name || '@' || sha256 FROM sources").fetchall()}
    run = {rid: (source[sid], ordinal) for rid, sid, ordinal in
           con.execute("SELECT run_id, source_id, ordinal FROM runs").fetchall()}
    other = {("template_id", tid): (source.get(sid), tpl) for tid, sid, tpl in
             con.execute("SELECT template_id, source_id, template FROM templates").fetchall()}
    return {"source": source, "run": run, "other": other}


@pytest.mark.slow  # dataset ingests, 40-60 s each here
def test_dataset_tables_equal_database_tables(fleet_dir, tmp_path):
    files = _logs(fleet_dir)[:3] + [str(SAMPLES / "vllm_eagle3.log")]
    db = logsleuth.open_db(str(tmp_path / "one.duckdb"))
    logsleuth.ingest_files(db, files)
    result = ingest_dataset(str(tmp_path / "ds"), files, executor="serial")
    assert not result.failed and len(result.ingested) == len(files)
    ds = open_dataset(str(tmp_path / "ds"))
    tables = [t for (t,) in db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
        "AND table_name NOT IN ('meta', 'source_state') AND table_name NOT LIKE '%migration%' ORDER BY 1").fetchall()]
    assert {"runs", "sources", "decode_stats", "events_other", "events_bulk", "config"} <= set(tables)
    dn, sn = _names(db), _names(ds)
    for table in tables:
        assert _table_rows(ds, table, sn) == _table_rows(db, table, dn), table
    # every line is there once, and the shipped views work over the files
    assert ds.execute("SELECT count(*) FROM lines").fetchone() == db.execute("SELECT count(*) FROM lines").fetchone()
    assert ds.execute("SELECT count(*) FROM run_summary").fetchone()[0] == len(files)


@pytest.mark.slow  # dataset ingests, 40-60 s each here
def test_findings_on_dataset_equal_findings_on_database(fleet_dir, tmp_path):
    files = _logs(fleet_dir)[2:6]
    db = logsleuth.open_db(str(tmp_path / "one.duckdb"))
    logsleuth.ingest_files(db, files)
    ingest_dataset(str(tmp_path / "ds"), files, executor="local", workers=2)
    ds = open_dataset(str(tmp_path / "ds"))

    def key(con, findings):
        dn = _names(con)
        return sorted((f.rule_id, f.severity, dn["run"].get(f.run_id), f.line_no,
                       re.sub(r"(?i)\brun (\d+)\b", lambda m: f"run {dn['run'].get(int(m.group(1)))}", f.title))
                      for f in findings)

    got, want = key(ds, logsleuth.diagnose(ds)), key(db, logsleuth.diagnose(db))
    assert want, "the fleet's logs raise findings"
    assert got == want


@pytest.mark.slow  # dataset ingests, 40-60 s each here
def test_ids_are_unique_and_partitions_are_hive_style(fleet_dir, tmp_path):
    target = tmp_path / "ds"
    ingest_dataset(str(target), _logs(fleet_dir), host_from="{host}/server.log", executor="serial")
    ds = open_dataset(str(target))
    hosts = [h for (h,) in ds.execute("SELECT host FROM sources ORDER BY host").fetchall()]
    assert hosts == [f"gpu-{i:02d}" for i in range(1, 8)]
    rows = ds.execute("SELECT run_id, source_id FROM runs").fetchall()
    assert len({r for r, _ in rows}) == len(rows)
    assert all(r // RUN_STRIDE == s for r, s in rows)
    assert all(t // ID_STRIDE >= 1 for (t,) in ds.execute("SELECT template_id FROM templates").fetchall())
    manifest = json.loads((target / MANIFEST).read_text())
    some = manifest["sources"][0]["files"]["runs"]
    assert some.startswith("runs/host=gpu-01/date=") and some.endswith(".parquet")
    # the files are plain Parquet: any engine reads them with the partition columns
    n = duckdb.connect().execute(f"SELECT count(DISTINCT host) FROM read_parquet('{target}/runs/*/*/*.parquet', "
                   "hive_partitioning = true)").fetchone()[0]
    assert n == 7


def test_reingest_is_a_noop_and_a_grown_file_replaces_its_source(fleet_dir, tmp_path):
    log = tmp_path / "server.log"
    text = (SAMPLES / "sglang_tuned_v1.log").read_text(encoding="utf-8")
    half = text.index("\n", len(text) // 2) + 1
    log.write_text(text[:half], encoding="utf-8")
    target = str(tmp_path / "ds")
    first = ingest_dataset(target, [str(log)], host="h1", executor="serial")
    again = ingest_dataset(target, [str(log)], host="h1", executor="serial")
    assert again.skipped == [str(log)] and again.generation == first.generation
    log.write_text(text, encoding="utf-8")
    grown = ingest_dataset(target, [str(log)], host="h1", executor="serial")
    assert [e.source_id for e in grown.replaced] == [first.ingested[0].source_id]
    ds = open_dataset(target)
    assert ds.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
    assert ds.execute("SELECT count(*) FROM lines").fetchone()[0] == text.count("\n")
    # the replaced files stay one generation (a reader may still hold the old manifest), then go
    ingest_dataset(target, [str(SAMPLES / "vllm_eagle3.log")], host="h2", executor="serial")
    listed = {f for s in json.loads((Path(target) / MANIFEST).read_text())["sources"] for f in s["files"].values()}
    on_disk = {str(p.relative_to(target)) for p in Path(target).rglob("part-*.parquet")}
    assert on_disk == listed


@pytest.mark.slow  # dataset ingests, 40-60 s each here
def test_a_corrupt_file_fails_alone(fleet_dir, tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    files = _logs(fleet_dir)[:2] + [str(bad)]
    result = ingest_dataset(str(tmp_path / "ds"), files, executor="local", workers=2)
    assert [f.path for f in result.failed] == [str(bad)]
    assert "not a text log" in result.failed[0].message
    assert len(result.ingested) == 2
    assert open_dataset(str(tmp_path / "ds")).execute("SELECT count(*) FROM sources").fetchone()[0] == 2


KILLER = r"""
import os, signal, sys
from logsleuth.fleet import ingest_dataset
def die(job, outcome):
    os.kill(os.getpid(), signal.SIGKILL)   # kill -9 after the first source's part files are written
ingest_dataset(sys.argv[1], sys.argv[2:], executor="serial", on_done=die)
"""


@pytest.mark.slow  # dataset ingests, 40-60 s each here
def test_kill_mid_ingest_leaves_the_previous_manifest(fleet_dir, tmp_path):
    target = tmp_path / "ds"
    logs = _logs(fleet_dir)
    ingest_dataset(str(target), logs[:1], executor="serial")
    before = (target / MANIFEST).read_text()
    proc = subprocess.run([sys.executable, "-c", KILLER, str(target), *logs[1:3]], capture_output=True)
    assert proc.returncode == -9
    assert (target / MANIFEST).read_text() == before
    orphans = [p for p in target.rglob("part-*.parquet")
               if str(p.relative_to(target)) not in before]
    assert orphans, "the killed ingest had written part files"
    ds = open_dataset(str(target))
    assert ds.execute("SELECT count(*) FROM sources").fetchone()[0] == 1  # orphans are invisible
    ingest_dataset(str(target), logs[1:3], executor="serial")  # the next commit removes them
    assert not [p for p in orphans if p.exists()]
    assert open_dataset(str(target)).execute("SELECT count(*) FROM sources").fetchone()[0] == 3


def test_open_dataset_refuses_a_folder_without_manifest(tmp_path):
    with pytest.raises(logsleuth.LogsleuthError):
        open_dataset(str(tmp_path))


def test_the_sql_sandbox_keeps_the_dataset_readable_and_nothing_else(fleet_dir, tmp_path):
    from logsleuth.db.sandbox import sandbox

    ingest_dataset(str(tmp_path / "ds"), _logs(fleet_dir)[:1], executor="serial")
    con = open_dataset(str(tmp_path / "ds"))
    sandbox(con)
    assert con.execute("SELECT count(*) FROM lines").fetchone()[0] > 1000
    with pytest.raises(duckdb.Error, match="disabled by configuration"):
        con.execute("SELECT * FROM read_text('/etc/hostname')").fetchall()
