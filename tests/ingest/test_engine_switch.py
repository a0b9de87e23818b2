"""Engine per run: a file holding an SGLang launch and then a vLLM launch (``cat a.log b.log``)
gives one run of each engine, each parsed with its own grammar, as if the two logs had been
ingested apart; chunk boundaries and appends do not change that."""
from __future__ import annotations

import pytest

import logsleuth
from logsleuth.ingest.pipeline import IngestOptions, ingest_source

from support.paths import SAMPLES

TYPED = ["decode_stats", "prefill_stats", "spec_stats", "events", "config", "errors", "bench_results"]


def _facts(con, source_ids) -> dict:
    ids = ", ".join(str(i) for i in source_ids)
    out = {t: con.execute(f"SELECT count(*) FROM {t} WHERE source_id IN ({ids})").fetchone()[0] for t in TYPED}
    out["kinds"] = sorted(con.execute(f"SELECT kind, count(*) FROM lines WHERE source_id IN ({ids}) GROUP BY 1").fetchall())
    out["engines"] = [r[0] for r in con.execute(
        f"SELECT engine FROM runs WHERE source_id IN ({ids}) ORDER BY run_id").fetchall()]
    out["versions"] = [r[0] for r in con.execute(
        f"SELECT engine_version FROM runs WHERE source_id IN ({ids}) ORDER BY run_id").fetchall()]
    return out


@pytest.mark.parametrize("order", [("sglang_tuned_v1.log", "vllm_eagle3.log"),
                                   ("vllm_kimi_k25.log", "sglang_eagle3.log")])
def test_concatenated_engines_parse_like_separate_files(tmp_path, order):
    parts = [SAMPLES / name for name in order]
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"".join(p.read_bytes() for p in parts))
    con = logsleuth.open_db(str(tmp_path / "db.duckdb"))
    try:
        apart = [ingest_source(con, str(p), IngestOptions()).source_id for p in parts]
        together = ingest_source(con, str(mixed), IngestOptions())
        assert together.status == "ingested"
        want, got = _facts(con, apart), _facts(con, [together.source_id])
        engines = [e for e in want["engines"]]
        assert got["engines"] == engines and set(engines) == {"sglang", "vllm"}
        assert got["versions"] == want["versions"]
        for table in TYPED:
            assert got[table] == want[table], table
        # the same lines are claimed (a few launch-chatter lines may move between the runs)
        assert dict(got["kinds"]).get("unparsed", 0) <= dict(want["kinds"]).get("unparsed", 0) + 2
    finally:
        con.close()


def test_engine_switch_survives_chunks_and_appends(tmp_path):
    data = b"".join((SAMPLES / n).read_bytes() for n in ("sglang_tuned_v1.log", "vllm_eagle3.log"))
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(data)
    con = logsleuth.open_db(str(tmp_path / "whole.duckdb"))
    try:
        ingest_source(con, str(mixed), IngestOptions())
        whole = _facts(con, [1])
    finally:
        con.close()
    con = logsleuth.open_db(str(tmp_path / "chunked.duckdb"))
    try:
        ingest_source(con, str(mixed), IngestOptions(chunk_bytes=16 * 1024))
        assert _facts(con, [1]) == whole
    finally:
        con.close()
    grow = tmp_path / "grow" / "mixed.log"
    grow.parent.mkdir()
    switch = len((SAMPLES / "sglang_tuned_v1.log").read_bytes())
    con = logsleuth.open_db(str(tmp_path / "grown.duckdb"))
    try:
        for end in (switch - 100, switch + 500, len(data)):  # the vLLM banner arrives in the 2nd piece
            grow.write_bytes(data[:end])
            ingest_source(con, str(grow), IngestOptions(chunk_bytes=16 * 1024))
        assert _facts(con, [1]) == whole
    finally:
        con.close()
