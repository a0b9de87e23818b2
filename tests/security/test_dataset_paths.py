"""A dataset's manifest is input, not trusted state: no path read from it reaches outside the
dataset root, clean-up deletes only part files under the root, and read-only `sql` on a
dataset writes nothing (not even into the dataset's own folder).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from support.cli import run_in_process
from support.paths import SAMPLES

MANIFEST = "_logsleuth_manifest.json"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("logs")
    a, b = d / "a.log", d / "b.log"
    a.write_bytes((SAMPLES / "sglang_baseline.log").read_bytes()[:20000])
    b.write_bytes((SAMPLES / "vllm_eagle3.log").read_bytes()[:30000])
    return a, b


@pytest.fixture(scope="module")
def template_ds(tmp_path_factory, logs) -> Path:
    ds = tmp_path_factory.mktemp("tds") / "ds"
    code, _, err = run_in_process("ingest", "--dataset", str(ds), str(logs[0]), db=None)
    assert code == 0, err
    return ds


@pytest.fixture
def ds(template_ds, tmp_path) -> Path:
    out = tmp_path / "work" / "ds"
    shutil.copytree(template_ds, out)
    return out


def _victim(root: Path) -> Path:
    """A folder outside the dataset holding files named like part files."""
    victim = root / "victim" / "host=x"
    victim.mkdir(parents=True)
    for i in range(3):
        (victim / f"part-00000{i}-abc.parquet").write_text("precious")
    return root / "victim"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _edit_manifest(ds: Path, edit) -> None:
    body = json.loads((ds / MANIFEST).read_text())
    edit(body)
    (ds / MANIFEST).write_text(json.dumps(body))


@pytest.mark.parametrize("key", ["../victim", "../../elsewhere/victim", "{abs}", "runs/../../victim"])
def test_a_manifest_table_outside_the_root_deletes_nothing(ds, logs, key):
    victim = _victim(ds.parent)
    before = _snapshot(victim)
    key = key.format(abs=str(victim))
    _edit_manifest(ds, lambda m: m["tables"].__setitem__(key, [["a", "INTEGER"]]))
    code, out, err = run_in_process("ingest", "--dataset", str(ds), str(logs[1]), db=None)
    assert code == 3, (code, out, err)
    assert "outside the dataset" in err and "Traceback" not in err, err
    assert _snapshot(victim) == before


@pytest.mark.parametrize("where", ["files", "retired"])
def test_a_part_path_outside_the_root_is_refused_on_read_and_write(ds, logs, where):
    victim = _victim(ds.parent)
    before = _snapshot(victim)
    bad = "../victim/host=x/part-000000-abc.parquet"

    def edit(m):
        if where == "files":
            m["sources"][0]["files"]["runs"] = bad
        else:
            m["retired"] = [bad]
    _edit_manifest(ds, edit)
    for args in (("ingest", "--dataset", str(ds), str(logs[1])), ("--dataset", str(ds), "runs")):
        code, out, err = run_in_process(*args, db=None)
        assert code == 3, (args, code, out, err)
        assert "outside the dataset" in err, err
    assert _snapshot(victim) == before


def test_a_symlinked_table_folder_is_not_followed_by_the_clean_up(ds, logs):
    victim = _victim(ds.parent)
    before = _snapshot(victim)
    (ds / "lines_other" / "host=evil").symlink_to(victim / "host=x", target_is_directory=True)
    code, out, err = run_in_process("ingest", "--dataset", str(ds), str(logs[1]), db=None)
    assert code == 0, err
    assert _snapshot(victim) == before


def test_a_manifest_from_another_dataset_deletes_nothing_of_either(ds, logs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(ds, other)
    # the copied manifest names the other dataset's parts by absolute path
    body = json.loads((ds / MANIFEST).read_text())
    for s in body["sources"]:
        s["files"] = {t: str(other / f) for t, f in s["files"].items()}
    (ds / MANIFEST).write_text(json.dumps(body))
    before = _snapshot(other)
    code, out, err = run_in_process("ingest", "--dataset", str(ds), str(logs[1]), db=None)
    assert code == 3 and "outside the dataset" in err, (code, err)
    assert _snapshot(other) == before


# --- read-only sql on a dataset -------------------------------------------------------------------

def _part(ds: Path) -> Path:
    return next((ds / "runs").rglob("part-*.parquet"))


WRITES = [
    "COPY (SELECT 'garbage') TO '{ds}/_logsleuth_manifest.json' (FORMAT csv, HEADER false)",
    "COPY (SELECT 1 AS a) TO '{part}' (FORMAT parquet)",
    "COPY runs TO '{ds}/new.csv'",
    "EXPORT DATABASE '{ds}/exported'",
    "ATTACH '{ds}/new.duckdb' AS n",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{ds}/new.csv'",
    "COPY (SELECT 1) TO '{outside}'",
    "SELECT * FROM read_text('/etc/hostname')",
]


@pytest.mark.parametrize("stmt", WRITES)
def test_read_only_sql_on_a_dataset_writes_nothing(ds, tmp_path, stmt):
    before = _snapshot(ds)
    outside = tmp_path / "outside.csv"
    code, out, err = run_in_process("--dataset", str(ds), "sql",
                                    stmt.format(ds=ds, part=_part(ds), outside=outside), db=None)
    assert code == 4, (code, out, err)
    assert "Traceback" not in err
    assert _snapshot(ds) == before and not outside.exists()
    code, out, err = run_in_process("--dataset", str(ds), "sql", "SELECT count(*) FROM runs", db=None)
    assert code == 0, err


def test_allow_files_still_lets_a_dataset_query_write_out(ds, tmp_path):
    target = tmp_path / "runs.csv"
    code, _, err = run_in_process("--dataset", str(ds), "sql", "--allow-files", f"COPY runs TO '{target}'",
                                  db=None)
    assert code == 0 and target.exists(), err
    assert os.path.getsize(target) > 0
