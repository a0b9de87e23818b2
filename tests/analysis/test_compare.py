"""`logsleuth compare`: the story numbers, config differences with SGLang/vLLM names mapped,
benchmark association by label, selectors, formats, and a golden file for the JSON."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from support.paths import GOLDEN as GOLDEN_DIR
from support.story import LABELS, SAMPLES, story_db, story_missing

GOLDEN = GOLDEN_DIR / "compare_story.json"

pytestmark = pytest.mark.skipif(bool(story_missing()), reason=f"story samples missing: {story_missing()}")


@pytest.fixture(scope="module")
def story_path(tmp_path_factory) -> str:
    return story_db(tmp_path_factory)


@pytest.fixture
def con(story_path):
    import logsleuth

    c = logsleuth.open_db(story_path, read_only=True)
    yield c
    c.close()


@pytest.fixture
def story(con):
    from logsleuth.analysis.compare import compare

    return compare(con, LABELS, findings=False)


def test_story_columns_and_bench_folded_by_label(story):
    names = [c.name for c in story.columns]
    # the baseline log holds a killed first launch and the served relaunch: both are runs
    assert [c.kind for c in story.columns] == ["server"] * len(names)
    assert "sglang_tuned_v1" in names and "vllm_kimi_k25" in names
    tuned = next(c for c in story.columns if c.name == "sglang_tuned_v1")
    vllm = next(c for c in story.columns if c.name == "vllm_kimi_k25")
    assert len(tuned.bench_run_ids) == 2 and len(vllm.bench_run_ids) == 2
    assert story.value("engine", "sglang_tuned_v1") == "sglang"
    assert story.value("engine", "vllm_kimi_k25") == "vllm"


def test_story_numbers(story):
    assert story.value("single_stream_tok_s", "sglang_tuned_v1") == pytest.approx(63.6, abs=0.3)
    assert story.value("single_stream_tok_s", "vllm_kimi_k25") == pytest.approx(82.5, abs=0.3)
    # the C=128 load lands in the 65-256 band of running requests
    assert story.value("gen_tok_s_65_256", "sglang_tuned_v1") == pytest.approx(2370, rel=0.01)
    assert story.value("gen_tok_s_65_256", "vllm_kimi_k25") == pytest.approx(1536, rel=0.01)
    assert "65-256" in story.bands
    assert story.value("peak_gen_tok_s", "sglang_tuned_v1") > story.value("gen_tok_s_65_256", "sglang_tuned_v1")
    # benchmark client numbers agree with the server's own
    assert story.value("bench_C1_output_tok_s", "sglang_tuned_v1") == pytest.approx(63.4, abs=0.5)
    assert story.value("bench_C128_output_tok_s", "sglang_tuned_v1") > story.value(
        "bench_C128_output_tok_s", "vllm_kimi_k25")
    assert story.value("bench_C128_median_ttft_ms", "vllm_kimi_k25") is not None
    assert story.value("kv_cache_tokens", "sglang_tuned_v1") > 0
    assert story.value("cuda_graph_coverage", "sglang_tuned_v1") == pytest.approx(1.0)


def test_story_config_differences(story):
    diff = {r.name: r for r in story.config}
    for name in ("attention_backend", "continuous_decode_steps", "custom_all_reduce_disabled"):
        assert name in diff, f"{name} should differ; got {sorted(diff)}"
    assert any(n.startswith("NCCL_") for n in diff), sorted(diff)
    assert story.config_value("attention_backend", "sglang_tuned_v1") == "flashinfer"
    assert story.config_value("continuous_decode_steps", "sglang_tuned_v1") == 4
    assert story.config_value("continuous_decode_steps", "vllm_kimi_k25") is None  # no such vLLM setting here
    assert story.config_value("custom_all_reduce_disabled", "sglang_tuned_v1") is True
    assert story.config_value("NCCL_ALGO", "sglang_tuned_v1") == "Ring"
    # the two engines' spellings share one row: gpu_memory_utilization is SGLang's mem_fraction_static
    mem = diff["memory_fraction"]
    idx = {c.name: i for i, c in enumerate(story.columns)}
    assert mem.keys[idx["sglang_tuned_v1"]] == "mem_fraction_static"
    assert mem.keys[idx["vllm_kimi_k25"]] == "gpu_memory_utilization"
    # identical settings and noise never show
    assert "tensor_parallel_size" not in diff and "random_seed" not in diff and "seed" not in diff


def _fake_db(path: str, configs: dict[int, tuple[str, list[tuple[str, str, str]]]]):
    import logsleuth

    con = logsleuth.open_db(path)
    for rid, (engine, rows) in configs.items():
        con.execute("INSERT INTO sources BY NAME SELECT ? AS source_id, ? AS name, 'server_log' AS kind, ? AS engine",
                    [rid, f"{engine}_{rid}.log", engine])
        con.execute("INSERT INTO runs BY NAME SELECT ? AS run_id, ? AS source_id, 1 AS ordinal, ? AS engine",
                    [rid, rid, engine])
        for i, (origin, key, value) in enumerate(rows):
            con.execute("INSERT INTO config BY NAME SELECT ? AS source_id, ? AS line_no, ? AS run_id, ? AS origin, "
                        "? AS key, ? AS value", [rid, i + 1, rid, origin, key, value])
    return con


def test_equivalent_settings_map_onto_one_row(tmp_path):
    from logsleuth.analysis.compare import compare

    con = _fake_db(str(tmp_path / "fake.duckdb"), {
        1: ("sglang", [("server_args", "tp_size", "8"), ("server_args", "disable_radix_cache", "True"),
                       ("server_args", "mem_fraction_static", "0.85"), ("server_args", "disable_cuda_graph", "False"),
                       ("server_args", "context_length", "None"), ("server_args", "random_seed", "1"),
                       ("env", "NCCL_ALGO", "Ring")]),
        2: ("vllm", [("cli_args", "tensor_parallel_size", "8"), ("engine_config", "enable_prefix_caching", "False"),
                     ("cli_args", "gpu_memory_utilization", "0.9"), ("cli_args", "enforce_eager", "True"),
                     ("engine_config", "tensor_parallel_size", "8"), ("cli_args", "max_model_len", "32768"),
                     ("engine_config", "seed", "0")]),
    })
    try:
        res = compare(con, findings=False)
    finally:
        con.close()
    diff = {r.name: r for r in res.config}
    assert "tensor_parallel_size" not in diff  # 8 == 8 across spellings
    assert "prefix_caching" not in diff  # disable_radix_cache=True is prefix caching off, like vLLM's False
    assert diff["memory_fraction"].values == [0.85, 0.9]
    assert diff["cuda_graph_disabled"].values == [False, True]
    assert diff["cuda_graph_disabled"].keys == ["disable_cuda_graph", "enforce_eager"]
    assert diff["NCCL_ALGO"].values == ["Ring", "unset"]
    # SGLang's context_length=None is the model default; vLLM set one explicitly: that differs
    assert diff["context_length"].values == [None, 32768]
    assert diff["context_length"].keys == ["context_length", "max_model_len"]
    from logsleuth.analysis.compare_format import config_cell

    assert [config_cell(diff["context_length"], i) for i in range(2)] == ["default", "32,768"]
    assert "random_seed" not in diff and "seed" not in diff


def test_equivalents_file_is_consistent():
    from logsleuth.analysis.compare import load_equivalents

    eq = load_equivalents()
    seen: dict[str, str] = {}
    for s in eq.settings:
        assert s.keys or s.inverted
        for k in s.keys + s.inverted:
            assert k not in seen, f"{k} is in both {seen[k]} and {s.name}"
            seen[k] = s.name
    assert {"tensor_parallel_size", "memory_fraction", "max_running_requests", "cuda_graph_disabled",
            "attention_backend", "context_length", "chunked_prefill_size", "kv_cache_dtype", "quantization",
            "speculative_method", "speculative_num_tokens", "speculative_draft_model", "custom_all_reduce_disabled",
            "continuous_decode_steps", "prefix_caching"} <= {s.name for s in eq.settings}
    assert "NCCL_" in eq.env_prefixes


def test_selectors(con):
    from logsleuth.analysis.compare import resolve_runs
    from logsleuth.errors import UsageError

    all_ids = resolve_runs(con)
    by_label = resolve_runs(con, ["sglang_tuned_v1"])
    assert len(by_label) == 3  # the server run and its two benchmark runs
    by_file = resolve_runs(con, ["sglang_tuned_v1.log"])
    assert resolve_runs(con, ["sglang_tuned_v1"]) == by_label
    assert resolve_runs(con, [str(SAMPLES / "sglang_tuned_v1.log")]) == by_file
    assert resolve_runs(con, [str(by_file[0])]) == by_file
    assert set(by_label) <= set(all_ids)
    with pytest.raises(UsageError):
        resolve_runs(con, ["no_such_run"])


def test_bench_without_matching_label_keeps_its_own_column(tmp_path):
    import logsleuth
    from logsleuth.analysis.compare import compare

    con = logsleuth.open_db(str(tmp_path / "b.duckdb"))
    try:
        logsleuth.ingest_files(con, [str(SAMPLES / "bench_sglang_tuned_v1_c1.txt")])
        res = compare(con, findings=False)
    finally:
        con.close()
    assert [c.kind for c in res.columns] == ["bench"]
    assert res.value("bench_C1_output_tok_s", res.columns[0].name) == pytest.approx(63.4, abs=0.5)
    assert res.config == []


def test_findings_absent_rules_module_is_tolerated(con, monkeypatch):
    from logsleuth.analysis.compare import compare

    monkeypatch.setitem(sys.modules, "logsleuth.analysis.rules", None)  # import now raises ImportError
    res = compare(con, ["sglang_tuned_v1"])
    assert not any(r.key.startswith("findings_") for r in res.rows)
    assert any("rules" in n for n in res.notes)


def test_findings_counted_when_rules_exist(con):
    pytest.importorskip("logsleuth.analysis.rules")
    from logsleuth.analysis.compare import compare

    res = compare(con, LABELS)
    total = sum(v for r in res.rows if r.key.startswith("findings_") for v in r.values)
    assert total == len([f for f in res.findings if f.run_id in {i for c in res.columns for i in c.run_ids}])


def test_startup_phases(con):
    from logsleuth.analysis.compare import compare, startup_phases

    res = compare(con, ["sglang_tuned_v1", "vllm_kimi_k25"], findings=False)
    tuned, vllm = (c.run_id for c in res.columns)
    tl = startup_phases(con, [tuned, vllm])
    phases = {p["phase"]: p for p in tl[tuned]["phases"]}
    assert list(phases) == ["init", "weights", "KV cache", "graph capture", "ready"]
    assert phases["weights"]["end_s"] - phases["weights"]["start_s"] == pytest.approx(450, abs=10)
    assert phases["graph capture"]["end_s"] - phases["graph capture"]["start_s"] == pytest.approx(97, abs=5)
    assert tl[tuned]["ready_s"] == pytest.approx(558, abs=2)
    assert "compile" in {p["phase"] for p in tl[vllm]["phases"]}
    assert res.value("time_to_ready_s", "vllm_kimi_k25") == pytest.approx(tl[vllm]["ready_s"], abs=0.1)

    from logsleuth.analysis.compare_format import timeline_text

    text = "\n".join(timeline_text(tl[tuned]))
    assert "graph capture" in text and "█" in text and "ready after 558 s" in text


def test_golden_json(story):
    from logsleuth.analysis.compare_format import compare_json

    text = compare_json(story)
    if os.environ.get("LOGSLEUTH_UPDATE_GOLDEN") == "1" or not GOLDEN.exists():
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(expected), (
        "compare JSON changed; if intended, regenerate with LOGSLEUTH_UPDATE_GOLDEN=1 pytest tests/test_compare.py")


def test_renderers(story):
    from logsleuth.analysis.compare_format import compare_csv, compare_markdown
    from logsleuth.cli.output import write_comparison
    import io

    md = compare_markdown(story)
    assert "## Configuration differences" in md and "| continuous decode steps |" in md
    assert "**2,369.4**" in md or "**2,370" in md  # best value of the band row in bold
    csv_text = compare_csv(story)
    assert csv_text.splitlines()[0].startswith("section,key,title,unit,")
    assert any(line.startswith("config,attention_backend,") for line in csv_text.splitlines())
    buf = io.StringIO()
    write_comparison(story, "table", buf)
    assert "configuration differences" in buf.getvalue() and "sglang_tuned_v1" in buf.getvalue()


def test_cli_compare_json(cli, story_path):
    res = cli("compare", *LABELS, "--format", "json", "--no-findings", db=story_path)  # the real console script
    assert res.returncode == 0, res.stderr.decode()
    data = json.loads(res.stdout)
    assert {r["name"] for r in data["runs"]} >= {"sglang_tuned_v1", "vllm_kimi_k25"}
    assert any(c["name"] == "attention_backend" for c in data["config_diff"])


def _main(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """The console script's entry point in-process (fast): exit code, stdout, stderr."""
    from logsleuth.cli import app as cli

    monkeypatch.setattr("sys.argv", ["logsleuth", *args])
    code = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_compare_errors_and_formats(story_path, monkeypatch, capsys):
    code, out, err = _main(monkeypatch, capsys, "--db", story_path, "compare", "--format", "xml")
    assert code == 2 and "--format" in err
    code, out, err = _main(monkeypatch, capsys, "--db", story_path, "compare", "no_such_run")
    assert code == 2 and err.startswith("Error: no run matches")
    code, out, err = _main(monkeypatch, capsys, "--db", story_path, "compare", *LABELS, "--format", "csv",
                           "--no-findings")
    assert code == 0 and out.startswith("section,key,title,unit,")
    code, out, err = _main(monkeypatch, capsys, "--db", story_path, "compare", "sglang_tuned_v1", "vllm_kimi_k25",
                           "--no-findings")
    assert code == 0 and "runs compared" in out and "configuration differences" in out


def test_cli_show_prints_startup_timeline(story_path, con, monkeypatch, capsys):
    rid = con.execute("SELECT run_id FROM runs WHERE label = 'sglang_tuned_v1' AND engine = 'sglang'").fetchall()[0][0]
    code, out, err = _main(monkeypatch, capsys, "--db", story_path, "show", str(rid))
    assert code == 0, err
    assert "startup timeline: ready after" in out and "graph capture" in out
