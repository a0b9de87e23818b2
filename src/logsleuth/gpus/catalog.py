"""The GPU catalog (parsers/gpus.toml): models, compute-capability helpers, name lookup.

Contract (pure functions; reads only the catalog and the vendor words of parsers/env_reports.toml)::

    load_catalog(path=None) -> list[GpuModel]
        The GPU catalog (parsers/gpus.toml, located with resources.data_path). Every entry is validated;
        a broken file raises GrammarError naming the file, the entry and the key.

    lookup_gpu(name, catalog=None) -> GpuModel | None
        Tolerant name matching: exact name or alias, case-insensitive, "_" as space, torch's
        "(gfx942:sramecc+:xnack-)" suffix dropped, truncated nvidia-smi names ("...") by prefix, then
        catalog keys contained in the string (longest wins), then the string inside a key, then a gfx target
        that names exactly one model. A string that names a vendor only searches that vendor's models, and a
        bare number ("12.0") never matches: AMD pseudo-CCs must not turn into NVIDIA SMs.

    cc_to_sm(cc), family_of(vendor, cc), digits_to_cc(digits): compute-capability helpers (gpu-catalog.md).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import regex

from ..errors import GrammarError
from ..resources import data_path
from .report_patterns import report_patterns

VENDORS = ("nvidia", "amd")
CATALOG_INTERCONNECTS = ("pcie", "nvlink", "nvlink-pairs", "unified", "xgmi")
_CATALOG_KEYS = ("name", "aliases", "vendor", "cc", "sm", "arch", "memory_gib", "interconnect", "family")

_P = report_patterns()  # parsers/env_reports.toml, compiled
AMD_WORDS = _P.vendors["amd_words"]
_GFX_ANYWHERE = _P.hints["gfx_anywhere"]
NVIDIA_WORDS = _P.vendors["nvidia_words"]
_TORCH_GFX_SUFFIX = _P.hints["torch_gfx_suffix"]


@dataclass(frozen=True)
class GpuModel:
    """One catalog entry (see the header of parsers/gpus.toml for the meaning of each field)."""

    name: str
    aliases: tuple[str, ...]
    vendor: str
    cc: str
    sm: str
    arch: str
    memory_gib: float
    interconnect: str
    family: str



# ---------------------------------------------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------------------------------------------

CC_VALUE = regex.compile(r"\d{1,2}\.\d")
GFX_VALUE = regex.compile(r"gfx[0-9a-f]{3,4}[a-z]?", regex.I)


def load_catalog(path: str | Path | None = None) -> list[GpuModel]:
    """Load and validate the GPU catalog; ``path=None`` reads the packaged parsers/gpus.toml (cached)."""
    if path is None:
        return list(_default_catalog())
    return list(_read_catalog(Path(path)))


@functools.lru_cache(maxsize=1)
def _default_catalog() -> tuple[GpuModel, ...]:
    return _read_catalog(data_path("parsers/gpus.toml"))


def _read_catalog(path: Path) -> tuple[GpuModel, ...]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GrammarError(f"{path}: GPU catalog not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise GrammarError(f"{path.name}: not valid TOML: {exc}") from None
    entries = data.get("gpu")
    if not isinstance(entries, list) or not entries:
        raise GrammarError(f"{path.name}: no [[gpu]] tables")
    models = tuple(_model_from_entry(entry, f"{path.name} [[gpu]] #{i + 1}") for i, entry in enumerate(entries))
    seen: set[str] = set()
    for model in models:
        if model.name in seen:
            raise GrammarError(f"{path.name}: GPU {model.name!r} is listed twice")
        seen.add(model.name)
    return models


def _model_from_entry(entry: dict, where: str) -> GpuModel:  # noqa: C901 (one guard per catalog field)
    """Check one [[gpu]] table and build its GpuModel; errors name the entry and the key."""
    if isinstance(entry.get("name"), str):
        where = f"{where} ({entry['name']})"
    for key in _CATALOG_KEYS:
        if key not in entry:
            raise GrammarError(f"{where}: missing key '{key}'")
    unknown = sorted(set(entry) - set(_CATALOG_KEYS))
    if unknown:
        raise GrammarError(f"{where}: unknown key(s) {', '.join(unknown)}", hint=f"keys: {', '.join(_CATALOG_KEYS)}")
    for key in ("name", "vendor", "cc", "sm", "arch", "interconnect", "family"):
        if not isinstance(entry[key], str):
            raise GrammarError(f"{where}: '{key}' must be a string")
    aliases = entry["aliases"]
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise GrammarError(f"{where}: 'aliases' must be a list of non-empty strings")
    if not isinstance(entry["memory_gib"], (int, float)) or entry["memory_gib"] <= 0:
        raise GrammarError(f"{where}: 'memory_gib' must be a positive number (torch GiB)")
    vendor, cc, sm = entry["vendor"], entry["cc"], entry["sm"]
    if vendor not in VENDORS:
        raise GrammarError(f"{where}: 'vendor' must be one of {', '.join(VENDORS)}, got {vendor!r}")
    if entry["interconnect"] not in CATALOG_INTERCONNECTS:
        raise GrammarError(
            f"{where}: 'interconnect' must be one of {', '.join(CATALOG_INTERCONNECTS)}, got {entry['interconnect']!r}"
        )
    if vendor == "nvidia":
        if not CC_VALUE.fullmatch(cc):
            raise GrammarError(f"{where}: NVIDIA 'cc' must look like \"12.0\", got {cc!r}")
        if sm != cc_to_sm(cc):
            raise GrammarError(f"{where}: 'sm' must be {cc_to_sm(cc)!r} for cc {cc!r}, got {sm!r}")
    else:
        if not GFX_VALUE.fullmatch(cc):
            raise GrammarError(f"{where}: AMD 'cc' must be a gfx target like \"gfx942\", got {cc!r}")
        if sm:
            raise GrammarError(f"{where}: AMD entries have an empty 'sm' (gfx targets are not SMs)")
    return GpuModel(
        name=entry["name"],
        aliases=tuple(aliases),
        vendor=vendor,
        cc=cc,
        sm=sm,
        arch=entry["arch"],
        memory_gib=float(entry["memory_gib"]),
        interconnect=entry["interconnect"],
        family=entry["family"],
    )


def catalog_models(catalog: Iterable[GpuModel] | None) -> tuple[GpuModel, ...]:
    return _default_catalog() if catalog is None else tuple(catalog)


# ---------------------------------------------------------------------------------------------------------------
# Compute capability helpers
# ---------------------------------------------------------------------------------------------------------------

# torch's pseudo-CC on ROCm -> gfx target, where it names one target (gpu-catalog.md §2); 12.x is left out
# because RDNA4 has several gfx12 targets.
AMD_PSEUDO_CC = {"9.4": "gfx942", "9.5": "gfx950"}


def cc_to_sm(cc: str | None) -> str | None:
    """NVIDIA compute capability "12.0" -> "SM120" (§0); None for anything else (gfx targets included)."""
    if not cc or not CC_VALUE.fullmatch(cc):
        return None
    major, minor = cc.split(".")
    return f"SM{major}{minor}"


def digits_to_cc(digits: str) -> str:
    """Arch digits as in sm_120a / compute_90a / cu129: last digit is the minor ("121" -> "12.1")."""
    return f"{int(digits[:-1])}.{digits[-1]}"


def family_of(vendor: str | None, cc: str | None) -> str | None:
    """Rule family for a vendor and CC/gfx target when no catalog entry is known (gpu-catalog.md §4)."""
    if not cc:
        return None
    if vendor == "amd" or cc.lower().startswith("gfx"):
        target = cc.lower()
        if target.startswith("gfx94"):
            return "amd-cdna3"
        if target.startswith("gfx95"):
            return "amd-cdna4"
        if target.startswith("gfx12"):
            return "amd-rdna4"
        return None
    if not CC_VALUE.fullmatch(cc):
        return None
    major, minor = (int(p) for p in cc.split("."))
    if major in (9, 10, 12):
        return f"sm{major}0"
    if major == 8:
        return "ada" if minor == 9 else "ampere"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Name lookup
# ---------------------------------------------------------------------------------------------------------------

TRUNCATION = ("...", "…")
_VENDOR_PREFIXES = ("nvidia ", "amd ")


def _norm(text: str) -> str:
    """Comparable form of a GPU name: "_" as space, whitespace collapsed, casefolded."""
    return " ".join(text.replace("_", " ").split()).casefold()


def _keys_of(model: GpuModel) -> list[str]:
    """Normalised name and aliases, each also without its vendor prefix ("h100 80gb hbm3")."""
    keys: list[str] = []
    for raw in (model.name, *model.aliases):
        key = _norm(raw)
        keys.append(key)
        for prefix in _VENDOR_PREFIXES:
            if key.startswith(prefix):
                keys.append(key[len(prefix):])
    return list(dict.fromkeys(keys))


@functools.lru_cache(maxsize=8)
def _key_index(models: tuple[GpuModel, ...]) -> tuple[tuple[GpuModel, tuple[str, ...]], ...]:
    return tuple((m, tuple(_keys_of(m))) for m in models)


def _vendor_pool(models: tuple[GpuModel, ...], text: str) -> tuple[GpuModel, ...]:
    """Restrict the search to one vendor when the string names it (R9700's "12.x" must never look NVIDIA)."""
    if AMD_WORDS.search(text):
        return tuple(m for m in models if m.vendor == "amd")
    if NVIDIA_WORDS.search(text):
        return tuple(m for m in models if m.vendor == "nvidia")
    return models


def _contains_token(haystack: str, needle: str, *, allow_hyphen: bool = False) -> bool:
    """needle occurs in haystack on word boundaries; "-" counts as part of a word unless allow_hyphen
    (so "h20" is not found in "h20-3e", but a user's "a100-sxm4" is found in "a100-sxm4-80gb")."""
    edge = r"\w" if allow_hyphen else r"[\w-]"
    return regex.search(rf"(?<!{edge}){regex.escape(needle)}(?!{edge})", haystack) is not None


def lookup_gpu(name: str, catalog: Iterable[GpuModel] | None = None) -> GpuModel | None:
    """Find the catalog model a printed GPU name means (see the module contract for the matching order)."""
    if not name or not name.strip():
        return None
    models = catalog_models(catalog)
    gfx_match = _GFX_ANYWHERE.search(name)
    gfx = gfx_match.group(1).lower() if gfx_match else None
    query = _norm(_TORCH_GFX_SUFFIX.sub("", name))
    pool = _vendor_pool(models, name)
    in_pool = {id(m) for m in pool}
    index = [(m, keys) for m, keys in _key_index(models) if id(m) in in_pool]
    return (
        _match_exact(index, query)
        or _match_truncated(index, query)
        or _match_contained(index, query)
        or _match_gfx(pool, gfx)
    )


def _match_exact(index, query: str) -> GpuModel | None:
    for model, keys in index:
        if query in keys:
            return model
    return None


def _match_truncated(index, query: str) -> GpuModel | None:
    """nvidia-smi's table cuts long names ("NVIDIA RTX PRO 6000 Blac..."): first model whose key starts so."""
    if not query.endswith(TRUNCATION):
        return None
    prefix = query.rstrip(".…")
    if len(prefix) < 6:
        return None
    for model, keys in index:
        if any(key.startswith(prefix) for key in keys):
            return model
    return None


def _match_contained(index, query: str) -> GpuModel | None:
    """A catalog key inside the string (longest key wins: "h100 nvl" over "h100"), else the string inside a
    key (first model in catalog order: "rtx pro 6000 blackwell" -> the Server Edition)."""
    best: tuple[int, GpuModel] | None = None
    for model, keys in index:
        for key in keys:
            if len(key) >= 2 and (best is None or len(key) > best[0]) and _contains_token(query, key):
                best = (len(key), model)
    if best:
        return best[1]
    if len(query) < 3 or CC_VALUE.fullmatch(query):
        return None
    for model, keys in index:
        if any(_contains_token(key, query, allow_hyphen=True) for key in keys):
            return model
    return None


def _match_gfx(pool: tuple[GpuModel, ...], gfx: str | None) -> GpuModel | None:
    """A gfx target names a model only when exactly one catalog entry has it (gfx942 is MI300X and MI325X)."""
    if not gfx:
        return None
    found = [m for m in pool if m.vendor == "amd" and m.cc == gfx]
    return found[0] if len(found) == 1 else None


# ---------------------------------------------------------------------------------------------------------------
