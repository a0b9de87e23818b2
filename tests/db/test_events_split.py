"""Schema 4 stores events in two tables behind the ``events`` view: ``events_bulk`` holds the
events of the per-request lines (HTTP access lines, request logs: event patterns with
``bulk = true``), ``events_other`` every other event. The view is their union, nothing is
lost or stored twice, and a schema-3 database (one ``events`` table) is split in place.
``decode_primary.seq`` numbers each scheduler's timed reports (1, 2, ... in line order)."""
from __future__ import annotations

import sys

import duckdb
import pytest

import logsleuth
from logsleuth import api
from logsleuth.db import schema
from logsleuth import open_db  # the library opener: it hands the upgrade steps their derivations
from logsleuth.formats import grammar as G
from logsleuth.analysis.format_check import _Known, reference_problems
from support.db import unsplit
from support.paths import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402

#: the event patterns whose rows belong in events_bulk, and the kinds they emit
BULK_PATTERNS = {p.name for g in G.default_grammars() for p in g.patterns if p.table == "events" and p.bulk}
BULK_KINDS = {p.emits for g in G.default_grammars() for p in g.patterns if p.table == "events" and p.bulk}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Samples of both engines and a small generated vLLM log (request logs and access lines)."""
    folder = tmp_path_factory.mktemp("events_split")
    gen = generate(folder / "vllm_gen.log", "vllm", 2 << 20, seed=3)
    path = folder / "split.duckdb"
    con = open_db(str(path))
    try:
        api.ingest_files(con, [str(SAMPLES / "sglang_tuned_v1.log"), str(SAMPLES / "vllm_kimi_k25.log"),
                               str(SAMPLES / "eras" / "vllm_v1_0.10.1_workers.log"), str(gen)])  # (queue_saturation fires)
    finally:
        con.close()
    return path


def _one(con, sql):
    return con.execute(sql).fetchone()[0]


def test_the_bulk_event_patterns_are_the_per_request_lines():
    assert {"http_access", "request_log"} <= BULK_KINDS
    assert "http_access" in BULK_PATTERNS
    assert schema.EVENT_TABLES == ("events_other", "events_bulk")


def test_events_view_is_the_union_of_its_two_tables(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _one(con, "SELECT table_type FROM information_schema.tables WHERE table_name = 'events'") == "VIEW"
        other, bulk, total = con.execute("SELECT (SELECT count(*) FROM events_other), "
                                         "(SELECT count(*) FROM events_bulk), (SELECT count(*) FROM events)").fetchone()
        assert other > 0 and bulk > 0 and total == other + bulk
        # the same rows, every column (EXCEPT ALL counts duplicates)
        assert _one(con, "SELECT count(*) FROM (FROM events EXCEPT ALL (FROM events_other UNION ALL FROM events_bulk))") == 0
        assert _one(con, "SELECT count(*) FROM ((FROM events_other UNION ALL FROM events_bulk) EXCEPT ALL FROM events)") == 0
        # one event per line: no line's event is stored in both tables
        assert _one(con, "SELECT count(*) FROM events_other o JOIN events_bulk b USING (source_id, line_no)") == 0
        cols = [r[0] for r in con.execute("DESCRIBE events").fetchall()]
        assert cols == [c for c, _ in schema.TABLES["events_other"]] == [c for c, _ in schema.TABLES["events_bulk"]]
    finally:
        con.close()


def test_access_lines_land_in_events_bulk_and_nothing_is_lost(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        kinds_bulk = {k for (k,) in con.execute("SELECT DISTINCT kind FROM events_bulk").fetchall()}
        kinds_other = {k for (k,) in con.execute("SELECT DISTINCT kind FROM events_other").fetchall()}
        assert "http_access" in kinds_bulk and kinds_bulk <= BULK_KINDS
        assert not (kinds_other & BULK_KINDS)
        # every line a bulk event pattern claimed has its event in events_bulk, and only those
        pats = sorted(BULK_PATTERNS)
        n_lines = con.execute("SELECT count(*) FROM lines WHERE list_contains($p, pattern)", {"p": pats}).fetchone()[0]
        assert n_lines == _one(con, "SELECT count(*) FROM events_bulk") > 0
        # the HTTP access lines of the files, counted in the lines themselves
        n_access = _one(con, "SELECT count(*) FROM lines WHERE pattern = 'http_access'")
        assert n_access == _one(con, "SELECT count(*) FROM events_bulk WHERE kind = 'http_access'") > 0
        # events and their lines are in the matching store: bulk events on lines_bulk lines
        assert _one(con, "SELECT count(*) FROM events_bulk e ANTI JOIN lines_bulk l USING (source_id, line_no)") == 0
        assert _one(con, "SELECT count(*) FROM events_other e ANTI JOIN lines_other l USING (source_id, line_no)") == 0
        # every line the events table claims has its event
        assert _one(con, "SELECT count(*) FROM lines l ANTI JOIN events e USING (source_id, line_no) "
                         "WHERE l.kind = 'events'") == 0
    finally:
        con.close()


def _downgrade_to_v3(db) -> None:
    """The database as schema 3 wrote it: one events table, in line order."""
    con = duckdb.connect(str(db))
    unsplit(con, "events")
    con.execute("ALTER TABLE decode_primary DROP COLUMN seq")
    con.execute("DROP TABLE queue_stretches")
    con.execute("ALTER TABLE run_rollup DROP COLUMN stretch_kv_full")
    con.execute("ALTER TABLE run_rollup DROP COLUMN stretch_kv_busy")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.execute("DELETE FROM schema_migrations WHERE name IN ('0004_split_events', '0005_decode_seq', "
                "'0006_queue_stretches')")
    con.close()


def test_schema3_database_is_split_when_opened(db, tmp_path):
    old = tmp_path / "v3.duckdb"
    old.write_bytes(db.read_bytes())
    before = open_db(str(old), read_only=True)
    want_rows = sorted(before.execute("SELECT source_id, line_no, kind FROM events").fetchall())
    want_other = before.execute("SELECT count(*) FROM events_other").fetchone()[0]
    want = sorted((f.rule_id, f.run_id, f.line_no) for f in logsleuth.diagnose(before))
    want_seq = before.execute("SELECT source_id, line_no, seq FROM decode_primary ORDER BY ALL").fetchall()
    want_stretches = before.execute("SELECT * FROM queue_stretches ORDER BY ALL").fetchall()
    before.close()
    _downgrade_to_v3(old)

    con = open_db(str(old), read_only=True)
    try:
        assert int(_one(con, "SELECT value FROM meta WHERE key = 'schema_version'")) == schema.SCHEMA_VERSION
        assert _one(con, "SELECT table_type FROM information_schema.tables WHERE table_name = 'events'") == "VIEW"
        assert sorted(con.execute("SELECT source_id, line_no, kind FROM events").fetchall()) == want_rows
        assert _one(con, "SELECT count(*) FROM events_other") == want_other
        assert {k for (k,) in con.execute("SELECT DISTINCT kind FROM events_bulk").fetchall()} <= BULK_KINDS
        assert _one(con, "SELECT count(*) FROM schema_migrations WHERE name = '0004_split_events'") == 1
        assert con.execute("SELECT source_id, line_no, seq FROM decode_primary ORDER BY ALL").fetchall() == want_seq
        assert con.execute("SELECT * FROM queue_stretches ORDER BY ALL").fetchall() == want_stretches
        assert sorted((f.rule_id, f.run_id, f.line_no) for f in logsleuth.diagnose(con)) == want
    finally:
        con.close()


def test_formats_check_names_the_store_of_an_event_kind():
    k = _Known.of(G.load_grammars(check_regexes=False))
    ok = """SELECT 1 FROM events_other WHERE kind = 'weights_loaded'
            UNION ALL SELECT 1 FROM events_bulk WHERE kind = 'http_access'
            UNION ALL SELECT 1 FROM events WHERE kind IN ('http_access', 'weights_loaded')"""
    assert reference_problems("x.sql", ok, k) == []
    bad = reference_problems("x.sql", "SELECT 1 FROM events_other e WHERE e.kind = 'http_access'", k)
    assert [p.what for p in bad] == ["event kind 'http_access' is stored in events_bulk, not in events_other"]
    bad = reference_problems("x.sql", "SELECT 1 FROM events_bulk WHERE kind = 'limits'", k)
    assert [p.what for p in bad] == ["event kind 'limits' is stored in events_other, not in events_bulk"]


def test_decode_primary_seq_numbers_each_schedulers_timed_reports(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        n, bad = con.execute("""
            WITH x AS (SELECT seq, row_number() OVER (PARTITION BY source_id, run_id, coalesce(engine_idx, dp_rank, -1)
                                                      ORDER BY line_no) AS want
                       FROM decode_primary WHERE ts IS NOT NULL)
            SELECT count(*), count(*) FILTER (WHERE seq IS DISTINCT FROM want) FROM x""").fetchone()
        assert n > 0 and bad == 0
        assert _one(con, "SELECT count(*) FROM decode_primary WHERE ts IS NULL AND seq IS NOT NULL") == 0
        # the copy keeps decode_stats' line order (aggregates that pick among equal values follow it)
        assert _one(con, "SELECT count(*) FROM (SELECT line_no < lag(line_no) OVER () AS back "
                         "FROM decode_primary WHERE source_id = 1) WHERE back") == 0
    finally:
        con.close()


def test_queue_saturation_reads_the_stretches_found_at_ingest_or_finds_them(db, tmp_path):
    """With its default thresholds the rule reads queue_stretches (found when the runs were
    derived); with others, or for runs without them, it finds the stretches in decode_primary:
    the same findings either way."""
    assert _one(duckdb.connect(str(db), read_only=True), "SELECT count(*) FROM queue_stretches") > 0
    live = tmp_path / "live.duckdb"
    live.write_bytes(db.read_bytes())
    con = duckdb.connect(str(live))
    con.execute("UPDATE run_rollup SET stretch_kv_full = NULL, stretch_kv_busy = NULL")
    con.execute("DELETE FROM queue_stretches")
    con.close()

    def found(path, sets=None):
        c = open_db(str(path), read_only=True)
        try:
            return [(f.run_id, f.line_no, f.title, f.evidence_lines) for f in logsleuth.diagnose(
                c, rule_ids=["queue_saturation"], sets=sets)]
        finally:
            c.close()

    pre = found(db)
    assert pre and pre == found(live)
    # other thresholds: computed live on both databases alike
    assert found(db, ["queue_saturation.kv_full=0.8"]) == found(live, ["queue_saturation.kv_full=0.8"])
