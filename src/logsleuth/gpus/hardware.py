"""Hardware awareness: which GPUs ran a log, from the GPU catalog, environment reports and hints in the log.

Contract (pure functions, no I/O except reading the catalog; stdlib + ``regex`` only, no typer/rich)::

    load_catalog(path=None) -> list[GpuModel]
        The GPU catalog (parsers/gpus.toml, located with resources.data_path). Every entry is validated;
        a broken file raises GrammarError naming the file, the entry and the key.

    lookup_gpu(name, catalog=None) -> GpuModel | None
        Tolerant name matching: exact name or alias, case-insensitive, "_" as space, torch's
        "(gfx942:sramecc+:xnack-)" suffix dropped, truncated nvidia-smi names ("...") by prefix, then
        catalog keys contained in the string (longest wins), then the string inside a key, then a gfx target
        that names exactly one model. A string that names a vendor only searches that vendor's models, and a
        bare number ("12.0") never matches: AMD pseudo-CCs must not turn into NVIDIA SMs.

    detect_report_kind(text) -> str | None
        Kind id of an environment report ("nvidia_smi", "nvidia_smi_q", "nvidia_smi_l", "nvidia_smi_csv",
        "nvidia_topo", "sglang_check_env", "vllm_collect_env", "torch_collect_env", "nccl_debug", "rocm_smi")
        or None when the head of the text is not one (SGLang/vLLM server logs are None even when they carry
        NCCL INFO lines or an nvidia-smi dump: the server lines dominate).

    parse_env_report(text) -> EnvFacts
        Facts of a report of any kind above. All extractors run on the whole text, so concatenated reports
        (nvidia-smi + topo -m) are read completely; the detected kind only labels the result. Vendor is
        decided first (ROCm tells win), compute capability and memory come from the catalog when the report
        lacks them, interconnect from the topology matrix (or NCCL transports when no matrix is present).

    gpu_hints_from_text(lines, catalog=None) -> list[Hint]
        Hardware hints inside server log lines (the caller prefilters candidate lines): MoE config file names,
        device names, arch strings (sm_120a, FlashInfer cache folders), torch/vLLM memory totals, gfx
        targets, ROCm tells, nvidia-smi banners.

    resolve_gpu(explicit, env_facts, hints, catalog=None) -> GpuContext
        One hardware context with precedence explicit > environment report > log hints. The first source
        that names a GPU (or a compute capability) sets the identity; later compatible sources (same vendor
        and CC, or unknown) only fill fields still missing, e.g. GPU count and interconnect.

Formats follow shared/docs/env-reports.md (section numbers cited as §n) and shared/docs/gpu-catalog.md.
"""

from __future__ import annotations

import functools
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, NamedTuple

import regex

from ..errors import GrammarError
from ..resources import data_path

REPORT_KINDS = (
    "sglang_check_env",
    "vllm_collect_env",
    "torch_collect_env",
    "nvidia_smi_q",
    "nvidia_smi",
    "nvidia_smi_csv",
    "nvidia_topo",
    "nvidia_smi_l",
    "rocm_smi",
    "nccl_debug",
)

VENDORS = ("nvidia", "amd")
CATALOG_INTERCONNECTS = ("pcie", "nvlink", "nvlink-pairs", "unified", "xgmi")
#: values of EnvFacts.interconnect / GpuContext.interconnect read from a topology
REPORT_INTERCONNECTS = ("nvlink", "partial-nvlink", "pcie", "xgmi")

_CATALOG_KEYS = ("name", "aliases", "vendor", "cc", "sm", "arch", "memory_gib", "interconnect", "family")

# ---------------------------------------------------------------------------------------------------------------
# Data types
# ---------------------------------------------------------------------------------------------------------------


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


@dataclass
class EnvFacts:
    """What one environment report says. Fields the report does not give stay None (or empty).

    ``memory_gib`` is per GPU as the report prints it (nvidia-smi MiB / 1024, rocm-smi bytes / 2^30), or the
    catalog's torch GiB when the report has none. ``cuda_version`` is the toolkit/runtime (nvcc, CUDA runtime,
    container CUDA_VERSION); ``driver_cuda`` the newest CUDA the driver supports (nvidia-smi banner, NCCL
    cudaDriverVersion). ``compute_capability`` is the gfx target on AMD, ``sm`` None there.
    ``facts_source`` tells the kind and which fields were filled from the catalog.
    """

    kind: str | None = None
    vendor: str | None = None
    gpu_name: str | None = None
    gpu_count: int | None = None
    compute_capability: str | None = None
    sm: str | None = None
    memory_gib: float | None = None
    interconnect: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    torch_version: str | None = None
    torch_cuda: str | None = None
    nccl_version: str | None = None
    engine_versions: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    facts_source: str = ""
    gpu_names: list[str] = field(default_factory=list)
    driver_cuda: str | None = None


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
        if _GFX_VALUE.fullmatch(self.value):
            return "gfx"
        if _CC_VALUE.fullmatch(self.value):
            return "cc"
        if self.value.endswith(" GiB"):
            return "memory"
        return "name"


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
# Catalog
# ---------------------------------------------------------------------------------------------------------------

_CC_VALUE = regex.compile(r"\d{1,2}\.\d")
_GFX_VALUE = regex.compile(r"gfx[0-9a-f]{3,4}[a-z]?", regex.I)


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


def _model_from_entry(entry: dict, where: str) -> GpuModel:
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
        if not _CC_VALUE.fullmatch(cc):
            raise GrammarError(f"{where}: NVIDIA 'cc' must look like \"12.0\", got {cc!r}")
        if sm != cc_to_sm(cc):
            raise GrammarError(f"{where}: 'sm' must be {cc_to_sm(cc)!r} for cc {cc!r}, got {sm!r}")
    else:
        if not _GFX_VALUE.fullmatch(cc):
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


