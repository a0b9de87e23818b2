"""Nothing is lost, duplicated or half-written: every physical line is stored once, re-ingest
is a no-op, --replace reproduces the same tables, a failing ingest rolls back, chunk
boundaries change nothing, and secrets never reach the database."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.ingested import CORPUS, SAMPLES, files_of, ingested

import logsleuth
from logsleuth.ingest.pipeline import IngestOptions, ingest_source

TABLES = ["sources", "runs", "lines", "config", "events", "decode_stats", "prefill_stats", "spec_stats", "errors",
          "bench_results", "templates", "env_reports"]


def _which():
    return ["corpus", "samples"] if CORPUS.is_dir() else ["samples"]


def _physical_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _copy(which: str, tmp_path: Path) -> str:
    dst = tmp_path / f"{which}.duckdb"
    shutil.copy(ingested(which), dst)
    return str(dst)


def _snapshot(con, exclude=("ingested_at",)) -> dict:
    out = {}
    for t in TABLES:
        cols = [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            [t]).fetchall() if c not in exclude]
        body = ", ".join(f'"{c}"' for c in cols)
        out[t] = con.execute(f"SELECT {body} FROM {t} ORDER BY ALL").fetchall()
    return out


@pytest.mark.parametrize("which", _which())
def test_every_physical_line_is_stored_once(which):
    con = logsleuth.open_db(ingested(which), read_only=True)
    try:
        got = {name: (n, kinds) for name, n, kinds in con.execute(
            """SELECT s.name, count(*), sum(1) FILTER (WHERE l.kind IS NOT NULL)
               FROM sources s JOIN lines l USING (source_id) GROUP BY s.name""").fetchall()}
        per_kind = dict(con.execute("""SELECT s.name, sum(c) FROM (SELECT source_id, kind, count(*) AS c FROM lines
                                       GROUP BY ALL) JOIN sources s USING (source_id) GROUP BY s.name""").fetchall())
        dupes = con.execute("""SELECT count(*) FROM (SELECT source_id, line_no FROM lines GROUP BY ALL
                               HAVING count(*) > 1)""").fetchone()[0]
    finally:
        con.close()
    assert dupes == 0
    files = files_of(which)
    assert sorted(got) == sorted(p.name for p in files)
    for path in files:
        n, with_kind = got[path.name]
        assert n == with_kind == per_kind[path.name] == _physical_lines(path), path.name


@pytest.mark.parametrize("which", _which())
def test_reingest_is_a_noop(which, tmp_path):
    path = _copy(which, tmp_path)
    con = logsleuth.open_db(path)
    try:
        before = _snapshot(con)
        results = logsleuth.ingest_files(con, [str(p) for p in files_of(which)], IngestOptions())
        after = _snapshot(con)
    finally:
        con.close()
    assert {r.status for r in results} == {"skipped"}
    assert all(r.notes for r in results)
    assert after == before


# multi-run, bench-only, errors, spec, interleaved Ray actors, env report
REPLACE_FILES = ["vllm__mrpid12org__imageworks__nohup.out", "sglang__Jiminator__sglang-rtx-pro-6000__benchmark-results.md"]
REPLACE_SAMPLES = ["eras/sglang_ray_actor.log", "env/rtxpro6000_check_env.txt"]


def _by_source(con, names) -> dict:
    """Rows of every table for these sources, with run ids (``run_id``, ``runs.deployment``)
    replaced by ordinals."""
    out = {}
    for name in names:
        sid = con.execute("SELECT source_id FROM sources WHERE name = ?", [name]).fetchone()[0]
        for t in TABLES:
            if t == "sources":
                continue
            cols = [c for (c,) in con.execute("""SELECT column_name FROM information_schema.columns
                                                 WHERE table_name = ? ORDER BY ordinal_position""", [t]).fetchall()
                    if c not in ("run_id", "template_id")]
            body = ", ".join(f'x."{c}"' for c in cols)
            join = ("LEFT JOIN runs r ON r.run_id = x.run_id" if t != "runs" else "")
            ordinal = "r.ordinal" if t != "runs" else "x.ordinal"
            if t in ("templates", "env_reports"):
                join, ordinal = "", "NULL"
            if t == "runs":  # a run id column of its own: the ordinal of the deployment's first run
                body = body.replace('x."deployment"', "(SELECT d.ordinal FROM runs d WHERE d.run_id = x.deployment)")
            out[(name, t)] = con.execute(f"SELECT {body}, {ordinal} FROM {t} x {join} WHERE x.source_id = ? "
                                         "ORDER BY ALL", [sid]).fetchall()
        out[(name, "templates")] = con.execute("SELECT template, n_lines FROM templates WHERE source_id = ? ORDER BY ALL",
                                               [sid]).fetchall()
    return out


def test_replace_gives_identical_tables(tmp_path):
    jobs = [("samples", [SAMPLES / r for r in REPLACE_SAMPLES])]
    if CORPUS.is_dir():
        jobs.append(("corpus", [CORPUS / n for n in REPLACE_FILES]))
    for which, paths in jobs:
        con = logsleuth.open_db(_copy(which, tmp_path))
        try:
            names = [p.name for p in paths]
            before = _by_source(con, names)
            n_sources = con.execute("SELECT count(*) FROM sources").fetchone()[0]
            results = logsleuth.ingest_files(con, [str(p) for p in paths], IngestOptions(replace=True,
                                                                                    year=2026 if which == "corpus" else None))
            assert [r.status for r in results] == ["replaced"] * len(paths)
            assert _by_source(con, names) == before
            assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == n_sources
        finally:
            con.close()


def test_failing_ingest_leaves_the_database_as_it_was(tmp_path, monkeypatch):
    import logsleuth.derive.runs as summarize

    files = [SAMPLES / "eras" / "vllm_kv_too_small.log", SAMPLES / "eras" / "sglang_v0.3_hms.log",
             SAMPLES / "eras" / "vllm_moe_untuned.log"]
    con = logsleuth.open_db(str(tmp_path / "fail.duckdb"))
    try:
        real = summarize.finalize_sources  # (finalize_source is its one-item form)
        calls = []

        def flaky(con, items):
            calls.extend(item[0] for item in items)
            out = real(con, items)  # lines, events, runs, templates of file 2 are written ...
            if len(calls) >= 2:  # (the two files of the batch are derived in one call)
                raise RuntimeError("boom in the middle of the second file")  # ... then it fails
            return out

        monkeypatch.setattr(summarize, "finalize_sources", flaky)
        ingest_source(con, str(files[0]), IngestOptions())
        before = _snapshot(con)
        with pytest.raises(RuntimeError, match="boom"):
            logsleuth.ingest_files(con, [str(p) for p in files[1:]], IngestOptions())
        assert len(calls) >= 2
        assert _snapshot(con) == before
        # the database is still usable and the same file ingests cleanly afterwards
        monkeypatch.setattr(summarize, "finalize_sources", real)
        results = logsleuth.ingest_files(con, [str(p) for p in files], IngestOptions())
        assert [r.status for r in results] == ["skipped", "ingested", "ingested"]
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 3
    finally:
        con.close()


CHUNKED = ["sglang_baseline.log", "eras/vllm_v1_0.12_color.log"]


@pytest.mark.parametrize("rel", CHUNKED)
def test_chunk_boundaries_change_nothing(tmp_path, rel):
    """Small chunks cut runs, tracebacks and benchmark blocks at arbitrary lines: same result."""
    path = str(SAMPLES / rel)
    a = logsleuth.open_db(str(tmp_path / "a.duckdb"))
    b = logsleuth.open_db(str(tmp_path / "b.duckdb"))
    try:
        ingest_source(a, path, IngestOptions())
        ingest_source(b, path, IngestOptions(chunk_bytes=20000))
        sa, sb = _snapshot(a), _snapshot(b)
    finally:
        a.close()
        b.close()
    for t in TABLES:
        assert sa[t] == sb[t], t


SECRETS = ["sk-live-4f9a8b7c6d5e4f3a2b1c", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123", "s3cr3t-passw0rd", "tok-9z8y7x6w5v"]


def test_secrets_are_redacted_everywhere(tmp_path):
    log = tmp_path / "secrets.log"
    log.write_text("\n".join([
        "+ export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123",
        "+ python3 -m sglang.launch_server --model-path m --api-key sk-live-4f9a8b7c6d5e4f3a2b1c --port 30000",
        "[2025-07-09 11:52:19] server_args=ServerArgs(model_path='m', tp_size=1, api_key='sk-live-4f9a8b7c6d5e4f3a2b1c', "
        "admin_api_key='tok-9z8y7x6w5v', attention_backend='fa3')",
        "[2025-07-09 11:52:20] Downloading from https://user:s3cr3t-passw0rd@mirror.example.com/models",
        "[2025-07-09 11:52:21] Request headers: {'Authorization': 'Bearer sk-live-4f9a8b7c6d5e4f3a2b1c'}",
        "[2025-07-09 11:53:50] The server is fired up and ready to roll!",
    ]) + "\n", encoding="utf-8")
    con = logsleuth.open_db(str(tmp_path / "s.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(log)], IngestOptions())
        dump = repr(_snapshot(con))
        assert con.execute("SELECT value FROM config WHERE key = 'api_key'").fetchone()[0] == "***"
        assert con.execute("SELECT value FROM config WHERE key = 'attention_backend'").fetchone()[0] == "fa3"
    finally:
        con.close()
    for secret in SECRETS:
        assert secret not in dump, secret


def test_corpus_api_key_is_redacted():
    if not CORPUS.is_dir():
        pytest.skip("real corpus not available")
    # the brief placed this secret in the MapCoder log; it is in the amdgoose one
    name = "vllm__amdgoose__arno_vllm_chat__vllm_server.log"
    assert b"'api_key': ['token-abc123']" in (CORPUS / name).read_bytes()
    con = logsleuth.open_db(ingested("corpus"), read_only=True)
    try:
        assert "token-abc123" not in repr(_snapshot(con))
        raw = con.execute("""SELECT raw FROM lines JOIN sources s USING (source_id)
                             WHERE s.name = ? AND line_no = 8""", [name]).fetchone()[0]
        assert "'api_key': ['***']" in raw and "'model': 'Qwen/Qwen2.5-7B-Instruct'" in raw
    finally:
        con.close()
