"""Speculative decoding in one vocabulary for every engine.

Contract: ``spec_config(cfg, engine)`` reads a run's configuration and returns
``spec_method`` (canonical name, see queries/derive/spec_methods.toml), ``spec_kind``
(``chain``: k drafts every verify step; ``ceiling``: k is a maximum), ``num_spec_tokens``
(k: draft tokens per verify step = vLLM ``num_speculative_tokens`` = SGLang
``speculative_num_steps``, i.e. SGLang ``speculative_num_draft_tokens`` - 1 for topk 1) and
``spec_draft_model``. ``normalise_specs`` writes the runs' ``spec_stats`` rows in that
vocabulary: ``accept_len`` = mean tokens per verify step including the bonus token,
``draft_accept_rate`` = per-token draft acceptance ((accept_len - 1) / k for chains), and
``definition`` saying how the engine's printed numbers were converted (queries/derive/spec_*.sql).
"""
from __future__ import annotations

from .sql import data, run_set


def canonical_method(name) -> str | None:
    """The canonical method name for an engine spelling (``EAGLE3`` -> ``eagle3``)."""
    if name is None:
        return None
    s = str(name).strip().strip("'\"")
    if s.lower() in ("", "none", "null"):
        return None
    low = s.lower()
    table = data("spec_methods")
    if low in table["aliases"]:
        return table["aliases"][low]
    for suffix, canon in table.get("suffix_aliases", {}).items():
        if low.endswith(suffix):
            return canon
    return low


def method_kind(method: str | None) -> str | None:
    if method is None:
        return None
    kinds = data("spec_methods")["kinds"]
    if method in kinds.get("ceiling", []):
        return "ceiling"
    return "chain"  # chain is the default: a method we do not know drafts and verifies a fixed k


def _int(v):
    try:
        return int(float(v)) if v not in (None, "", "None") else None
    except (TypeError, ValueError):
        return None


def spec_config(cfg: dict, engine: str) -> dict:
    g = cfg.get
    if engine == "sglang":
        method = canonical_method(g("speculative_algorithm"))
        steps = _int(g("speculative_num_steps"))
        draft_tokens = _int(g("speculative_num_draft_tokens"))
        topk = _int(g("speculative_eagle_topk"))
        # k = the chain depth; SGLang's draft-token count includes the root token it verifies
        # (steps + 1 for topk 1, a tree of more nodes for topk > 1)
        if steps is None and draft_tokens is not None and (topk in (None, 1) or method_kind(method) == "ceiling"):
            steps = draft_tokens - 1
        k = steps
        model = g("speculative_draft_model_path")
    else:
        raw = g("speculative_config.method") or g("cli_args:speculative_config.method") or g("speculative_method")
        model = g("speculative_config.model") or g("speculative_config.draft_model") or g("speculative_model")
        k = _int(g("speculative_config.num_speculative_tokens") or g("speculative_config.num_spec_tokens")
                 or g("num_speculative_tokens"))
        if model in ("[ngram]", "'[ngram]'") and not raw:
            raw = "ngram"
        if not raw and model not in (None, "None"):
            raw = "draft_model"
        method = canonical_method(raw)
    if method is None:
        return {"spec_method": None, "spec_kind": None, "num_spec_tokens": None, "spec_draft_model": None}
    return {"spec_method": method, "spec_kind": method_kind(method), "num_spec_tokens": k if k and k > 0 else None,
            "spec_draft_model": model if model not in (None, "None", "[ngram]") else None}


def normalise_specs(con, rows: dict[int, dict]) -> None:
    """Write the spec_stats rows of the runs ``rows`` (run id -> runs row with ``engine``,
    ``num_spec_tokens``, ``spec_kind`` and ``engine_version``): one statement per engine."""
    import polars as pl

    def params(ids, **extra):
        return pl.DataFrame({"run_id": ids, "k": [rows[r].get("num_spec_tokens") for r in ids],
                             "kind": [rows[r].get("spec_kind") or "chain" for r in ids], **extra},
                            schema={"run_id": pl.Int64, "k": pl.Int64, "kind": pl.Utf8,
                                    **{k: pl.Boolean for k in extra}})

    sglang = [rid for rid, r in rows.items() if r["engine"] == "sglang"]
    others = [rid for rid, r in rows.items() if r["engine"] != "sglang"]
    if sglang:
        run_set(con, "spec_sglang", runs=sglang, frames={"derive_spec": params(sglang)})
    if others:
        no_bonus = [(rows[r].get("engine_version") or "").startswith("0.8.5") for r in others]
        run_set(con, "spec_vllm", runs=others, frames={"derive_spec": params(others, no_bonus=no_bonus)})