def _models(catalog: Iterable[GpuModel] | None) -> tuple[GpuModel, ...]:
    return _default_catalog() if catalog is None else tuple(catalog)


# ---------------------------------------------------------------------------------------------------------------
# Compute capability helpers
# ---------------------------------------------------------------------------------------------------------------

# torch's pseudo-CC on ROCm -> gfx target, where it names one target (gpu-catalog.md §2); 12.x is left out
# because RDNA4 has several gfx12 targets.
_AMD_PSEUDO_CC = {"9.4": "gfx942", "9.5": "gfx950"}


def cc_to_sm(cc: str | None) -> str | None:
    """NVIDIA compute capability "12.0" -> "SM120" (§0); None for anything else (gfx targets included)."""
    if not cc or not _CC_VALUE.fullmatch(cc):
        return None
    major, minor = cc.split(".")
    return f"SM{major}{minor}"


def _digits_to_cc(digits: str) -> str:
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
    if not _CC_VALUE.fullmatch(cc):
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

_TORCH_GFX_SUFFIX = regex.compile(r"\s*\((gfx[0-9a-f]+)[^)]*\)\s*$", regex.I)
_GFX_ANYWHERE = regex.compile(r"(?<![a-z0-9])(gfx[0-9a-f]{3,4}[a-z]?)(?![a-z0-9])", regex.I)
_AMD_WORDS = regex.compile(r"(?<![a-z0-9])(?:amd|radeon|instinct|gfx\d|mi\d{3})", regex.I)
_NVIDIA_WORDS = regex.compile(r"(?<![a-z0-9])(?:nvidia|geforce|tesla|quadro|rtx)(?![a-z0-9])", regex.I)
_TRUNCATION = ("...", "…")
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
    if _AMD_WORDS.search(text):
        return tuple(m for m in models if m.vendor == "amd")
    if _NVIDIA_WORDS.search(text):
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
    models = _models(catalog)
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
    if not query.endswith(_TRUNCATION):
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
    if len(query) < 3 or _CC_VALUE.fullmatch(query):
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
# Report kind detection
# ---------------------------------------------------------------------------------------------------------------

_HEAD_LINES = 400
_ANSI = regex.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PROC_TAG = regex.compile(r"^\(\w+ pid=\d+\)\s*")
# Markers that only a server log carries: one in the head means "server log", whatever else is mixed in.
_SERVER_MARKERS = regex.compile(
    r"server_args=ServerArgs\(|Initializing a V1 LLM engine|Initializing an LLM engine|vLLM API server version"
    r"|non-default args: \{|Starting vLLM API server"
    r"|\((?:APIServer|EngineCore\w*|Worker\w*|VllmWorkerProcess) pid=\d+\)"
    r"|The server is fired up and ready|Uvicorn running on"
)
# Line prefixes of server logs: vLLM "INFO 03-19 06:27:09", SGLang "[2026-05-25 17:43:18 TP1]".
_SERVER_LINE = regex.compile(
    r"^(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\])"
)
_NCCL_LINE = regex.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")

_CHECK_ENV_PYTHON = regex.compile(r"(?m)(?:^|\s)Python: \d+\.\d+")
_CHECK_ENV_AVAILABLE = regex.compile(r"(?<!Is )\b(?:CUDA|ROCM|NPU|HPU|XPU|MUSA) available: (?:True|False)")
_TORCH_ENV = regex.compile(r"Collecting environment information|PyTorch version\s*:|CUDA used to build PyTorch\s*:")
_VLLM_ENV = regex.compile(r"(?m)vLLM Version\s*:|vLLM Build Flags|^\s*vLLM Info\s*$")
_SMI_Q = regex.compile(r"=+\s*NVSMI LOG\s*=+")
_SMI_Q_FIELDS = regex.compile(r"(?ms)Attached GPUs\s*:\s*\d+.*?Product Name\s*:")
_SMI_BANNER = regex.compile(r"NVIDIA-SMI \d+\.\d+")
_SMI_ROW = regex.compile(
    r"^\|\s*(?P<idx>\d+)\s+(?P<name>\S.*?)\s+(?:On|Off|WDDM|TCC|N/A)\s*\|\s*"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
)
_SMI_L = regex.compile(r"(?m)^\s*GPU \d+: .+\(UUID: GPU-")
_CSV_FIELD = regex.compile(r"[a-z_]+(?:\.[a-z_]+)*(?: \[[^\]]+\])?")
_CSV_KNOWN = {"index", "name", "memory.total", "compute_cap", "driver_version", "pci.bus_id", "uuid", "gpu_name"}
_CSV_ROW = regex.compile(r"(?m)^\s*(?:\d+, )?(?:NVIDIA|Tesla|Quadro)[^,\n]*, ")
_TOPO = regex.compile(r"(?m)^\s*GPU0(?:[ \t]+\S+)*?[ \t]+CPU Affinity|^GPU0\s+X\s")
_ROCM_SMI = regex.compile(r"(?m)ROCm System Management Interface|^GPU\[\d+\]\s*:")


def detect_report_kind(text: str) -> str | None:
    """Kind id of an environment report, or None (see the module contract)."""
    head_lines = [_clean(line) for line in text.splitlines()[:_HEAD_LINES]]
    nonblank = [line for line in head_lines if line.strip()]
    if not nonblank:
        return None
    head = "\n".join(head_lines)
    if _SERVER_MARKERS.search(head):
        return None
    if sum(1 for line in nonblank if _SERVER_LINE.match(line)) * 2 >= len(nonblank):
        return None
    return _kind_by_markers(head, text) or _nccl_kind(nonblank)


