"""One hardware context per run, from an explicit --gpu, environment reports and log hints.

Contract (pure function)::

    resolve_gpu(explicit, env_facts, hints, catalog=None) -> GpuContext
        Precedence explicit > environment report > log hints. The first source that names a GPU (or a
        compute capability) sets the identity; later compatible sources (same vendor and CC, or unknown)
        only fill fields still missing, e.g. GPU count and interconnect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import regex

from .catalog import (
    CC_VALUE, GFX_VALUE, TRUNCATION, GpuModel, catalog_models, cc_to_sm, digits_to_cc, family_of, lookup_gpu,
)
from .env_report import EnvFacts
from .hints import Hint, hint_rank
from .report_patterns import report_patterns

_P = report_patterns()  # parsers/env_reports.toml, compiled
_AMD_WORDS = _P.vendors["amd_words"]
_HOW_RANK = _P.hints["rank"]
_NVIDIA_WORDS = _P.vendors["nvidia_words"]


@dataclass
class GpuContext:
    """The hardware a run is taken to have, and where that came from.

    ``source`` is "explicit", "env_report:<kind>", "log_hint:<how>" or None (nothing known). ``memory_gib`` is
    the catalog's torch GiB when the model is known, else what the source printed. ``interconnect`` is read from
    a report when one has it, else the catalog's value when that is certain for the model (never for
    "nvlink-pairs" models, whose bridges are optional).
    """

    name: str | None = None
    count: int | None = None
    cc: str | None = None
    sm: str | None = None
    vendor: str | None = None
    memory_gib: float | None = None
    interconnect: str | None = None
    source: str | None = None
    family: str | None = None



# ---------------------------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------------------------

# "8xH100", "8 × H100", "H100 x 8", "H100×8" (a suffix "x" needs a space before it: "gfx1201" is no count)
_EXPLICIT_COUNT = regex.compile(
    r"^\s*(\d+)\s*[x×*]\s*(.+?)\s*$|^\s*(.+?)(?:\s+[x×*]|\s*[×*])\s*(\d+)\s*$", regex.I
)
_EXPLICIT_SM = regex.compile(r"^(?:sm_?)(\d{2,3})[af]?$", regex.I)


def resolve_gpu(
    explicit: str | None,
    env_facts: list[EnvFacts],
    hints: list[Hint],
    catalog: Iterable[GpuModel] | None = None,
) -> GpuContext:
    """Merge what is known about the hardware, with precedence explicit > env report > log hints."""
    models = catalog_models(catalog)
    candidates = []
    if explicit and explicit.strip():
        candidates.append(_context_from_explicit(explicit, models))
    candidates += [_context_from_env(facts, models) for facts in env_facts]
    if hints:
        candidates.append(_context_from_hints(hints, models))
    candidates = [c for c in candidates if c.source]
    if not candidates:
        return GpuContext()
    primary = next((c for c in candidates if c.name or c.cc), candidates[0])
    merged = GpuContext(**vars(primary))
    for other in candidates:
        if other is not primary and _compatible(merged, other):
            _fill_missing(merged, other)
    _fill_from_catalog(merged, models)
    return merged


def _context_from_model(model: GpuModel, source: str, name: str | None = None) -> GpuContext:
    return GpuContext(
        name=name or model.name,
        cc=model.cc,
        sm=model.sm or None,
        vendor=model.vendor,
        memory_gib=model.memory_gib,
        source=source,
        family=model.family,
    )


def _context_from_explicit(text: str, models: tuple[GpuModel, ...]) -> GpuContext:
    """--gpu value: a name or alias ("RTX PRO 6000"), optionally with a count ("8xH100", "H100 x 8"),
    a compute capability ("12.0", "sm_120") or a gfx target ("gfx1201")."""
    count = None
    if match := _EXPLICIT_COUNT.match(text):
        count = int(match.group(1) or match.group(4))
        text = match.group(2) or match.group(3)
    text = text.strip()
    if model := lookup_gpu(text, models):
        ctx = _context_from_model(model, "explicit", name=text if text.endswith(TRUNCATION) else None)
    elif CC_VALUE.fullmatch(text) or _EXPLICIT_SM.match(text):
        cc = text if CC_VALUE.fullmatch(text) else digits_to_cc(_EXPLICIT_SM.match(text).group(1))
        ctx = GpuContext(cc=cc, sm=cc_to_sm(cc), vendor="nvidia", family=family_of("nvidia", cc), source="explicit")
    elif GFX_VALUE.fullmatch(text):
        gfx = text.lower()
        ctx = GpuContext(cc=gfx, vendor="amd", family=family_of("amd", gfx), source="explicit")
    else:
        ctx = GpuContext(name=text, vendor=_vendor_of_text(text), source="explicit")
    ctx.count = count
    return ctx


def _context_from_env(facts: EnvFacts, models: tuple[GpuModel, ...]) -> GpuContext:
    model = lookup_gpu(facts.gpu_name, models) if facts.gpu_name else None
    if model and facts.vendor and model.vendor != facts.vendor:
        model = None
    truncated = bool(facts.gpu_name and facts.gpu_name.endswith(TRUNCATION))
    source = f"env_report:{facts.kind or 'unknown'}"
    if model:
        ctx = _context_from_model(model, source, name=facts.gpu_name if truncated else None)
        ctx.cc = facts.compute_capability or model.cc
        ctx.sm = cc_to_sm(ctx.cc) if model.vendor == "nvidia" else None
    else:
        ctx = GpuContext(
            name=facts.gpu_name,
            cc=facts.compute_capability,
            sm=facts.sm,
            vendor=facts.vendor,
            memory_gib=facts.memory_gib,
            family=family_of(facts.vendor, facts.compute_capability),
            source=source,
        )
    ctx.count = facts.gpu_count
    ctx.interconnect = facts.interconnect
    if not any((ctx.name, ctx.cc, ctx.vendor, ctx.count, ctx.interconnect)):
        ctx.source = None  # the report said nothing about hardware
    return ctx


def _context_from_hints(hints: list[Hint], models: tuple[GpuModel, ...]) -> GpuContext:
    """Fold log hints into one context: the best-ranked hint that implies a vendor decides it, then the
    best-ranked resolvable name, else a CC/gfx target (naming the model when the catalog has only one
    fitting it, memory used to narrow down)."""
    ranked = sorted(hints, key=lambda h: (hint_rank(h.how), h.line_index))
    vendor, vendor_hint = _hint_vendor(ranked, models)
    memory_hint = next((h for h in ranked if h.kind == "memory"), None)
    memory = float(memory_hint.value.split()[0]) if memory_hint else None

    for hint in ranked:
        if hint.kind != "name":
            continue
        model = lookup_gpu(hint.value, models)
        if model and (vendor is None or model.vendor == vendor):
            truncated = hint.value.endswith(TRUNCATION)
            return _context_from_model(model, f"log_hint:{hint.how}", name=hint.value if truncated else None)

    # a name the catalog does not know ("Tesla T4" in a MoE config name) is still worth reporting
    raw_name = next((h for h in ranked if h.kind == "name"), None)
    cc_kind = "gfx" if vendor == "amd" else "cc"
    cc_hint = next((h for h in ranked if h.kind == cc_kind), None)
    if cc_hint:
        cc = cc_hint.value.lower() if cc_kind == "gfx" else cc_hint.value
        fitting = [m for m in models if m.cc == cc and (memory is None or _memory_fits(m, memory))]
        if len(fitting) == 1 and raw_name is None:
            return _context_from_model(fitting[0], f"log_hint:{cc_hint.how}")
        ctx = GpuContext(
            cc=cc,
            sm=cc_to_sm(cc) if cc_kind == "cc" else None,
            vendor=vendor,
            family=family_of(vendor, cc),
            source=f"log_hint:{cc_hint.how}",
        )
    else:
        best = raw_name or memory_hint or vendor_hint
        if best is None:
            return GpuContext()
        ctx = GpuContext(vendor=vendor, source=f"log_hint:{best.how}")
    ctx.name = raw_name.value if raw_name else None
    ctx.memory_gib = memory
    return ctx


def _vendor_of_text(text: str) -> str | None:
    return "amd" if _AMD_WORDS.search(text) else "nvidia" if _NVIDIA_WORDS.search(text) else None


def _hint_vendor(ranked: list[Hint], models: tuple[GpuModel, ...]) -> tuple[str | None, Hint | None]:
    for hint in ranked:
        kind = hint.kind
        if kind == "vendor":
            return hint.value, hint
        if kind == "gfx":
            return "amd", hint
        if kind == "cc":
            return "nvidia", hint
        if kind == "name":
            model = lookup_gpu(hint.value, models)
            vendor = model.vendor if model else _vendor_of_text(hint.value)
            if vendor:
                return vendor, hint
    return None, None


def _memory_fits(model: GpuModel, gib: float) -> bool:
    """Printed totals vary by about ±0.2 GiB with driver/ECC, catalog estimates by more: allow 1.5 % or 0.6 GiB."""
    return abs(model.memory_gib - gib) <= max(0.6, 0.015 * model.memory_gib)


def _compatible(a: GpuContext, b: GpuContext) -> bool:
    """b may fill a's gaps when it does not describe other hardware: same vendor and CC where both know them."""
    if a.vendor and b.vendor and a.vendor != b.vendor:
        return False
    return not (a.cc and b.cc and a.cc != b.cc)


def _fill_missing(target: GpuContext, other: GpuContext) -> None:
    for key in ("name", "count", "cc", "sm", "vendor", "memory_gib", "interconnect", "family"):
        if getattr(target, key) is None and getattr(other, key) is not None:
            setattr(target, key, getattr(other, key))


def _fill_from_catalog(ctx: GpuContext, models: tuple[GpuModel, ...]) -> None:
    """Interconnect from the catalog when no source read a topology and the model's wiring is fixed."""
    if ctx.interconnect is not None or not ctx.name:
        return
    model = lookup_gpu(ctx.name, models)
    if model and model.interconnect != "nvlink-pairs":
        ctx.interconnect = model.interconnect
