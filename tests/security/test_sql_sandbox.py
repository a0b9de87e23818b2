"""SQL is read-only and sandboxed unless asked: `sql` without --write reads the logsleuth database
and nothing else (no file, no other database, no extension); rule files can never write, not even
`diagnose --rules-dir DIR PATH`, which opens the database writable to ingest PATH first.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from support.cli import run_in_process
from support.paths import SAMPLES

LOG = SAMPLES / "sglang_baseline.log"


def _counts(db: str) -> tuple:
    con = duckdb.connect(db, read_only=True)
    try:
        return (con.execute("SELECT count(*) FROM runs").fetchone()[0],
                con.execute("SELECT count(*) FROM lines").fetchone()[0],
                con.execute("SELECT count(*) FROM sources").fetchone()[0])
    finally:
        con.close()


@pytest.fixture(scope="module")
def template_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("sbx") / "t.duckdb")
    code, _, err = run_in_process("ingest", str(LOG), db=db)
    assert code == 0, err
    return db


@pytest.fixture
def db(template_db, tmp_path) -> str:
    import shutil

    path = str(tmp_path / "db.duckdb")
    shutil.copy(template_db, path)
    return path


def _refused(db: str, statement: str, *extra: str) -> str:
    code, out, err = run_in_process("sql", *extra, "--", statement, db=db)
    assert code == 4, (statement, code, out, err)
    assert err.startswith("Error: ") and "Traceback" not in err, err
    return err


def test_sql_refuses_writes_and_file_access(db, tmp_path):
    before = _counts(db)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    other = str(tmp_path / "other.duckdb")
    con = duckdb.connect(other)
    con.execute("CREATE TABLE t (a INT)")
    con.close()
    statements = [
        f"COPY runs TO '{victim}'",
        f"COPY (SELECT 1) TO '{tmp_path / 'new.csv'}'",
        f"EXPORT DATABASE '{tmp_path / 'exported'}'",
        f"ATTACH '{other}' AS o (READ_WRITE); INSERT INTO o.t VALUES (1)",
        f"ATTACH '{other}' AS o",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')",
        f"SELECT * FROM read_blob('{victim}')",
        "SET enable_external_access = true",
        "RESET enable_external_access",
        "SET lock_configuration = false",
        "DELETE FROM runs",
        "DROP TABLE lines_other",
        "CREATE TABLE x (a INT)",
        "UPDATE sources SET name = 'x'",
    ]
    for stmt in statements:
        _refused(db, stmt)
    assert victim.read_text() == "keep me"
    assert not (tmp_path / "new.csv").exists() and not (tmp_path / "exported").exists()
    con = duckdb.connect(other, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    finally:
        con.close()
    assert _counts(db) == before


def test_refusals_say_how_to_allow(db):
    assert "--allow-files" in _refused(db, "SELECT * FROM read_text('/etc/hostname')")
    assert "--write" in _refused(db, "DELETE FROM runs")


def test_write_and_allow_files_open_what_is_asked(db, tmp_path):
    code, out, err = run_in_process("sql", "--format", "csv", "--allow-files",
                                    "SELECT count(*) AS n FROM read_text('/etc/hostname')", db=db)
    assert code == 0 and out.splitlines() == ["n", "1"], err
    target = tmp_path / "runs.csv"
    code, _, err = run_in_process("sql", "--allow-files", f"COPY runs TO '{target}'", db=db)
    assert code == 0 and target.exists(), err
    # --write changes the database, still without file access
    code, _, err = run_in_process("sql", "--write", "DELETE FROM runs WHERE run_id < 0", db=db)
    assert code == 0, err
    _refused(db, "SELECT * FROM read_text('/etc/hostname')", "--write")


@pytest.mark.parametrize("statement", ["", "   ", ";", "-- only a comment"])
def test_empty_sql_is_a_query_error(db, statement):
    err = _refused(db, statement)
    assert "empty SQL" in err


def test_interval_union_and_map_results_render(db):
    for fmt in ("table", "csv", "json", "markdown"):
        code, out, err = run_in_process(
            "sql", "--format", fmt,
            "SELECT INTERVAL 1 DAY AS i, INTERVAL '90 minutes' AS j, union_value(k := 1) AS u, "
            "map([1], ['a']) AS m", db=db)
        assert code == 0, (fmt, err)
        assert "1 day" in out and "01:30:00" in out, out


def test_json_output_never_prints_infinity_or_nan(db):
    code, out, err = run_in_process("sql", "--format", "json",
                                    "SELECT 'inf'::DOUBLE AS a, '-inf'::DOUBLE AS b, 'nan'::DOUBLE AS c, 1.5 AS d",
                                    db=db)
    assert code == 0, err
    import json

    assert json.loads(out) == [{"a": None, "b": None, "c": None, "d": 1.5}]
    assert "Infinity" not in out and "NaN" not in out


# --- rule files ---------------------------------------------------------------------------------

_HEADER = "-- id: {id}\n-- severity: warning\n-- title: t {{run_id}}\n-- fix: f\n"


def _rule_dir(tmp_path: Path, rid: str, sql: str, requires: str = "") -> Path:
    d = tmp_path / f"rules_{rid}"
    d.mkdir()
    head = _HEADER.format(id=rid) + (f"-- requires: {requires}\n" if requires else "")
    (d / f"{rid}.sql").write_text(head + sql + "\n", encoding="utf-8")
    return d


WRITING_RULES = {
    "deletes": "DELETE FROM runs; DELETE FROM lines_other; SELECT 1 AS run_id, 1 AS line_no",
    "drops": "DROP TABLE lines_other; SELECT 1 AS run_id, 1 AS line_no",
    "copies": "COPY runs TO '{victim}'",
    "attaches": "ATTACH '{other}' AS o; SELECT 1 AS run_id, 1 AS line_no",
    "updates": "UPDATE sources SET name = 'pwned' RETURNING source_id AS run_id, 1 AS line_no",
    "inserts": "INSERT INTO meta VALUES ('x', 'y') RETURNING 1 AS run_id, 1 AS line_no",
}


@pytest.mark.parametrize("rid", sorted(WRITING_RULES))
@pytest.mark.parametrize("with_path", [False, True], ids=["diagnose", "diagnose-PATH"])
def test_a_rule_file_cannot_write(db, tmp_path, rid, with_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    sql = WRITING_RULES[rid].format(victim=victim, other=tmp_path / "other.duckdb")
    rules = _rule_dir(tmp_path, rid, sql)
    before = _counts(db)
    args = ["diagnose", "--rules-dir", str(rules)] + ([str(LOG)] if with_path else [])
    code, out, err = run_in_process(*args, db=db)
    assert code == 3, (code, out, err)  # refused when the rules load: one SELECT is what a rule is
    assert f"{rid}.sql" in err and "SELECT" in err and "Traceback" not in err, err
    assert _counts(db) == before
    assert victim.read_text() == "keep me" and not (tmp_path / "other.duckdb").exists()


def test_a_select_rule_cannot_read_files(db, tmp_path):
    rules = _rule_dir(tmp_path, "reads", "SELECT 1 AS run_id, 1 AS line_no, content FROM read_text('/etc/hostname')")
    code, out, err = run_in_process("diagnose", "--rules-dir", str(rules), str(LOG), db=db)
    assert code == 4, (code, out, err)
    assert "disabled by configuration" in err


def test_requires_header_cannot_smuggle_sql(db, tmp_path):
    rules = _rule_dir(tmp_path, "smuggle", "SELECT 1 AS run_id, 1 AS line_no",
                      requires="runs; DELETE FROM runs; --")
    before = _counts(db)
    code, out, err = run_in_process("diagnose", "--rules-dir", str(rules), db=db)
    assert code == 3 and "requires" in err, (code, err)
    assert _counts(db) == before


def test_rules_run_read_only_even_on_a_writable_connection(db):
    """The library's diagnose on a writable connection: each rule runs in a READ ONLY
    transaction (a SELECT that writes through a table function fails, nothing changes)."""
    import logsleuth
    from logsleuth.analysis.rules import Rule, _run_one
    from logsleuth.errors import QueryError

    con = logsleuth.open_db(db)
    try:
        before = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        rule = Rule(id="seq", severity="info", title="t", fix="f", path="seq.sql",
                    sql="SELECT nextval('pwn_seq') AS run_id, 1 AS line_no")
        con.execute("CREATE SEQUENCE pwn_seq")
        with pytest.raises(QueryError, match="read-only|read only"):
            _run_one(con, rule)
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == before
    finally:
        con.close()