def _clean(line: str) -> str:
    """Strip ANSI colours and a vLLM "(Worker_TP0 pid=..)" tag so prefixes can be matched at the start."""
    return _PROC_TAG.sub("", _ANSI.sub("", line))


def _kind_by_markers(head: str, full: str) -> str | None:
    """First kind whose markers occur; composite reports come first (check_env embeds topo -m, collect_env
    embeds nvidia-smi -L lines and the topology)."""
    if _CHECK_ENV_PYTHON.search(head) and _CHECK_ENV_AVAILABLE.search(head):
        return "sglang_check_env"
    if _TORCH_ENV.search(head):
        # the vLLM block comes after torch's fields, lscpu and pip lists: look at the whole report
        return "vllm_collect_env" if _VLLM_ENV.search(full) else "torch_collect_env"
    if _SMI_Q.search(head) or _SMI_Q_FIELDS.search(head):
        return "nvidia_smi_q"
    if _SMI_BANNER.search(head) or any(_SMI_ROW.match(line) for line in head.splitlines()):
        return "nvidia_smi"
    if _csv_header_index(head.splitlines()) is not None or _CSV_ROW.search(head):
        return "nvidia_smi_csv"
    if _TOPO.search(head):
        return "nvidia_topo"
    if _SMI_L.search(head):
        return "nvidia_smi_l"
    if _ROCM_SMI.search(head):
        return "rocm_smi"
    return None


def _nccl_kind(nonblank: list[str]) -> str | None:
    """An NCCL_DEBUG dump: NCCL lines are at least half of the head."""
    nccl = sum(1 for line in nonblank if _NCCL_LINE.search(line))
    return "nccl_debug" if nccl and nccl * 2 >= len(nonblank) else None


def _csv_header_index(lines: list[str]) -> int | None:
    """Index of a --query-gpu csv header ("index, name, memory.total [MiB], compute_cap"), if any."""
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 2 or not all(_CSV_FIELD.fullmatch(c) for c in cells):
            continue
        if any(_csv_field_name(c) in _CSV_KNOWN for c in cells):
            return i
    return None


def _csv_field_name(cell: str) -> str:
    return cell.split(" [", 1)[0].strip()


# ---------------------------------------------------------------------------------------------------------------
# Environment report parsing
# ---------------------------------------------------------------------------------------------------------------

# "GPU 0: NVIDIA H200 (UUID: GPU-...)" (-L, collect_env) and "GPU 0,1,2,3: NVIDIA ..." (check_env)
_GPU_LINE = regex.compile(r"(?:^|\s)GPU (?P<idx>\d+(?:\s*,\s*\d+)*)\s*:\s*(?P<name>\S.*?)\s*(?:\(UUID:[^)]*\))?\s*$")
_GPU_CONFIG_INLINE = regex.compile(r"GPU models and configuration\s*:\s*(?P<name>(?!GPU \d)\S.*?)\s*$")
_CHECK_ENV_CC = regex.compile(r"GPU \d+(?:,\d+)* Compute Capability\s*:\s*(\d+\.\d+)")
_NOT_A_NAME = regex.compile(r"^(?:Could not collect|N/A|None|Not Supported|\[N/A\])$", regex.I)

_SMI_MEM_USAGE = regex.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")
_Q_PRODUCT = regex.compile(r"^\s*Product Name\s*:\s*(.+?)\s*$")
_Q_ATTACHED = regex.compile(r"Attached GPUs\s*:\s*(\d+)")
_Q_TOTAL = regex.compile(r"^\s*Total\s*:\s*(\d+)\s*MiB")
# "Card Model" is a PCI device id (0x74a1), not a name
_ROCM_CARD = regex.compile(r"^GPU\[(\d+)\]\s*:\s*Card [Ss]eries\s*:\s*(.+?)\s*$")
_ROCM_MARKET = regex.compile(r"^GPU\[(\d+)\]\s*:\s*Marketing Name\s*:\s*(.+?)\s*$")
_ROCM_GPU = regex.compile(r"^GPU\[(\d+)\]")
_ROCM_VRAM = regex.compile(r"VRAM Total Memory \(B\)\s*:\s*(\d+)")

_DRIVER_PATTERNS = (
    regex.compile(r"CUDA Driver Versions?\s*:\s*([\d.]+)"),
    regex.compile(r"Nvidia driver version\s*:\s*([\d.]+)"),
    regex.compile(r"Driver Version\s*:\s*([\d.]+)"),
    regex.compile(r"ROCM Driver Version\s*:\s*(\S+)"),
)
_DRIVER_CUDA = regex.compile(r"\bCUDA Version\s*:\s*(\d+\.\d+)")
_NCCL_DRIVER_CUDA = regex.compile(r"cudaDriverVersion (\d{4,6})")
_CUDA_PATTERNS = (
    regex.compile(r"NVCC: Cuda compilation tools, release (\d+\.\d+)"),
    regex.compile(r"CUDA runtime version\s*:\s*(\d+\.\d+)"),  # "12.8.93" -> "12.8", like nvcc's release
)
_TORCH_PATTERNS = (
    regex.compile(r"PyTorch version\s*:\s*(\d\S*)"),
    regex.compile(r"(?:^|\s)PyTorch:\s*(\d\S*)"),
    regex.compile(r"\[pip3?\]\s+torch==(\d\S*)"),
)
_TORCH_CUDA = regex.compile(r"CUDA used to build PyTorch\s*:\s*(\d+\.\d+)")
_TORCH_CU_TAG = regex.compile(r"\+cu(\d{3})\b")
# the NCCL the engine loaded: NCCL's own banner, the engine's echo, torch's wheel
_NCCL_PATTERNS = (
    regex.compile(r"\bNCCL version (\d+\.\d+\.\d+)"),
    regex.compile(r"using nccl==(\d+\.\d+\.\d+)"),
    regex.compile(r"\[pip3?\]\s+nvidia-nccl-cu\d+==(\d+\.\d+\.\d+)"),
)
# a container's system NCCL (NCCL_VERSION=2.25.1-1): only when nothing above names one
_NCCL_CONTAINER = regex.compile(r"(?:^|\s)NCCL_VERSION=(\d+\.\d+\.\d+)")

