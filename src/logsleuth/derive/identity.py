"""Who a run is, derived the same way for every engine.

Contract:
* ``model_identity(cfg, engine, banner_model)`` -> ``model`` (the weights: hub id or path as
  launched), ``served_model_name`` (the API alias, if any) and ``model_key``: the canonical key
  cross-run rules match on, the hub id's or path's last component (an HF cache path
  ``models--org--name/snapshots/<hash>`` gives ``name``), lower-cased, with quantisation
  suffixes (``-int4``, ``-awq``, ``-fp8``, ``-nvfp4``, ``-gptq-int4``, ...) removed; the
  quantisation itself stays in ``runs.quantization`` and is reported as a difference.

The exact version a log prints (pip output, pins, image tags: queries/derive/engine_version.sql)
and TP/DP sizes from rank tags (queries/derive/parallel_from_ranks.sql) are read set-based for
all runs of a derivation call by derive/runs.py.
"""
from __future__ import annotations

import re


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
