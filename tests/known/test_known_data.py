"""The known-issue data: shipped file valid and complete, DuckDB's regex engine agrees with Python's on every
signature, a user's folder extends or replaces entries, broken files fail with one line naming them, and
the `known-issues` listing and its filters."""
from __future__ import annotations

import json

import duckdb
import pytest

from logsleuth.analysis.known_issues import load_known_issues, parse_file, select, version_key
from logsleuth.errors import GrammarError
from logsleuth.resources import data_path

ISSUES = load_known_issues([])


def test_shipped_file_holds_every_entry_once():
    ids = [i.id for i in ISSUES]
    assert len(ids) == len(set(ids)) == 83
    listed_only = [i for i in ISSUES if not i.matchable]
    assert all(i.signature.get("why_not") for i in listed_only)
    assert len(listed_only) == 11


def test_fixed_in_only_where_a_release_is_named():
    """Nine entries name a fix release (one of them a dependency's); every other fix is a PR to check."""
    named = {i.id: i.upstream["fixed_in"] for i in ISSUES if i.upstream.get("fixed_in")}
    assert len(named) == 9
    for i in ISSUES:
        status = i.fix_status()
        if i.upstream.get("fixed_in"):
            assert status.startswith("fixed in "), status
        else:
            assert "fixed in" not in status, (i.id, status)
            if i.upstream["status"] == "fixed" and i.upstream["prs"]:
                assert "check whether your build contains it" in status


@pytest.mark.parametrize("issue", [i for i in ISSUES if i.matchable], ids=lambda i: i.id)
def test_duckdb_regex_engine_agrees_on_the_samples(issue):
    """The data's regexes are checked in Python on load; DuckDB (RE2) runs them: same verdict."""
    con = duckdb.connect()
    sig = issue.signature
    for key, sample in (("regex", "sample"), ("also", "also_sample")):
        if sig.get(key):
            assert con.execute("SELECT regexp_matches($s, $r)", {"s": sig[sample], "r": sig[key]}).fetchone()[0]


def test_version_key_reads_releases_and_posts():
    assert version_key("0.5.10.post1") > version_key("0.5.10") > version_key("0.5.9")
    assert version_key("v0.11.0") == [0, 11, 0]
    assert version_key("0.26.1rc1.dev3+gabc") == [0, 26, 1]


def _user_file(tmp_path, body: str):
    d = tmp_path / "known"
    d.mkdir(exist_ok=True)
    (d / "fleet.toml").write_text(body, encoding="utf-8")
    return d


USER_ENTRY = """
version = 1
[[issue]]
id = "fleet-nic-flap"
engine = "vllm"
category = "multi_gpu"
severity = "warning"
title = "Our fleet: the RDMA NIC flaps on rack 7"
confidence = "medium"
workaround = "Drain the host and file a ticket with the network team."
[issue.signature]
text = "NIC link down"
phase = "runtime"
regex = 'NIC link (down|flap)'
specific = true
sample = "WARNING 06-01 10:00:00 [net.py:1] NIC link down on mlx5_3"
[issue.when]
min_tp = 2
[issue.upstream]
issues = ["https://tracker.example/NET-1234"]
prs = []
status = "open"
"""


def test_a_user_folder_adds_entries_without_python(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    d = _user_file(tmp_path, USER_ENTRY)
    issues = load_known_issues([str(d)])
    assert len(issues) == 84 and issues[-1].id == "fleet-nic-flap"
    assert issues[-1].upstream_refs()[0]["label"] == "https://tracker.example/NET-1234"


def test_the_xdg_folder_is_read_and_replaces_a_shipped_id(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    folder = tmp_path / "cfg" / "logsleuth" / "known_issues"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(USER_ENTRY.replace('"fleet-nic-flap"', '"vllm-custom-ar-no-p2p"'), encoding="utf-8")
    issues = {i.id: i for i in load_known_issues([])}
    assert len(issues) == 83 and issues["vllm-custom-ar-no-p2p"].title.startswith("Our fleet")


@pytest.mark.parametrize("change, message", [
    (("sample = \"WARNING 06-01 10:00:00 [net.py:1] NIC link down on mlx5_3\"", "sample = \"nothing here\""),
     "does not match its sample"),
    (("regex = 'NIC link (down|flap)'", "regex = 'NIC link (down'"), "does not compile"),
    (('severity = "warning"', 'severity = "loud"'), "severity"),
    (('status = "open"', 'status = "open"\nfixed_in = "soon"'), "fixed_in"),
    (("[issue.when]", "[issue.when]\nrack = 7"), "rack"),
])
def test_a_broken_user_file_is_one_error_naming_it(tmp_path, change, message):
    d = _user_file(tmp_path, USER_ENTRY.replace(*change))
    with pytest.raises(GrammarError) as err:
        parse_file(d / "fleet.toml")
    assert "fleet.toml" in str(err.value) and message in str(err.value)


def test_select_filters():
    sm120_sgl = select(ISSUES, engine="sglang", gpu="SM120", version="0.5.9")
    ids = {i.id for i in sm120_sgl}
    assert "sgl-trtllm-mha-sm100-only" in ids and "sgl-fa3-on-blackwell" not in ids
    assert all("sglang" in i.engines for i in sm120_sgl)
    assert "vllm-v082-duplicate-request-id-crash" in {i.id for i in select(ISSUES, version="0.8.1")}
    assert "vllm-v082-duplicate-request-id-crash" not in {i.id for i in select(ISSUES, version="0.8.2")}
    assert {i.category for i in select(ISSUES, category="rocm")} == {"rocm"}
    assert "aiter-vskip-dsr1-mi300x" in {i.id for i in select(ISSUES, gpu="amd")}


def test_known_issues_command():
    from support.cli import run_in_process

    code, out, _ = run_in_process("known-issues", "--engine", "sglang", "--gpu", "SM120", "--version", "0.5.9",
                                  "--format", "json", db=None)
    rows = json.loads(out)
    assert code == 0 and rows and all(r["engine"] in ("sglang", "both") for r in rows)
    assert {"id", "upstream", "status", "workaround", "urls"} <= set(rows[0])
    code, out, _ = run_in_process("known-issues", "--category", "hang", "--format", "csv", db=None)
    assert code == 0 and out.splitlines()[0].startswith("id,engine,category") and len(out.splitlines()) > 1
    code, _, err = run_in_process("known-issues", "--version", "banana", db=None)
    assert code == 2 and "--version banana" in err and "Traceback" not in err


def test_schema_ships_beside_the_data():
    schema = json.loads(data_path("parsers/known_issues.schema.json").read_text())
    assert schema["$defs"]["issue"]["required"][:3] == ["id", "engine", "category"]
