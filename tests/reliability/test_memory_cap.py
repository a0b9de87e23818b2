"""DuckDB's memory cap during an ingest: the lines are stored under INGEST_MEMORY, the runs
derived under the larger DERIVE_MEMORY (set-based updates keep undo data in memory; the
spec_stats rewrite of a 2 GB vLLM log ran out at 64 MB), both restored afterwards; a DuckDB
out-of-memory error is reported as itself, with the knob that raises the cap."""
from __future__ import annotations

import duckdb
import polars as pl
import pytest

import logsleuth
from logsleuth.derive import runs as derive_runs
from logsleuth.derive import sql as derive_sql
from logsleuth.ingest import pipeline
from logsleuth.ingest.options import IngestOptions
from support.cli import run_cli
from support.paths import SAMPLES

SAMPLE = SAMPLES / "sglang_tuned_v1.log"


def _limit(con) -> float:
    """memory_limit in MiB (DuckDB shows it as e.g. '61.0 MiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    value, unit = text.split()
    return float(value) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1 << 20}[unit]


def test_runs_are_derived_under_the_derive_cap(tmp_path, monkeypatch):
    monkeypatch.delenv("LOGSLEUTH_INGEST_MEMORY", raising=False)
    seen = {}
    original = derive_runs.finalize_source

    def spy(con, *args, **kwargs):
        seen["derive"] = _limit(con)
        return original(con, *args, **kwargs)

    monkeypatch.setattr(derive_runs, "finalize_source", spy)
    con = logsleuth.open_db(str(tmp_path / "x.duckdb"))
    before = _limit(con)
    original_loop = pipeline._ChunkLoop._read_parse_store

    def loop_spy(self):
        seen["store"] = _limit(self.ctx.con)
        return original_loop(self)

    monkeypatch.setattr(pipeline._ChunkLoop, "_read_parse_store", loop_spy)
    pipeline.ingest_source(con, str(SAMPLE), IngestOptions())  # the path of a file alone (big files)
    assert seen["store"] == pytest.approx(64 * 1000**2 / 1024**2, rel=0.05)  # 64 MB
    assert seen["derive"] == pytest.approx(256 * 1000**2 / 1024**2, rel=0.05)  # 256 MB
    assert _limit(con) == pytest.approx(before, rel=0.01)  # (DuckDB shows, and so restores, 3 digits)
    con.close()


def test_a_failing_derivation_statement_is_reported_as_itself():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (run_id INTEGER, v VARCHAR)")
    con.execute("INSERT INTO t VALUES (1, 'x')")
    con.execute("BEGIN")
    with pytest.raises(duckdb.ConversionException):
        derive_sql.run_set(con, "unused", runs=[1], frames={"p": pl.DataFrame({"run_id": [1]})},
                           text="SELECT v::INTEGER FROM t JOIN p USING (run_id) WHERE {runs}")
    con.execute("ROLLBACK")
    with pytest.raises(duckdb.CatalogException):  # the frame was unregistered all the same
        con.execute("SELECT * FROM p")


def test_duckdb_out_of_memory_names_the_knob(tmp_path):
    res = run_cli("ingest", str(SAMPLE), db=str(tmp_path / "x.duckdb"), env={"LOGSLEUTH_INGEST_MEMORY": "1MB"})
    assert res.returncode == 70, res.stderr
    err = res.stderr.decode()
    assert "DuckDB ran out of memory" in err and "LOGSLEUTH_INGEST_MEMORY" in err
    assert "Traceback" not in err and "TransactionException" not in err
