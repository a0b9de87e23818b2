"""The fleet path on a real local Ray cluster (two CPUs): same dataset as local processes."""
from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from logsleuth.fleet import fleet_summary, ingest_dataset, open_dataset  # noqa: E402

pytestmark = pytest.mark.slow  # a Ray cluster


@pytest.fixture(scope="module")
def ray_cluster():
    import shutil
    import tempfile

    # the session folder (logs, sockets) in a short temporary path removed afterwards, not /tmp/ray
    session = tempfile.mkdtemp(prefix="lsray-")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False, _temp_dir=session)
    yield
    ray.shutdown()
    shutil.rmtree(session, ignore_errors=True)


def _rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=repr)


def _assert_same_rows(a, b, *sqls):
    for sql in sqls:
        assert _rows(a, sql) == _rows(b, sql), sql


def test_ray_ingest_equals_local_processes_and_reports_a_corrupt_file(ray_cluster, fleet_dir, tmp_path):
    logs = sorted(str(p) for p in fleet_dir.rglob("server.log"))
    bad = tmp_path / "gpu-99" / "server.log"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 64)  # a gzip header and then nothing valid
    on_ray = ingest_dataset(str(tmp_path / "ray"), [*logs, str(bad)], host_from="{host}/server.log",
                            executor="ray")
    assert [f.path for f in on_ray.failed] == [str(bad)]
    assert len(on_ray.ingested) == len(logs)
    local = ingest_dataset(str(tmp_path / "local"), logs, host_from="{host}/server.log", executor="local", workers=2)
    assert not local.failed
    a, b = open_dataset(str(tmp_path / "ray")), open_dataset(str(tmp_path / "local"))
    _assert_same_rows(a, b, "SELECT host, name, n_lines, engine FROM sources",
                      "SELECT run_id, engine, model, end_state, single_stream_tok_s FROM run_summary",
                      "SELECT source_id, line_no, kind, raw FROM lines",
                      "SELECT run_id, line_no, gen_tok_s FROM decode_stats")
    flags = fleet_summary(a, with_findings=False).flags()
    assert {(f["kind"], f["hosts"]) for f in flags} == {("outlier", "gpu-04"), ("crash_cluster", "gpu-05, gpu-06, gpu-07")}


def test_ray_parses_a_large_file_as_byte_ranges_with_the_same_rows(ray_cluster, tmp_path):
    """Byte ranges of one file on Ray tasks, merged by another: the rows of a whole-file ingest."""
    from support.paths import SAMPLES

    log = tmp_path / "restarts.log"
    log.write_bytes(b"".join((SAMPLES / name).read_bytes() for name in
                             ("sglang_baseline.log", "eras/sglang_capture_oom.log", "sglang_tuned_v1.log")))
    split = ingest_dataset(str(tmp_path / "split"), [str(log)], executor="ray", split_bytes=20_000)
    assert split.notes[str(log)] == "split into 3 byte ranges at launch boundaries"
    whole = ingest_dataset(str(tmp_path / "whole"), [str(log)], executor="serial", split_bytes=None)
    a, b = open_dataset(str(tmp_path / "split")), open_dataset(str(tmp_path / "whole"))
    _assert_same_rows(a, b, "SELECT run_id, first_line, last_line, end_state FROM runs",
                      "SELECT source_id, line_no, run_id, kind, raw FROM lines",
                      "SELECT run_id, line_no, gen_tok_s FROM decode_stats",
                      "SELECT template_id, template FROM templates")
    assert not list((tmp_path / "split").glob("_staging/**/*.parquet"))
    assert not whole.notes