# Engine-relevant packages: check_env "name: version" lines and collect_env "[pip3] name==version" lines.
_PACKAGES = (
    "sglang", "sgl-kernel", "sgl_kernel", "sglang-kernel", "sglang_kernel", "vllm", "flashinfer",
    "flashinfer-python", "flashinfer_python", "flashinfer-cubin", "flashinfer_cubin", "flashinfer-jit-cache",
    "flashinfer_jit_cache", "triton", "transformers", "torchao", "xgrammar", "flash-attn", "flash_attn",
    "xformers", "deep-gemm", "deep_gemm", "deep-ep", "deep_ep", "aiter", "lmcache", "nixl",
)
_PACKAGE_ALT = "|".join(regex.escape(p) for p in sorted(_PACKAGES, key=len, reverse=True))
_PACKAGE_LINE = regex.compile(rf"(?:^|\s)({_PACKAGE_ALT})\s*:\s*(\d[\w.+\-]*)")
_PIP_LINE = regex.compile(rf"\[(?:pip3?|conda)\]\s+({_PACKAGE_ALT})(?:==|\s+)(\d[\w.+\-]*)")
_VLLM_VERSION = regex.compile(r"vLLM Version\s*:\s*(\d[\w.+\-]*)")
_PACKAGE_KEYS = {"flashinfer_python": "flashinfer", "sglang_kernel": "sgl_kernel"}

_ENV_PREFIXES = (
    "NCCL_", "CUDA_", "VLLM_", "SGLANG_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_", "NVIDIA_", "CUBLAS_", "CUDNN_",
    "HIP_", "ROCM_", "HSA_", "RCCL_", "OMP_", "MKL_",
)
_SECRET_NAME = regex.compile(r"SECRET|TOKEN|PASSWORD|API|ACCESS|KEY", regex.I)
_ENV_ASSIGN = regex.compile(r"(?:^|\s)([A-Z][A-Z0-9_]*)=(\S*)")
_ENV_COLON = regex.compile(r"^\s*(CUDA_HOME|ROCM_HOME)\s*:\s*(\S+)")
_NCCL_ENV_ECHO = regex.compile(r"\b([A-Z][A-Z0-9_]+) set by environment to (.+?)\s*$")

_AMD_TELLS = regex.compile(
    r"ROCM available:\s*True|ROCM used to build PyTorch\s*:\s*(?!N/?A)\d|\+rocm\d|HIP runtime version\s*:\s*(?!N/?A)\d"
    r"|HIPCC:|ROCM Driver Version|AMD Topology|ROCm System Management Interface|GFX Version\s*:|\bRCCL version"
    r"|\(gfx\d{3,4}"
)
_NVIDIA_TELLS = regex.compile(
    r"NVIDIA-SMI|NVSMI LOG|(?<!Is )CUDA available:\s*True|Nvidia driver version\s*:\s*\d"
    r"|CUDA used to build PyTorch\s*:\s*\d"
    r"|\+cu\d{3}|CUDA Driver Version|NVIDIA Topology|\bNV\d{1,2}\b"
)

_DEVICE_GFX = (
    regex.compile(r"\((gfx[0-9a-f]{3,4}[a-z]?)[:)]", regex.I),
    regex.compile(r"GFX Version\s*:\s*(gfx[0-9a-f]{3,4}[a-z]?)", regex.I),
)
_NCCL_TRANSPORT = regex.compile(r"\d+\[[0-9a-f]+\] -> \d+\[[0-9a-f]+\] (?:\[\w+\] )?via (P2P|SHM|NET)")
_NCCL_DEVICE = regex.compile(r"^(?:\[[^\]]*\]\s*)?([\w.\-]+):\d+:\d+ \[(\d+)\] NCCL")
_NCCL_NVLINK = regex.compile(r"NVLS multicast support is available|\bMNNVL\b")


def parse_env_report(text: str) -> EnvFacts:
    """Extract hardware and software facts from an environment report (see the module contract)."""
    lines = [_clean(line).rstrip() for line in text.splitlines()]
    full = "\n".join(lines)
    facts = EnvFacts(kind=detect_report_kind(text))

    gpus = _collect_gpus(lines)
    facts.gpu_names = list(dict.fromkeys(name for _, name, _ in gpus))
    facts.gpu_name = _pick_name(gpus)
    facts.gpu_count = _gpu_count(lines, full, gpus)
    facts.memory_gib = _report_memory(lines)

    topology = parse_topology(lines)
    facts.interconnect = topology.interconnect or _nccl_interconnect(full)
    if topology.gpu_count and (facts.gpu_count or 0) < topology.gpu_count:
        facts.gpu_count = topology.gpu_count

    _fill_versions(facts, lines, full)
    facts.env = _collect_env(lines)
    facts.nccl_version = facts.nccl_version or _first((_NCCL_CONTAINER,), full)
    facts.cuda_version = facts.cuda_version or _cuda_from_env(facts.env)
    facts.vendor = _report_vendor(full, facts)
    _fill_capability(facts, full)
    return facts


