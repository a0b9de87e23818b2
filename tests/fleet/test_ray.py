"""The fleet path on a real local Ray cluster (two CPUs): same dataset as local processes."""
from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from logsleuth.fleet import fleet_summary, ingest_dataset, open_dataset  # noqa: E402


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=repr)


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
    for sql in ("SELECT host, name, n_lines, engine FROM sources",
                "SELECT run_id, engine, model, end_state, single_stream_tok_s FROM run_summary",
                "SELECT source_id, line_no, kind, raw FROM lines",
                "SELECT run_id, line_no, gen_tok_s FROM decode_stats"):
        assert _rows(a, sql) == _rows(b, sql), sql
    flags = fleet_summary(a, with_findings=False).flags()
    assert {(f["kind"], f["hosts"]) for f in flags} == {("outlier", "gpu-04"), ("crash_cluster", "gpu-05, gpu-06, gpu-07")}
