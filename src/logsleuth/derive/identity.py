"""Who a run is, derived the same way for every engine.

Contract:
* ``model_identity(cfg, engine, banner_model)`` -> ``model`` (the weights: hub id or path as
  launched), ``served_model_name`` (the API alias, if any) and ``model_key``: the canonical key
  cross-run rules match on, the hub id's or path's last component (an HF cache path
  ``models--org--name/snapshots/<hash>`` gives ``name``), lower-cased, with quantisation
  suffixes (``-int4``, ``-awq``, ``-fp8``, ``-nvfp4``, ``-gptq-int4``, ...) removed; the
  quantisation itself stays in ``runs.quantization`` and is reported as a difference.
* ``printed_version(con, source_id, run_id, engine)``: the exact version the log prints
  (pip output, pins, image tags), which beats the era range inferred from line shapes.
* ``parallel_from_ranks(con, run_id)``: TP/DP sizes from rank tags when no configuration was logged.
* ``renumber_runs(con, source_id, run_ids, tables)``: provisional run ids -> consecutive ids
  after the highest stored one, so a fresh database numbers its runs 1, 2, 3 without gaps.
"""
from __future__ import annotations

import re

from ..db.connection import fetch_one
from .sql import sql

# quantisation / packaging suffixes of checkpoint names (Hugging Face naming habits)
_QUANT_SUFFIX = re.compile(
    r"(?:[-_.](?:int[48]|w[48]a(?:8|16)|a16w[48]|awq|gptq|marlin|fp8|fp4|nvfp4|mxfp4|fp8[-_]dynamic|"
    r"bnb|bnb[-_]4bit|4bit|8bit|gguf|exl2|quantized|q[2-8]_k(?:_[msl])?|dynamic|static|w4a16[-_]g128|g128))+$",
    re.IGNORECASE)
_HF_CACHE = re.compile(r"models--([^/]+)--([^/]+)(?:/snapshots/[^/]*)?/?$")


def model_key(model: str | None) -> str | None:
    if not model or model in ("None", "null"):
        return None
    m = str(model).strip().strip("'\"").rstrip("/")
    cache = _HF_CACHE.search(m)
    name = cache.group(2) if cache else m.rsplit("/", 1)[-1]
    name = name.lower()
    stripped = _QUANT_SUFFIX.sub("", name)
    return stripped or name


def _clean(v):
    if v is None:
        return None
    s = str(v).strip()
    if s in ("", "None", "null", "[]"):
        return None
    if s.startswith("[") and s.endswith("]"):  # vLLM served_model_name is a list: ['a', 'b']
        inner = [x.strip().strip("'\"") for x in s[1:-1].split(",") if x.strip()]
        return inner[0] if inner else None
    s = s.strip("'\"")
    if s.endswith(")") and s.count("(") < s.count(")"):  # the last field of a config repr keeps its ")"
        s = s[:-1].strip("'\"")
    return s or None


def model_identity(cfg: dict, engine: str, banner_model: str | None) -> dict:
    g = cfg.get
    model = _clean(g("model_path")) or _clean(g("cli_args:model")) or _clean(g("model_tag")) or \
        _clean(banner_model) or _clean(g("engine_config:model")) or _clean(g("model"))
    served = _clean(g("served_model_name")) or _clean(g("engine_config:served_model_name"))
    return {"model": model or served, "served_model_name": served, "model_key": model_key(model or served)}


def printed_version(con, source_id: int, run_id: int, engine: str) -> str | None:
    if engine not in ("sglang", "vllm"):
        return None
    row = fetch_one(con.execute(sql("engine_version"), [source_id, run_id, engine]))
    return row[0] if row else None


def parallel_from_ranks(con, run_id: int) -> tuple[int | None, int | None]:
    row = fetch_one(con.execute(sql("parallel_from_ranks"), [run_id]))
    if not row:
        return None, None
    tp, dp = row
    return (int(tp) if tp is not None else None), (int(dp) if dp is not None else None)


def renumber_runs(con, source_id: int, run_ids: list[int], tables: list[str]) -> list[int]:
    """Give this source's runs the ids right after the highest stored run id, in order."""
    base = fetch_one(con.execute("SELECT coalesce(max(run_id), 0) FROM runs"))[0] + 1
    mapping = {old: base + i for i, old in enumerate(sorted(run_ids))}
    if all(old == new for old, new in mapping.items()):
        return [mapping[r] for r in sorted(run_ids)]
    values = ", ".join(f"({int(o)}, {int(n)})" for o, n in mapping.items())
    for t in tables:
        con.execute(f"""UPDATE {t} SET run_id = m.new_id FROM (VALUES {values}) m(old_id, new_id)
                        WHERE {t}.source_id = ? AND {t}.run_id = m.old_id""", [source_id])
    return [mapping[r] for r in sorted(run_ids)]
