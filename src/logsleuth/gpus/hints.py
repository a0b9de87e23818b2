"""Hardware hints inside server log lines (MoE config names, device names, arch strings, memory totals).

Contract (pure functions; patterns from parsers/env_reports.toml [hints])::

    gpu_hints_from_text(lines, catalog=None) -> list[Hint]
        Hardware hints inside server log lines (the caller prefilters candidate lines with
        ``prefilter_likes()``, SQL LIKE patterns): MoE config file names, device names, arch strings
        (sm_120a, FlashInfer cache folders), torch/vLLM memory totals, gfx targets, ROCm tells,
        nvidia-smi banners.

    hint_rank(how) -> int: trust of a hint source when hints disagree (lower wins).
"""

from __future__ import annotations

import functools
from typing import Iterable, NamedTuple

import regex

from .catalog import CC_VALUE, GFX_VALUE, TRUNCATION, VENDORS, GpuModel, catalog_models, digits_to_cc
from .env_report import ANSI
from .report_patterns import report_patterns

_P = report_patterns()  # parsers/env_reports.toml, compiled
#: the [hints] and [detect] sections, read by key where used
_HINTS = _P.hints
_DETECT = _P.detect


def prefilter_likes() -> list[str]:
    """SQL LIKE patterns of the lines worth handing to gpu_hints_from_text."""
    return list(_P.hints["prefilter"])


def hint_rank(how: str) -> int:
    return _HINTS["rank"].get(how, 9)


class Hint(NamedTuple):
    """A hardware hint found in a server log line.

    ``value`` is, by form: a GPU name ("NVIDIA H100 80GB HBM3", underscores already turned to spaces), a CUDA
    compute capability ("12.1"), a gfx target ("gfx1201"), a memory total ("79.19 GiB") or a vendor ("amd",
    "nvidia"); ``kind`` tells which. ``how`` names the pattern that found it, ``line_index`` is the index into
    the list given to gpu_hints_from_text.
    """

    value: str
    how: str
    line_index: int

    @property
    def kind(self) -> str:
        """One of "vendor", "gfx", "cc", "memory", "name"."""
        if self.value in VENDORS:
            return "vendor"
        if GFX_VALUE.fullmatch(self.value):
            return "gfx"
        if CC_VALUE.fullmatch(self.value):
            return "cc"
        if self.value.endswith(" GiB"):
            return "memory"
        return "name"

# ---------------------------------------------------------------------------------------------------------------
# Hints inside server logs
# ---------------------------------------------------------------------------------------------------------------


def gpu_hints_from_text(lines: list[str], catalog: Iterable[GpuModel] | None = None) -> list[Hint]:
    """Hardware hints in (prefiltered) server log lines, in line order."""
    name_pattern = _name_pattern(catalog_models(catalog))
    hints: list[Hint] = []
    for i, raw in enumerate(lines):
        line = ANSI.sub("", raw)
        hints.extend(Hint(v, how, i) for v, how in _line_hints(line, name_pattern))
    return hints


def _line_hints(line: str, name_pattern: regex.Pattern) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    found += [(_config_name(m.group(1)), "moe_config") for m in _HINTS["moe_device"].finditer(line)]
    if match := _HINTS["different_devices"].search(line):
        found += [(name.strip(), "different_devices") for name in match.group(1).split(",") if name.strip()]
    if match := _DETECT["smi_row"].match(line.strip()):
        found.append((match["name"], "nvidia_smi"))
    elif _DETECT["smi_banner"].search(line):
        found.append(("nvidia", "nvidia_smi"))
    if not any(how in ("moe_config", "different_devices", "nvidia_smi") for _, how in found):
        found += [(_config_name(m.group(0)), "device_string") for m in name_pattern.finditer(line)]
    found += _memory_hints(line)
    found += _arch_hints(line)
    found += [(m.group(1).lower(), "gfx_target") for m in _HINTS["gfx_anywhere"].finditer(line)]
    if _HINTS["amdsmi_tell"].search(line):
        found.append(("amd", "amdsmi"))
    elif _HINTS["rocm_tell"].search(line):
        found.append(("amd", "rocm"))
    return list(dict.fromkeys(found))


def _config_name(token: str) -> str:
    """MoE config token -> printed name: NVIDIA names contain no "_", so "_" -> " " restores them (§3);
    SGLang's "_down" suffix (down-projection configs) is not part of the name."""
    token = _HINTS["moe_down_suffix"].sub("", token)
    return token.replace("_", " ")


def _memory_hints(line: str) -> list[tuple[str, str]]:
    found = []
    for match in _HINTS["total_capacity"].finditer(line):
        found.append((f"{match.group(1) or match.group(2)} GiB", "total_capacity"))
    for match in _HINTS["free_memory"].finditer(line):
        found.append((f"{match.group(1) or match.group(2)} GiB", "free_memory"))
    return found


def _arch_hints(line: str) -> list[tuple[str, str]]:
    """Device arch from FlashInfer cache folders ("flashinfer_autotune_cache/0.6.13/121a/"), torch's
    "with CUDA capability sm_120", "compute capability 8.6", or a lone sm_XX/compute_XX string. A line
    listing several different archs (TORCH_CUDA_ARCH_LIST, "supports CUDA capabilities sm_50 sm_60 ...")
    names what a build supports, not the device, so it only counts through the explicit phrases."""
    found = []
    if match := _HINTS["flashinfer_arch"].search(line):
        found.append((digits_to_cc(match.group(1)), "flashinfer_arch"))
    if match := _HINTS["device_cc"].search(line):
        found.append((digits_to_cc(match.group(1)), "device_capability"))
    if (match := _HINTS["cc_phrase"].search(line)) and not _HINTS["cc_requirement"].search(line):
        found.append((f"{int(match.group(1))}.{match.group(2)}", "compute_capability"))
    if not found:
        archs = {m.group(1) for m in _HINTS["arch_string"].finditer(line)}
        if len(archs) == 1:
            found.append((digits_to_cc(archs.pop()), "arch_string"))
    return found


@functools.lru_cache(maxsize=8)
def _name_pattern(models: tuple[GpuModel, ...]) -> regex.Pattern:
    """One alternation of every vendor-prefixed catalog name/alias ("NVIDIA H100 80GB HBM3", "AMD_Radeon_R9700"),
    longest first, spaces matching " " or "_", on word boundaries ("NVIDIA H20" is not found in "NVIDIA H20-3e")."""
    names = set()
    for model in models:
        for raw in (model.name, *model.aliases):
            words = raw.replace("_", " ").split()
            if words and words[0].lower() in ("nvidia", "amd") and not raw.endswith(TRUNCATION):
                names.add(tuple(words))
    parts = sorted(("[ _]".join(regex.escape(w) for w in words) for words in names), key=len, reverse=True)
    return regex.compile(rf"(?<![\w-])(?:{'|'.join(parts)})(?![\w-])", regex.I)