def _first(patterns: Iterable[regex.Pattern], text: str) -> str | None:
    """Group 1 of the first pattern that matches (patterns are in order of trust)."""
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def _collect_gpus(lines: list[str]) -> list[tuple[int | None, str, str]]:
    """(index, name, source) for every GPU a report lists; index None when the line gives none."""
    gpus: list[tuple[int | None, str, str]] = []
    for line in lines:
        if match := _SMI_ROW.match(line):
            gpus.append((int(match["idx"]), match["name"], "smi_table"))
        elif match := _Q_PRODUCT.match(line):
            gpus.append((None, match.group(1), "smi_q"))
        elif match := _ROCM_CARD.match(line) or _ROCM_MARKET.match(line):
            gpus.append((int(match.group(1)), match.group(2), "rocm_smi"))
        elif "Compute Capability" not in line and (match := _GPU_LINE.search(line)):
            name = match["name"]
            if not _NOT_A_NAME.match(name):
                for idx in regex.split(r"\s*,\s*", match["idx"]):
                    gpus.append((int(idx), name, "gpu_line"))
        elif match := _GPU_CONFIG_INLINE.search(line):
            if not _NOT_A_NAME.match(match["name"]):
                gpus.append((None, match["name"], "inline"))
    gpus.extend(_csv_gpus(lines))
    return gpus


def _csv_gpus(lines: list[str]) -> list[tuple[int | None, str, str]]:
    """GPU rows of --query-gpu csv output, with or without its header line."""
    rows = _csv_rows(lines)
    return [(row.get("index_int"), row["name"], "csv") for row in rows if row.get("name")]


def _csv_rows(lines: list[str]) -> list[dict]:
    header_at = _csv_header_index(lines)
    rows: list[dict] = []
    if header_at is not None:
        fields = [_csv_field_name(c) for c in lines[header_at].split(",")]
        for line in lines[header_at + 1:]:
            cells = [c.strip() for c in line.split(",")]
            if len(cells) != len(fields):
                break
            rows.append(_csv_row(dict(zip(fields, cells))))
        return rows
    for line in lines:  # noheader: recognise cells by their form
        if _CSV_ROW.match(line):
            rows.append(_csv_row(_guess_csv_cells([c.strip() for c in line.split(",")])))
    return rows


def _guess_csv_cells(cells: list[str]) -> dict:
    row: dict = {}
    for pos, cell in enumerate(cells):
        if pos == 0 and cell.isdigit():
            row["index"] = cell
        elif regex.match(r"(?:NVIDIA|Tesla|Quadro)\b", cell):
            row["name"] = cell
        elif regex.fullmatch(r"\d+ MiB", cell):
            row.setdefault("memory.total", cell)
        elif _CC_VALUE.fullmatch(cell):
            row["compute_cap"] = cell
        elif regex.fullmatch(r"\d{3}\.\d+(?:\.\d+)?", cell):
            row["driver_version"] = cell
    return row


def _csv_row(cells: dict) -> dict:
    """Typed view of a csv row: index_int, name, memory_mib, compute_cap, driver_version."""
    row = dict(cells)
    if (cells.get("index") or "").isdigit():
        row["index_int"] = int(cells["index"])
    if "gpu_name" in cells and "name" not in cells:
        row["name"] = cells["gpu_name"]
    mem = regex.match(r"(\d+)", cells.get("memory.total", ""))
    row["memory_mib"] = int(mem.group(1)) if mem else None
    cc = cells.get("compute_cap", "")
    row["compute_cap"] = cc if _CC_VALUE.fullmatch(cc) else None
    return row


def _pick_name(gpus: list[tuple[int | None, str, str]]) -> str | None:
    """Most common full name; a truncated table name only when nothing better is printed."""
    full = [name for _, name, _ in gpus if not name.endswith(_TRUNCATION)]
    names = full or [name for _, name, _ in gpus]
    return Counter(names).most_common(1)[0][0] if names else None


def _gpu_count(lines: list[str], full: str, gpus) -> int | None:
    """Distinct indices across every listing (§0); -q's "Attached GPUs" and NCCL devices when higher."""
    counts = [len({idx for idx, _, _ in gpus if idx is not None})]
    if match := _Q_ATTACHED.search(full):
        counts.append(int(match.group(1)))
    counts.append(len({m.group(1) for line in lines if (m := _ROCM_GPU.match(line))}))
    counts.append(len({(m.group(1), m.group(2)) for line in lines if (m := _NCCL_DEVICE.match(line))}))
    best = max(counts)
    return best or None


def _report_memory(lines: list[str]) -> float | None:
    """Per-GPU memory total in GiB from nvidia-smi (MiB) or rocm-smi (bytes); None when not printed."""
    for i, line in enumerate(lines):
        if _SMI_ROW.match(line):
            for follow in lines[i + 1:i + 3]:
                if match := _SMI_MEM_USAGE.search(follow):
                    return round(int(match.group(2)) / 1024, 2)
        if "FB Memory Usage" in line:
            for follow in lines[i + 1:i + 5]:
                if match := _Q_TOTAL.match(follow):
                    return round(int(match.group(1)) / 1024, 2)
        if match := _ROCM_VRAM.search(line):
            return round(int(match.group(1)) / 2**30, 2)
    for row in _csv_rows(lines):
        if row.get("memory_mib"):
            return round(row["memory_mib"] / 1024, 2)
    return None


