"""Tests for logsleuth.derive.drain: masking, Drain clustering, alignment, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logsleuth.derive import drain as T
from logsleuth.derive.drain import WILDCARD, mask_messages, mine_templates

from support.paths import CORPUS  # noqa: E402  (the corpus beside the checkout)

REAL_LOG = CORPUS / "sglang__udbhav-ag__SGLang_setup__sglang.log"


def mask1(text: str) -> str:
    return mask_messages(pl.Series([text]))[0]


def mine(lines: list[str | None]) -> tuple[pl.Series, pl.DataFrame]:
    return mine_templates(pl.Series("m", lines, dtype=pl.Utf8))


def template_of(lines: list[str | None]) -> list[str | None]:
    """Template string per input line."""
    idx, tpl = mine(lines)
    by_index = dict(zip(tpl["template_index"].to_list(), tpl["template"].to_list()))
    return [None if i is None else by_index[i] for i in idx.to_list()]


# --------------------------------------------------------------------------------------------
# Masking
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "masked"),
    [
        # ANSI escapes
        ("\x1b[32mINFO\x1b[0m server ready", "INFO server ready"),
        ("\x1b]0;title\x07done", "done"),
        # timestamps and dates
        ("[2026-02-09 14:38:13] Init torch distributed begin.", "[<TS>] Init torch distributed begin."),
        ("at 2024-01-02T03:04:05.123+00:00 ok", "at <TS> ok"),
        ("INFO 01-15 10:23:45 [core.py:12] hi", "INFO <TS> [core.py:<NUM>] hi"),
        ("I0209 14:38:38.388363 24482 client.cpp:80] up", "I<TS> <NUM> client.cpp:<NUM>] up"),
        ("ERROR: [11-20-2025 14:01:02] boom", "ERROR: [<TS>] boom"),
        ("Feb  9 14:38:13 host x", "<TS> host x"),
        ("day 2026/02/09 only", "day <TS> only"),
        # UUIDs and hex ids
        ("req 123e4567-e89b-12d3-a456-426614174000 done", "req <UUID> done"),
        ("TreeNode object at 0x73fe2a1ca910>", "TreeNode object at <HEX>>"),
        ("rid='8fe07d727051441bb48b84b89060a797'", "rid='<HEX>'"),
        ("hash a7d933a1 short cafe", "hash <HEX> short cafe"),
        ("lock 127535465894480 taken", "lock <NUM> taken"),  # pure digits: a number
        ("validation_time=3.189000017300714e-05,", "validation_time=<NUM>,"),
        # IPv4 (+port)
        ("listening on 172.31.36.232:16766 now", "listening on <IP> now"),
        ("peer 10.0.0.1 up", "peer <IP> up"),
        # paths with line numbers
        ("warn /usr/lib/python3.11/site-packages/x/y.py:123: DeprecationWarning", "warn <PATH>:<NUM>: DeprecationWarning"),
        ("at sglang/srt/managers/scheduler.py:9 in run", "at <PATH>:<NUM> in run"),
        ('  File "/usr/lib/python3.11/x.py", line 123, in foo', 'File "<PATH>", line <NUM>, in foo'),
        ("url https://huggingface.co:443 ok", "url https://huggingface.co:<NUM> ok"),
        # quoted strings longer than 30 chars; short ones stay
        ("text='The capital city of France is', mode='auto'", "text='The capital city of France is', mode='auto'"),
        ("z='a long string that has more than thirty chars', y='{}'", "z='<STR>', y='{}'"),
        ('req "GET /api/models/meta-llama/Llama-3.2-3B/tree/main HTTP/1.1" 404', 'req "<STR>" <NUM>'),
        # numbers with units kept literally
        ("avail mem=44.11 GB, 12GiB, 1.57s, 300ms, 10.8it/s, 45%", "avail mem=<NUM> GB, <NUM>GiB, <NUM>s, <NUM>ms, <NUM>it/s, <NUM>%"),
        ("Capture cuda graph bs [1, 2, 4, 8, 12]", "Capture cuda graph bs [<NUMS>]"),
        ("GPU KV cache size: 1,234,567 tokens", "GPU KV cache size: <NUM> tokens"),
        ("size=-1 dtype=bf16", "size=-<NUM> dtype=bf16"),
        # tqdm progress bars: one <BAR> token
        ("Loading:  45%|█████▏     | 12/52 [00:01<00:03, 10.8it/s]", "Loading: <BAR>"),
        ("  0%|          | 0/8 [00:00<?, ?it/s]", "<BAR>"),
        (
            "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:03<00:03,  3.11s/it]",
            "Loading safetensors checkpoint shards: <BAR>",
        ),
        ("weights 12it [00:01, 9.50it/s]", "weights <BAR>"),
        # whitespace
        ("  a   b\t\tc \r ", "a b c"),
        ("", ""),
    ],
)
def test_mask_examples(raw: str, masked: str) -> None:
    assert mask1(raw) == masked


def test_mask_truncates_and_keeps_nulls_and_name() -> None:
    out = mask_messages(pl.Series("msg", ["x" * 2000, None, "ok"]))
    assert out.name == "msg"
    assert out.dtype == pl.Utf8
    assert len(out[0]) == T.MAX_MASKED_CHARS
    assert out[1] is None
    assert out[2] == "ok"


def test_mask_empty_and_null_dtype() -> None:
    assert mask_messages(pl.Series([], dtype=pl.Utf8)).len() == 0
    assert mask_messages(pl.Series([None, None])).to_list() == [None, None]


# --------------------------------------------------------------------------------------------
# Clustering
# --------------------------------------------------------------------------------------------


def test_lines_differing_only_in_numbers_share_a_template() -> None:
    lines = [
        f"[2026-02-09 14:45:{i:02d}] Decode batch, #running-req: {i}, #token: {1000 + 37 * i}, "
        f"token usage: 0.{i:02d}, gen throughput (token/s): {70 + i / 7:.2f}, #queue-req: {i % 3},"
        for i in range(40)
    ]
    idx, tpl = mine(lines)
    assert idx.n_unique() == 1
    assert tpl.height == 1
    assert tpl["n_lines"][0] == 40
    assert tpl["template"][0] == (
        "[<TS>] Decode batch, #running-req: <NUM>, #token: <NUM>, token usage: <NUM>, "
        "gen throughput (token/s): <NUM>, #queue-req: <NUM>,"
    )


def test_different_messages_do_not_merge() -> None:
    lines = [
        "Starting server on port 8000",
        "Loading model weights from disk",
        "KV cache allocated with 1234 blocks",
        "Request aborted by client after timeout",
        "CUDA out of memory. Tried to allocate 2.00 GiB",
    ] * 3
    idx, tpl = mine(lines)
    assert tpl.height == 5
    assert all(WILDCARD not in t for t in tpl["template"].to_list())
    assert idx.to_list()[:5] != [idx[0]] * 5


def test_similar_messages_merge_with_wildcard() -> None:
    lines = [
        "[2026-02-09 14:38:21] Lock 127535465894480 acquired on ./models/a.lock",
        "[2026-02-09 14:38:21] Lock 127535465894480 released on ./models/a.lock",
        "[2026-02-09 14:38:22] Lock 127535479510352 acquired on /tmp/cascade.lock",
    ]
    assert set(template_of(lines)) == {"[<TS>] Lock <NUM> <*> on <*>"}


def test_shared_header_does_not_pull_unrelated_messages_together() -> None:
    # The vLLM header makes 4 of 8 tokens equal; equal placeholders must not count.
    lines = [
        "(APIServer pid=123) INFO 01-15 10:23:45 [api_server.py:88] Supported_tasks: ['encode', 'embed']",
        "(APIServer pid=123) INFO 01-15 10:23:45 [launcher.py:29] Available routes are:",
        "(APIServer pid=123) INFO 01-15 10:23:46 [model.py:547] Resolved architecture: Qwen3VLForConditionalGeneration",
    ]
    assert len(set(template_of(lines))) == 3


def test_placeholder_only_lines_are_not_a_catch_all() -> None:
    lines = [
        '[2026-02-09 14:38:13] https://huggingface.co:443 "HEAD /meta-llama/resolve/main/config.json HTTP/1.1" 200 0',
        "Loading safetensors checkpoint shards: 100% Completed | 2/2 [00:06<00:00,  3.49s/it]",
        "[2026-02-09 14:38:44] INFO:     Application startup complete.",
        "Recieved Tokens to Fetch 24316",
    ]
    assert all(WILDCARD not in t for t in template_of(lines))


def test_alignment_with_nulls() -> None:
    lines = [None, "alpha 1", None, "alpha 2", "beta gamma", None]
    idx, tpl = mine(lines)
    assert idx.dtype == pl.UInt32
    assert idx.name == "template_index"
    assert idx.len() == len(lines)
    assert idx.is_null().to_list() == [line is None for line in lines]
    assert idx[1] == idx[3] != idx[4]
    assert tpl["n_lines"].sum() == 3
    row = tpl.filter(pl.col("template") == "alpha <NUM>").row(0, named=True)
    assert row["n_lines"] == 2 and row["example_row"] == 1


def test_empty_input() -> None:
    idx, tpl = mine_templates(pl.Series("m", [], dtype=pl.Utf8))
    assert idx.len() == 0 and idx.dtype == pl.UInt32
    assert tpl.height == 0
    assert tpl.schema == pl.Schema(
        {"template_index": pl.UInt32, "template": pl.Utf8, "n_lines": pl.UInt32, "example_row": pl.UInt32}
    )


def test_all_null_and_null_dtype_input() -> None:
    idx, tpl = mine_templates(pl.Series([None, None]))
    assert idx.to_list() == [None, None] and idx.dtype == pl.UInt32
    assert tpl.height == 0


def test_templates_frame_shape_and_order() -> None:
    lines = ["b x 1"] * 2 + ["a y 2"] * 5 + ["c z"] * 2 + ["d w q"]
    idx, tpl = mine(lines)
    assert tpl.schema == pl.Schema(
        {"template_index": pl.UInt32, "template": pl.Utf8, "n_lines": pl.UInt32, "example_row": pl.UInt32}
    )
    assert tpl["template_index"].to_list() == list(range(tpl.height))
    # n_lines desc, ties by template asc
    assert tpl.select("n_lines", "template").rows() == [
        (5, "a y <NUM>"),
        (2, "b x <NUM>"),
        (2, "c z"),
        (1, "d w q"),
    ]
    assert tpl["example_row"].to_list() == [2, 0, 7, 9]


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------


def _corpus(seed: int) -> list[str]:
    r = random.Random(seed)
    shapes = [
        "[2026-02-09 14:45:{s:02d}] Prefill batch, #new-seq: {a}, #new-token: {b}, #cached-token: {a}",
        "[2026-02-09 14:45:{s:02d}] Attempting to acquire lock {b} on /tmp/{w}.lock",
        "[2026-02-09 14:45:{s:02d}] Attempting to release lock {b} on /tmp/{w}.lock",
        "Sending prefetch operation {h} with {a} tokens.",
        "Node: <sglang.srt.mem_cache.radix_cache.TreeNode object at 0x{h}>",
        "{w} worker {w} started",
        "{w} worker {w} stopped after {a} s",
    ]
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    out = []
    for _ in range(400):
        shape = r.choice(shapes)
        out.append(
            shape.format(s=r.randrange(60), a=r.randrange(100), b=r.randrange(10**6), w=r.choice(words), h="%012x" % r.getrandbits(48))
        )
    return out


def test_same_result_twice() -> None:
    lines = _corpus(1)
    a_idx, a_tpl = mine(lines)
    b_idx, b_tpl = mine(lines)
    assert a_idx.equals(b_idx)
    assert a_tpl.equals(b_tpl)


def test_template_set_independent_of_input_order() -> None:
    lines = _corpus(2)
    shuffled = lines[:]
    random.Random(3).shuffle(shuffled)
    _, a = mine(lines)
    _, b = mine(shuffled)
    cols = ["template_index", "template", "n_lines"]
    assert a.select(cols).equals(b.select(cols))
    # and each line keeps its template
    per_line_a = dict(zip(lines, template_of(lines)))
    per_line_b = dict(zip(shuffled, template_of(shuffled)))
    assert per_line_a == per_line_b


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

_line = st.one_of(
    st.none(),
    st.text(max_size=60),
    st.builds(
        " ".join,
        st.lists(
            st.sampled_from(["load", "lock", "on", "12", "0x1f", "3.5GB", "'quoted'", "<*>", "[x]", "a7d933a1375c", ""]),
            max_size=8,
        ),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=40))
def test_property_every_row_gets_one_template(lines: list[str | None]) -> None:
    idx, tpl = mine(lines)
    n_non_null = sum(line is not None for line in lines)
    assert idx.len() == len(lines)
    assert idx.dtype == pl.UInt32
    assert idx.is_null().to_list() == [line is None for line in lines]
    assert int(tpl["n_lines"].sum() or 0) == n_non_null
    assert tpl["template_index"].to_list() == list(range(tpl.height))
    assert tpl["template"].n_unique() == tpl.height
    n_lines = tpl["n_lines"].to_list()
    assert n_lines == sorted(n_lines, reverse=True)
    counts = idx.drop_nulls().value_counts()
    assert dict(counts.rows()) == dict(zip(tpl["template_index"].to_list(), n_lines))
    ids = idx.to_list()
    for t_index, example in zip(tpl["template_index"].to_list(), tpl["example_row"].to_list()):
        assert ids[example] == t_index
        assert ids.index(t_index) == example  # first row of that template


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab 1\t", max_size=12), min_size=1, max_size=30))
def test_property_template_covers_its_lines(lines: list[str]) -> None:
    # Every masked line equals its template except at wildcard positions.
    masked = mask_messages(pl.Series(lines)).to_list()
    for m, t in zip(masked, template_of(lines)):
        mt, tt = m.split(), t.split()
        assert len(mt) == len(tt)
        assert all(b == WILDCARD or a == b for a, b in zip(mt, tt))


def test_max_clusters_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "MAX_CLUSTERS", 2)
    lines = ["alpha beta", "gamma delta", "epsilon zeta", "eta theta", "alpha beta"]
    idx, tpl = mine(lines)
    assert tpl.height == 4
    assert set(tpl["template"].to_list()) == {"alpha beta", "gamma delta", "epsilon zeta", "eta theta"}
    # past the cap, strings still join existing clusters
    lines2 = ["alpha beta one", "gamma delta two", "alpha beta three", "x y z"]
    _, tpl2 = mine(lines2)
    assert "alpha beta <*>" in tpl2["template"].to_list()
    assert tpl2["n_lines"].sum() == 4


# --------------------------------------------------------------------------------------------
# Real data and scale
# --------------------------------------------------------------------------------------------


@pytest.mark.skipif(not REAL_LOG.exists(), reason="real corpus not available")
def test_real_log_collapses() -> None:
    lines = REAL_LOG.read_bytes().decode("utf-8", "replace").split("\n")
    idx, tpl = mine_templates(pl.Series("m", lines))
    assert idx.null_count() == 0
    assert tpl["n_lines"].sum() == len(lines)
    # Measured: 182 lines -> 100 templates (0.55). Most lines of this short startup log are
    # one-off messages; the repeated ones (locks, HTTP HEADs, progress bars, decode stats,
    # radix-cache dumps) collapse.
    assert tpl.height <= 0.65 * len(lines)
    templates = tpl["template"].to_list()
    assert "[<TS>] Lock <NUM> <*> on <*>" in templates
    assert "Loading safetensors checkpoint shards: <BAR>" in templates
    assert "[<TS>] https://huggingface.co:<NUM> \"<STR>\" <NUM> <NUM>" in templates
    decode = [t for t in templates if "Decode batch" in t]
    assert len(decode) == 1
    assert all(not t.startswith("<*> <*>") for t in templates)


def test_200k_synthetic_lines_run() -> None:
    n = 200_000
    shapes = [
        "[2026-02-09 14:45:{s:02d}] Decode batch, #running-req: {a}, #token: {b}, token usage: 0.{a}, "
        "cuda graph: True, gen throughput (token/s): {a}.{s}, #queue-req: {s},",
        "[2026-02-09 14:45:{s:02d}] Attempting to acquire lock {b} on ~/.cache/x/{s}/tmp.lock",
        "[2026-02-09 14:45:{s:02d}] INFO:     10.0.0.{a}:{b} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
        "Capturing batches (bs={a} avail_mem={s}.{a} GB):  {s}%|█▎        | {a}/52 [00:0{s}<00:04,  1.{a}it/s]",
        "Prefetch {h} completed with {a} tokens",
    ]
    r = random.Random(0)
    lines = []
    for i in range(n):
        line = shapes[i % len(shapes)].format(s=i % 60, a=i % 97, b=(i * 7919) % 10**7, h="%032x" % r.getrandbits(128))
        if i % 100 == 0:  # ~1% of lines carry an unmaskable unique word
            line += " odd" + "".join(r.choice("qwrtyupsdfgjklzxvnm") for _ in range(6))
        lines.append(line)
    idx, tpl = mine_templates(pl.Series("m", lines))
    assert idx.len() == n and idx.null_count() == 0
    assert tpl["n_lines"].sum() == n
    assert tpl.height < 50
