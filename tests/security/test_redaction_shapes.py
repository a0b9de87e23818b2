"""Token shapes by property: a secret of every known shape glued to its neighbours by `-`, `_`,
`.` or `/` (`key/AKIA...`, `aws_secret=...`, `x_hf_...`, a 40-character AWS secret key after a
slash) is masked; ordinary log tokens (sha256 and git hashes, model paths, Hugging Face snapshot
paths, request ids, UUIDs) are not; the real corpus changes only on the lines listed below; and
the Python path (``redact_text``: file names, messages) masks exactly as the frame path.

Example counts: adjacency 60 examples of 20 lines (1,200 secrets); ordinary tokens 60 examples
of 20 lines; Python-vs-frame 60 examples of 20 lines.
"""
from __future__ import annotations

import string

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import polars as pl  # noqa: E402

from logsleuth.ingest.redact import RedactState, redact, redact_frame, redact_text  # noqa: E402
from support.paths import CORPUS, corpus_files, sample_files  # noqa: E402

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

_spec = importlib.util.spec_from_file_location("_redaction_property", Path(__file__).with_name("test_redaction_property.py"))
_prop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_prop)
SHAPED, AWS_SECRET, CONTAINERS = _prop.SHAPED, _prop.AWS_SECRET, _prop.CONTAINERS

EXAMPLES = 60
BATCH = 20
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"

SEP = st.sampled_from(["-", "_", ".", "/"])
WORD = st.text(alphabet=ALNUM, min_size=1, max_size=8)
# what stands before a glued secret: a word and a separator (`key/`, `aws_`, `bucket.`), a
# key that names it (`aws_secret=`), a URL path, or nothing
BEFORE = st.one_of(st.just(""), st.builds(lambda w, s: w + s, WORD, SEP),
                   st.sampled_from(["aws_secret=", "key/", "s3://bucket/", "AWS_", "x-", "prefix.", "_"]))
AFTER = st.one_of(st.just(""), st.builds(lambda s, w: s + w, SEP, WORD), st.sampled_from([".", "/", "_", "-", "/obj.json"]))


def _frame_redact(lines: list[str], keep_prompts: bool = True) -> list[str]:
    frame = pl.DataFrame({"raw": lines})
    return redact_frame(frame, "raw", keep_prompts, RedactState())["raw"].to_list()


@settings(max_examples=EXAMPLES)
@given(st.lists(st.tuples(BEFORE, st.one_of(SHAPED, AWS_SECRET), AFTER), min_size=BATCH, max_size=BATCH))
def test_secrets_glued_by_separators_are_masked(cases):
    lines = [f"uploading with {b}{s}{a} done" for b, s, a in cases]
    for (b, s, a), masked, one in zip(cases, _frame_redact(lines), [redact_text(x, True) for x in lines]):
        assert s not in masked, (b, s, a, masked)
        assert s not in one, (b, s, a, one)


# --- ordinary tokens stay as they are -------------------------------------------------------

def _hex(n):
    return st.text(alphabet=HEX, min_size=n, max_size=n)


MODEL_ORG = st.sampled_from(["Qwen", "meta-llama", "deepseek-ai", "mistralai", "nvidia", "google", "moonshotai"])
MODEL_NAME = st.builds(lambda fam, ver, size, tail: f"{fam}{ver}-{size}B{tail}",
                       st.sampled_from(["Qwen", "Llama-", "DeepSeek-V", "Mistral-", "gemma-", "Kimi-K"]),
                       st.sampled_from(["2.5", "3", "3.1", "3.3", "7"]), st.integers(1, 700),
                       st.sampled_from(["", "-Instruct", "-Chat", "-AWQ", "-FP8", "-Instruct-2507"]))
ORDINARY = st.one_of(
    _hex(64).map(lambda h: f"sha256:{h}"),
    _hex(40).map(lambda h: f"commit {h}"),
    _hex(32).map(lambda h: f"Received request chatcmpl-{h}: params"),
    _hex(32).map(lambda h: f"cmpl-{h}-0"),
    st.uuids().map(lambda u: f"request_id={u}"),
    st.tuples(MODEL_ORG, MODEL_NAME).map(lambda t: f"model='{t[0]}/{t[1]}'"),
    st.tuples(MODEL_ORG, MODEL_NAME, _hex(40)).map(
        lambda t: f"~/.cache/huggingface/hub/models--{t[0]}--{t[1]}/snapshots/{t[2]}/config.json"),
    st.tuples(MODEL_ORG, MODEL_NAME).map(lambda t: f"--model-path /data/models/{t[0]}/{t[1]}/ --port 30000"),
    st.sampled_from(["File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 701",
                     "/opt/conda/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py",
                     "Qwen3MoeForCausalLM/LlamaForCausalLM/DeepseekV3ForCausalLM",
                     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp"]),
)


@settings(max_examples=EXAMPLES)
@given(st.lists(ORDINARY, min_size=BATCH, max_size=BATCH))
def test_ordinary_tokens_are_not_masked(lines):
    assert _frame_redact(lines) == lines
    assert [redact_text(x, True) for x in lines] == lines


# --- the real corpus ------------------------------------------------------------------------

#: the corpus lines redaction changes (file, a fragment of the line) and why: anything else
#: changing is a false positive to inspect
EXPECTED_CORPUS_CHANGES = {
    ("vllm__amdgoose__arno_vllm_chat__vllm_server.log", "'api_key': ['token-abc123']"),  # a real API key
    # a sed command editing HF_TOKEN="...": the key rule takes the quoted text for its value
    ("vllm__parallelworks__activate-rag-vllm__run.debug-00074.out", "HF_TOKEN=\"\\)[^\"]*"),
}


def test_corpus_lines_without_secrets_stay():
    files = corpus_files()
    if not files:
        pytest.skip(f"real corpus not available ({CORPUS})")
    names, lines = [], []
    for f in files:
        for line in f.read_text("utf-8", "replace").splitlines():
            names.append(f.name)
            lines.append(line)
    out = _frame_redact(lines)
    changed = {(n, a) for n, a, b in zip(names, lines, out) if a != b}
    matched = {(n, frag) for n, frag in EXPECTED_CORPUS_CHANGES for cn, line in changed if cn == n and frag in line}
    assert matched == EXPECTED_CORPUS_CHANGES, changed
    assert len(changed) == len(EXPECTED_CORPUS_CHANGES), sorted(changed)
    # the samples the tests ingest hold no secret either
    for f in sample_files():
        text = f.read_text("utf-8", "replace").splitlines()
        assert _frame_redact(text) == text, f.name


# --- one policy, two compilers --------------------------------------------------------------

@settings(max_examples=EXAMPLES)
@given(st.lists(st.one_of(*CONTAINERS.values(), ORDINARY.map(lambda x: (x, ""))), min_size=BATCH, max_size=BATCH),
       st.booleans())
def test_python_path_masks_like_the_frame_path(cases, keep_prompts):
    lines = [line for line, _ in cases]
    frame = pl.select(redact(pl.lit(pl.Series(lines, dtype=pl.Utf8)), keep_prompts)).to_series().to_list()
    assert [redact_text(x, keep_prompts) for x in lines] == frame