def _fill_versions(facts: EnvFacts, lines: list[str], full: str) -> None:
    facts.driver_version = _first(_DRIVER_PATTERNS, full) or _csv_value(lines, "driver_version")
    facts.driver_cuda = _first((_DRIVER_CUDA,), full)
    if facts.driver_cuda is None and (match := _NCCL_DRIVER_CUDA.search(full)):
        value = int(match.group(1))  # 12080 -> 12.8
        facts.driver_cuda = f"{value // 1000}.{value % 1000 // 10}"
    facts.cuda_version = _first(_CUDA_PATTERNS, full)
    facts.torch_version = _first(_TORCH_PATTERNS, full)
    facts.torch_cuda = _first((_TORCH_CUDA,), full)
    if facts.torch_cuda is None and facts.torch_version and (match := _TORCH_CU_TAG.search(facts.torch_version)):
        facts.torch_cuda = _digits_to_cc(match.group(1))  # cu129 -> 12.9 (same digit rule as sm_121)
    facts.nccl_version = _first(_NCCL_PATTERNS, full)
    facts.engine_versions = _engine_versions(lines)


def _csv_value(lines: list[str], key: str) -> str | None:
    for row in _csv_rows(lines):
        if row.get(key):
            return row[key]
    return None


def _engine_versions(lines: list[str]) -> dict[str, str]:
    """First version seen per package; "Module Not Found" lines are skipped by the version pattern."""
    versions: dict[str, str] = {}
    for line in lines:
        if match := _VLLM_VERSION.search(line):
            key, value = "vllm", match.group(1)
        elif match := _PIP_LINE.search(line) or _PACKAGE_LINE.search(line):
            key, value = match.group(1).lower().replace("-", "_"), match.group(2)
        else:
            continue
        # flat-era vLLM printed "0.5.4@<commit>"
        versions.setdefault(_PACKAGE_KEYS.get(key, key), value.split("@", 1)[0])
    return versions


def _collect_env(lines: list[str]) -> dict[str, str]:
    """NCCL_*/CUDA_*/VLLM_*/... variables: "NAME=value" lines, check_env's CUDA_HOME, NCCL's echo lines.
    Names that look secret are dropped even if a report kept them. First occurrence wins."""
    env: dict[str, str] = {}

    def keep(name: str, value: str) -> None:
        if name.startswith(_ENV_PREFIXES) and not _SECRET_NAME.search(name):
            env.setdefault(name, value)

    for line in lines:
        if match := _NCCL_ENV_ECHO.search(line):
            value = match.group(2)
            # numeric parameters are echoed with a trailing period ("to 1."), strings without
            keep(match.group(1), value[:-1] if regex.fullmatch(r"-?\d+\.", value) else value)
            continue
        if match := _ENV_COLON.match(line):
            keep(match.group(1), match.group(2))
            continue
        for match in _ENV_ASSIGN.finditer(line):
            keep(match.group(1), match.group(2))
    return env


def _cuda_from_env(env: dict[str, str]) -> str | None:
    """Container tell CUDA_VERSION=12.8.1 -> "12.8" when nothing better names the toolkit."""
    match = regex.match(r"(\d+\.\d+)", env.get("CUDA_VERSION", ""))
    return match.group(1) if match else None


def _report_vendor(full: str, facts: EnvFacts) -> str | None:
    """Vendor first (§0): any ROCm tell or AMD name makes it AMD, whatever CUDA-looking numbers say."""
    names = " ".join(facts.gpu_names)
    if _AMD_TELLS.search(full) or _AMD_WORDS.search(names) or facts.kind == "rocm_smi":
        return "amd"
    if _NVIDIA_TELLS.search(full) or _NVIDIA_WORDS.search(names):
        return "nvidia"
    if facts.kind in ("nvidia_smi", "nvidia_smi_q", "nvidia_smi_l", "nvidia_smi_csv", "nvidia_topo", "nccl_debug"):
        return "nvidia"
    return None


def _fill_capability(facts: EnvFacts, full: str) -> None:
    """Compute capability and SM from the report, else from the catalog; memory from the catalog if absent."""
    model = lookup_gpu(facts.gpu_name) if facts.gpu_name else None
    if model and facts.vendor and model.vendor != facts.vendor:
        model = None  # a name the catalog reads as another vendor's: trust the vendor tells
    from_catalog: list[str] = []
    if facts.vendor == "amd":
        # the device's own gfx target (torch name suffix, rocm-smi); build lists like PYTORCH_ROCM_ARCH are not it
        cc = _first(_DEVICE_GFX, full)
        cc = cc.lower() if cc else None
        if cc is None and model:
            cc = model.cc
            from_catalog.append("cc")
        if cc is None:
            # torch's pseudo-CC (check_env "Compute Capability: 9.4") names a gfx target only for CDNA parts
            pseudo = _CHECK_ENV_CC.search(full)
            cc = _AMD_PSEUDO_CC.get(pseudo.group(1)) if pseudo else None
        facts.compute_capability, facts.sm = cc, None
    else:
        cc = _first((_CHECK_ENV_CC,), full) or _csv_value(full.splitlines(), "compute_cap")
        if cc is None and model:
            cc = model.cc
            from_catalog.append("cc")
        facts.compute_capability, facts.sm = cc, cc_to_sm(cc)
    if facts.memory_gib is None and model:
        facts.memory_gib = model.memory_gib
        from_catalog.append("memory")
    facts.facts_source = facts.kind or "unknown"
    if from_catalog:
        facts.facts_source += f" + catalog ({', '.join(from_catalog)} of {model.name})"


def _nccl_interconnect(full: str) -> str | None:
    """NCCL alone: NVLS/MNNVL mean NVSwitch; only-SHM local transports mean no P2P, read as PCIe unless the
    user disabled P2P (then the wiring is unknown). P2P transports say nothing about NVLink vs PCIe (§8)."""
    if _NCCL_NVLINK.search(full):
        return "nvlink"
    transports = {m.group(1) for m in _NCCL_TRANSPORT.finditer(full)} - {"NET"}
    if transports == {"SHM"} and not regex.search(r"NCCL_P2P_DISABLE set by environment to 1", full):
        return "pcie"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Topology matrices (nvidia-smi topo -m, rocm-smi --showtopotype, amd "Link Type" tables)
