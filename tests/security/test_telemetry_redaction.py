"""Telemetry goes through the logs' redaction policy: a secret in a Prometheus label value, in a
GPU sampler's text or in a bench result JSON (a ``base_url`` with a password, an ``api_key``
field, a token anywhere) reaches neither the database file's bytes nor any text column, while
the samples themselves are still parsed. A live scrape response (``scrape._parse_response``)
and the URL it is stored under are masked the same way.

Example counts: 3 examples per file kind (each an ingest), secrets drawn from every known shape.
"""
from __future__ import annotations

import json

import duckdb
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import Phase, given, settings, strategies as st  # noqa: E402

import logsleuth  # noqa: E402
from logsleuth.ingest.pipeline import IngestOptions  # noqa: E402

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

_spec = importlib.util.spec_from_file_location("_redaction_property", Path(__file__).with_name("test_redaction_property.py"))
_prop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_prop)
SHAPED, AWS_SECRET, PLAIN_VALUE, URL_PASSWORD = _prop.SHAPED, _prop.AWS_SECRET, _prop.PLAIN_VALUE, _prop.URL_PASSWORD

EXAMPLES = 3
ONCE = settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate])
TOKEN = st.one_of(SHAPED, AWS_SECRET)


def _ingest(folder: Path, name: str, text: str) -> tuple[str, dict]:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    db = str(folder / "t.duckdb")
    con = logsleuth.open_db(db)
    try:
        results = logsleuth.ingest_files(con, [str(path)], IngestOptions())
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("metrics", "gpu_samples", "bench_results", "lines_other")}
        con.execute("CHECKPOINT")
    finally:
        con.close()
    assert results[0].status == "ingested"
    return db, counts


def _assert_absent(db: str, secrets: list[str]) -> None:
    data = open(db, "rb").read()
    con = duckdb.connect(db, read_only=True)
    try:
        cols = con.execute("""SELECT table_name, column_name FROM information_schema.columns
                              WHERE table_schema = 'main' AND data_type = 'VARCHAR'""").fetchall()
        for secret in secrets:
            assert secret.encode() not in data, secret
            for table, column in cols:
                hit = con.execute(f'SELECT count(*) FROM "{table}" WHERE contains("{column}", ?)', [secret]).fetchone()[0]
                assert hit == 0, (table, column, secret)
    finally:
        con.close()


@ONCE
@given(TOKEN, PLAIN_VALUE, TOKEN)
def test_prometheus_label_values(tmp_path_factory, token, api_key, other):
    text = (
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        f'vllm:num_requests_running{{engine="0",model_name="Qwen/Qwen3-8B",token="{token}"}} 3.0\n'
        f'vllm:num_requests_running{{engine="1",model_name="Qwen/Qwen3-8B",api_key="{api_key}"}} 2.0\n'
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        f'vllm:num_requests_waiting{{engine="0",model_name="Qwen/Qwen3-8B",note="{other}"}} 1.0\n')
    db, counts = _ingest(tmp_path_factory.mktemp("prom"), "metrics.prom", text)
    assert counts["metrics"] == 3 and counts["lines_other"] == 7  # still parsed, every line kept
    _assert_absent(db, [token, api_key, other])


@ONCE
@given(TOKEN)
def test_gpu_sample_text(tmp_path_factory, token):
    text = ("timestamp, name, pstate, temperature.gpu, utilization.gpu [%], memory.used [MiB]\n"
            f"2024/01/16 14:44:16.977, NVIDIA H100 {token}, P0, 45, 97 %, 70000 MiB\n"
            "2024/01/16 14:44:17.977, NVIDIA H100, P0, 46, 98 %, 70010 MiB\n")
    db, counts = _ingest(tmp_path_factory.mktemp("gpu"), "gpu.csv", text)
    assert counts["gpu_samples"] == 2
    _assert_absent(db, [token])


@ONCE
@given(URL_PASSWORD, PLAIN_VALUE, TOKEN)
def test_bench_json_fields(tmp_path_factory, password, api_key, token):
    sample = Path(__file__).parents[1] / "samples" / "telemetry" / "vllm_bench.json"
    obj = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    obj.update({"base_url": f"http://admin:{password}@10.0.0.5:8000", "api_key": api_key,
                "label": f"run with {token}"})
    db, counts = _ingest(tmp_path_factory.mktemp("bench"), "result.json", json.dumps(obj) + "\n")
    assert counts["bench_results"] == 1
    _assert_absent(db, [password, api_key, token])


def test_scrape_response_and_url_are_masked():
    import datetime as dt

    from logsleuth.ingest.redact import redact_name
    from logsleuth.telemetry.scrape import _parse_response

    token = "hf_" + "aB3" * 10
    body = ("# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{engine="0",model_name="m",token="{token}"}} 1.0\n')
    lines, _kinds, metrics = _parse_response("http://127.0.0.1:8000/metrics", body, dt.datetime(2026, 1, 1), 1, 1)
    assert metrics.height == 1
    assert not any(token in line for line in lines)
    assert not any(token in str(v) for row in metrics.rows() for v in row)
    assert redact_name("http://admin:s3cr3t-pw@10.0.0.5:8000/metrics") == "http://admin:***@10.0.0.5:8000/metrics"
