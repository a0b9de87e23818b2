"""Environment reports: which kind a text is, and the hardware/software facts it states.

Contract (pure functions; patterns from parsers/env_reports.toml)::

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

    parse_topology(lines) -> Topology

Formats follow shared/docs/env-reports.md (section numbers cited as §n).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

import regex

from .catalog import AMD_PSEUDO_CC, CC_VALUE, TRUNCATION, cc_to_sm, digits_to_cc, lookup_gpu
from .report_patterns import report_patterns

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
#: ANSI colour escapes (stripped before matching line starts)
ANSI = regex.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_P = report_patterns()  # parsers/env_reports.toml, compiled
_AMD_TELLS = _P.vendors["amd_tells"]
_AMD_WORDS = _P.vendors["amd_words"]
_CHECK_ENV_AVAILABLE = _P.detect["check_env_available"]
_CHECK_ENV_CC = _P.report["check_env_cc"]
_CHECK_ENV_PYTHON = _P.detect["check_env_python"]
_CSV_FIELD = _P.detect["csv_field"]
_CSV_KNOWN = _P.detect["csv_known"]
_CSV_ROW = _P.detect["csv_row"]
_CUDA_PATTERNS = _P.report["cuda"]
_DEVICE_GFX = _P.report["device_gfx"]
_DEVICE_HEAD = _P.topology["device_head"]
_DRIVER_CUDA = _P.report["driver_cuda"]
_DRIVER_PATTERNS = _P.report["driver"]
_ENV_ASSIGN = _P.report["env_assign"]
_ENV_COLON = _P.report["env_colon"]
_ENV_PREFIXES = _P.report["env_prefixes"]
_GPU_CONFIG_INLINE = _P.report["gpu_config_inline"]
_GPU_LINE = _P.report["gpu_line"]
_NCCL_CONTAINER = _P.report["nccl_container"]
_NCCL_DEVICE = _P.report["nccl_device"]
_NCCL_DRIVER_CUDA = _P.report["nccl_driver_cuda"]
_NCCL_ENV_ECHO = _P.report["nccl_env_echo"]
_NCCL_LINE = _P.detect["nccl_line"]
_NCCL_NVLINK = _P.report["nccl_nvlink"]
_NCCL_PATTERNS = _P.report["nccl"]
_NCCL_TRANSPORT = _P.report["nccl_transport"]
_NOT_A_NAME = _P.report["not_a_name"]
_NVIDIA_TELLS = _P.vendors["nvidia_tells"]
_NVIDIA_WORDS = _P.vendors["nvidia_words"]
_NV_CELL = _P.topology["nv_cell"]
_PACKAGE_KEYS = _P.report["package_keys"]
_PACKAGE_LINE = _P.report["package_line"]
_PCIE_CELLS = _P.topology["pcie_cells"]
_PIP_LINE = _P.report["pip_line"]
_PROC_TAG = _P.detect["proc_tag"]
_Q_ATTACHED = _P.report["q_attached"]
_Q_PRODUCT = _P.report["q_product"]
_Q_TOTAL = _P.report["q_total"]
_ROCM_CARD = _P.report["rocm_card"]
_ROCM_GPU = _P.report["rocm_gpu"]
_ROCM_MARKET = _P.report["rocm_market"]
_ROCM_SMI = _P.detect["rocm_smi"]
_ROCM_VRAM = _P.report["rocm_vram"]
_SERVER_LINE = _P.detect["server_line"]
_SERVER_MARKERS = _P.detect["server_markers"]
_SMI_BANNER = _P.detect["smi_banner"]
_SMI_L = _P.detect["smi_l"]
_SMI_MEM_USAGE = _P.report["smi_mem_usage"]
_SMI_Q = _P.detect["smi_q"]
_SMI_Q_FIELDS = _P.detect["smi_q_fields"]
_SMI_ROW = _P.detect["smi_row"]
_TOPO = _P.detect["topo"]
_TORCH_CUDA = _P.report["torch_cuda"]
_TORCH_CU_TAG = _P.report["torch_cu_tag"]
_TORCH_ENV = _P.detect["torch_env"]
_TORCH_PATTERNS = _P.report["torch"]
_VLLM_ENV = _P.detect["vllm_env"]
_VLLM_VERSION = _P.report["vllm_version"]
_HEAD_LINES = _P.detect["head_lines"]
_NUMERIC_ECHO = _P.report["numeric_echo"]
_NCCL_P2P_DISABLED = _P.report["nccl_p2p_disabled"]
_CSV_NAME_CELL = _P.report["csv_name_cell"]
_CSV_MEMORY_CELL = _P.report["csv_memory_cell"]
_CSV_DRIVER_CELL = _P.report["csv_driver_cell"]
_GPU_TOKEN = _P.topology["gpu_token"]


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



# ---------------------------------------------------------------------------------------------------------------
# Report kind detection
# ---------------------------------------------------------------------------------------------------------------




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
    return _PROC_TAG.sub("", ANSI.sub("", line))


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





_SECRET_NAME = regex.compile(r"SECRET|TOKEN|PASSWORD|API|ACCESS|KEY", regex.I)




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
        elif _CSV_NAME_CELL.match(cell):
            row["name"] = cell
        elif _CSV_MEMORY_CELL.fullmatch(cell):
            row.setdefault("memory.total", cell)
        elif CC_VALUE.fullmatch(cell):
            row["compute_cap"] = cell
        elif _CSV_DRIVER_CELL.fullmatch(cell):
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
    row["compute_cap"] = cc if CC_VALUE.fullmatch(cc) else None
    return row


def _pick_name(gpus: list[tuple[int | None, str, str]]) -> str | None:
    """Most common full name; a truncated table name only when nothing better is printed."""
    full = [name for _, name, _ in gpus if not name.endswith(TRUNCATION)]
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
        facts.torch_cuda = digits_to_cc(match.group(1))  # cu129 -> 12.9 (same digit rule as sm_121)
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
            keep(match.group(1), value[:-1] if _NUMERIC_ECHO.fullmatch(value) else value)
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
            cc = AMD_PSEUDO_CC.get(pseudo.group(1)) if pseudo else None
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
    if transports == {"SHM"} and not _NCCL_P2P_DISABLED.search(full):
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
        if not tokens or not _GPU_TOKEN.fullmatch(tokens[0]):
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