# ---------------------------------------------------------------------------------------------------------------


class Topology(NamedTuple):
    """GPU rows of the matrices found, the interconnect they imply, and the widest NVLink bond (NV#)."""

    gpu_count: int | None
    interconnect: str | None
    max_nvlinks: int | None


_DEVICE_HEAD = regex.compile(r"^(?:GPU\d+|NIC\d+|mlx\d+_\d+|[a-z]+\d*_\d+)$")
_PCIE_CELLS = {"PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "PCIE", "PCI"}
_NV_CELL = regex.compile(r"^NV(\d+)$")


def parse_topology(lines: list[str]) -> Topology:
    """Read every GPU-by-GPU matrix in the lines and classify the links between GPU pairs (§4, §9).

    any NV# between GPUs -> "nvlink" when every pair has one, else "partial-nvlink"; XGMI -> "xgmi";
    only PIX/PXB/PHB/NODE/SYS/SOC/PCIE -> "pcie". Numeric matrices (rocm weights, hops) and P2P
    capability tables (OK/GNS/CNS) carry no link type and are ignored.
    """
    pairs: dict[frozenset, str] = {}
    gpus: set[int] = set()
    max_nv: int | None = None
    columns: list[str] = []
    for line in lines:
        tokens = line.split()
        if not tokens or not regex.fullmatch(r"GPU\d+", tokens[0]):
            continue
        if len(tokens) == 1 or _DEVICE_HEAD.match(tokens[1]) or tokens[1] == "CPU":
            columns = _header_columns(tokens)
            continue
        if not columns:
            continue
        row = int(tokens[0][3:])
        gpus.add(row)
        for column, cell in zip(columns, tokens[1:]):
            if not column.startswith("GPU") or column == tokens[0]:
                continue
            link = _link_class(cell)
            if link is None:
                continue
            pair = frozenset((row, int(column[3:])))
            pairs[pair] = _stronger(pairs.get(pair), link)
            if nv := _NV_CELL.match(cell):
                max_nv = max(max_nv or 0, int(nv.group(1)))
    return Topology(len(gpus) or None, _classify(pairs), max_nv)


def _header_columns(tokens: list[str]) -> list[str]:
    """Device column heads of a matrix header, up to "CPU Affinity" and friends."""
    columns = []
    for token in tokens:
        if not _DEVICE_HEAD.match(token):
            break
        columns.append(token)
    return columns


def _link_class(cell: str) -> str | None:
    if _NV_CELL.match(cell):
        return "nvlink"
    if cell == "XGMI":
        return "xgmi"
    if cell in _PCIE_CELLS:
        return "pcie"
    return None


_LINK_RANK = {"pcie": 0, "xgmi": 1, "nvlink": 2}


def _stronger(old: str | None, new: str) -> str:
    """A pair seen in several matrices keeps its best link (a pcie "hops" table must not hide NVLink)."""
    return new if old is None or _LINK_RANK[new] > _LINK_RANK[old] else old


def _classify(pairs: dict[frozenset, str]) -> str | None:
    if not pairs:
        return None
    links = set(pairs.values())
    if "nvlink" in links:
        return "nvlink" if links == {"nvlink"} else "partial-nvlink"
    if "xgmi" in links:
        return "xgmi"
    return "pcie"


# ---------------------------------------------------------------------------------------------------------------
# Hints inside server logs
# ---------------------------------------------------------------------------------------------------------------

_MOE_DEVICE = regex.compile(r"device_name=([^,.'\"\]\s/]+)")
_DIFFERENT_DEVICES = regex.compile(r"Detected different devices in the system:\s*(.+?)\.?\s*(?:Please|$)")
_TOTAL_CAPACITY = regex.compile(r"has a total capac(?:i)?ty of (\d+(?:\.\d+)?) GiB|(\d+(?:\.\d+)?) GiB total capacity")
_FREE_MEMORY = regex.compile(
    r"Free memory on device \(\d+(?:\.\d+)?/(\d+(?:\.\d+)?) GiB\)|total_gpu_memory \((\d+(?:\.\d+)?)\s*GiB\)"
)
_FLASHINFER_ARCH = regex.compile(r"flashinfer[\w\-]*/(?:[\w.\-]+/)*?(\d{2,3})[af]?/")
_DEVICE_CC = regex.compile(r"with CUDA capability sm_(\d{2,3})\b")
_ARCH_STRING = regex.compile(r"(?<![A-Za-z0-9_])(?:sm_?|compute_)(\d{2,3})[af]?(?![0-9])")
_CC_PHRASE = regex.compile(r"compute capability:?\s+\(?(\d{1,2})[.,]\s*(\d)\)?", regex.I)
_CC_REQUIREMENT = regex.compile(r">=|<=|>|<|at least|minimum|requires?|only support|or higher|or newer", regex.I)
_ROCM_TELL = regex.compile(r"\bROCm\b|\brocm\.py:|\bHIP error\b|\bhipError\w*|\bRCCL\b|torch\.version\.hip")

# priority of hint sources when they disagree: named devices first, weak vendor tells last
_HOW_RANK = {
    "moe_config": 0, "device_string": 1, "different_devices": 1, "nvidia_smi": 2,
    "gfx_target": 3, "flashinfer_arch": 3, "device_capability": 3, "compute_capability": 4,
    "amdsmi": 5, "rocm": 5, "arch_string": 6, "total_capacity": 7, "free_memory": 8,
}


def gpu_hints_from_text(lines: list[str], catalog: Iterable[GpuModel] | None = None) -> list[Hint]:
    """Hardware hints in (prefiltered) server log lines, in line order."""
    name_pattern = _name_pattern(_models(catalog))
    hints: list[Hint] = []
    for i, raw in enumerate(lines):
        line = _ANSI.sub("", raw)
        hints.extend(Hint(v, how, i) for v, how in _line_hints(line, name_pattern))
    return hints


def _line_hints(line: str, name_pattern: regex.Pattern) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    found += [(_config_name(m.group(1)), "moe_config") for m in _MOE_DEVICE.finditer(line)]
    if match := _DIFFERENT_DEVICES.search(line):
        found += [(name.strip(), "different_devices") for name in match.group(1).split(",") if name.strip()]
    if match := _SMI_ROW.match(line.strip()):
        found.append((match["name"], "nvidia_smi"))
    elif _SMI_BANNER.search(line):
        found.append(("nvidia", "nvidia_smi"))
    if not any(how in ("moe_config", "different_devices", "nvidia_smi") for _, how in found):
        found += [(_config_name(m.group(0)), "device_string") for m in name_pattern.finditer(line)]
    found += _memory_hints(line)
    found += _arch_hints(line)
    found += [(m.group(1).lower(), "gfx_target") for m in _GFX_ANYWHERE.finditer(line)]
    if "Failed to import amdsmi" in line:
        found.append(("amd", "amdsmi"))
    elif _ROCM_TELL.search(line):
        found.append(("amd", "rocm"))
    return list(dict.fromkeys(found))


def _config_name(token: str) -> str:
    """MoE config token -> printed name: NVIDIA names contain no "_", so "_" -> " " restores them (§3);
    SGLang's "_down" suffix (down-projection configs) is not part of the name."""
    token = regex.sub(r"_down$", "", token)
    return token.replace("_", " ")


def _memory_hints(line: str) -> list[tuple[str, str]]:
    found = []
    for match in _TOTAL_CAPACITY.finditer(line):
        found.append((f"{match.group(1) or match.group(2)} GiB", "total_capacity"))
    for match in _FREE_MEMORY.finditer(line):
        found.append((f"{match.group(1) or match.group(2)} GiB", "free_memory"))
    return found


def _arch_hints(line: str) -> list[tuple[str, str]]:
    """Device arch from FlashInfer cache folders ("flashinfer_autotune_cache/0.6.13/121a/"), torch's
    "with CUDA capability sm_120", "compute capability 8.6", or a lone sm_XX/compute_XX string. A line
    listing several different archs (TORCH_CUDA_ARCH_LIST, "supports CUDA capabilities sm_50 sm_60 ...")
    names what a build supports, not the device, so it only counts through the explicit phrases."""
    found = []
    if match := _FLASHINFER_ARCH.search(line):
        found.append((_digits_to_cc(match.group(1)), "flashinfer_arch"))
    if match := _DEVICE_CC.search(line):
        found.append((_digits_to_cc(match.group(1)), "device_capability"))
    if (match := _CC_PHRASE.search(line)) and not _CC_REQUIREMENT.search(line):
        found.append((f"{int(match.group(1))}.{match.group(2)}", "compute_capability"))
    if not found:
        archs = {m.group(1) for m in _ARCH_STRING.finditer(line)}
        if len(archs) == 1:
            found.append((_digits_to_cc(archs.pop()), "arch_string"))
    return found


@functools.lru_cache(maxsize=8)
def _name_pattern(models: tuple[GpuModel, ...]) -> regex.Pattern:
    """One alternation of every vendor-prefixed catalog name/alias ("NVIDIA H100 80GB HBM3", "AMD_Radeon_R9700"),
    longest first, spaces matching " " or "_", on word boundaries ("NVIDIA H20" is not found in "NVIDIA H20-3e")."""
    names = set()
    for model in models:
        for raw in (model.name, *model.aliases):
            words = raw.replace("_", " ").split()
            if words and words[0].lower() in ("nvidia", "amd") and not raw.endswith(_TRUNCATION):
                names.add(tuple(words))
    parts = sorted(("[ _]".join(regex.escape(w) for w in words) for words in names), key=len, reverse=True)
    return regex.compile(rf"(?<![\w-])(?:{'|'.join(parts)})(?![\w-])", regex.I)


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
    models = _models(catalog)
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
        ctx = _context_from_model(model, "explicit", name=text if text.endswith(_TRUNCATION) else None)
    elif _CC_VALUE.fullmatch(text) or _EXPLICIT_SM.match(text):
        cc = text if _CC_VALUE.fullmatch(text) else _digits_to_cc(_EXPLICIT_SM.match(text).group(1))
        ctx = GpuContext(cc=cc, sm=cc_to_sm(cc), vendor="nvidia", family=family_of("nvidia", cc), source="explicit")
    elif _GFX_VALUE.fullmatch(text):
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
    truncated = bool(facts.gpu_name and facts.gpu_name.endswith(_TRUNCATION))
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
    ranked = sorted(hints, key=lambda h: (_HOW_RANK.get(h.how, 9), h.line_index))
    vendor, vendor_hint = _hint_vendor(ranked, models)
    memory_hint = next((h for h in ranked if h.kind == "memory"), None)
    memory = float(memory_hint.value.split()[0]) if memory_hint else None

    for hint in ranked:
        if hint.kind != "name":
            continue
        model = lookup_gpu(hint.value, models)
        if model and (vendor is None or model.vendor == vendor):
            truncated = hint.value.endswith(_TRUNCATION)
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
