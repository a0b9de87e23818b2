"""The environment-report and hardware-hint patterns (parsers/env_reports.toml), compiled.

Contract: ``report_patterns(path=None)`` reads the data file (the packaged one when
``path`` is None, read once per process), checks that every section and key the gpus
modules use is present and that every regex compiles in the ``regex`` dialect, and returns
a ``ReportPatterns`` whose sections are read-only mappings (regex strings compiled; lists
of regexes compiled in order; ``{packages}`` in a pattern replaced by the alternation of
``report.packages``). Problems are collected and raised together as one ``GrammarError``
naming the file and key, like the grammar loader's.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import regex

from ..formats.grammar import Problem, raise_problems
from ..resources import data_path

#: values that are data, not regexes
_NOT_REGEX = {"head_lines", "csv_known", "packages", "package_keys", "env_prefixes", "pcie_cells", "prefilter",
              "rank"}
#: keys every section must have (what the gpus modules read)
REQUIRED = {
    "detect": ("head_lines", "server_markers", "server_line", "nccl_line", "proc_tag", "check_env_python",
               "check_env_available", "torch_env", "vllm_env", "smi_q", "smi_q_fields", "smi_banner", "smi_row",
               "smi_l", "csv_field", "csv_row", "topo", "rocm_smi", "csv_known"),
    "report": ("gpu_line", "gpu_config_inline", "check_env_cc", "not_a_name", "smi_mem_usage", "q_product",
               "q_attached", "q_total", "rocm_card", "rocm_market", "rocm_gpu", "rocm_vram", "driver",
               "driver_cuda", "nccl_driver_cuda", "cuda", "torch", "torch_cuda", "torch_cu_tag", "nccl",
               "nccl_container", "vllm_version", "packages", "package_keys", "package_line", "pip_line",
               "env_prefixes", "env_assign", "env_colon", "nccl_env_echo", "numeric_echo", "device_gfx",
               "nccl_transport", "nccl_device", "nccl_nvlink", "nccl_p2p_disabled", "csv_name_cell",
               "csv_memory_cell", "csv_driver_cell"),
    "vendors": ("amd_tells", "nvidia_tells", "amd_words", "nvidia_words"),
    "topology": ("device_head", "nv_cell", "gpu_token", "pcie_cells"),
    "hints": ("prefilter", "moe_device", "different_devices", "total_capacity", "free_memory", "flashinfer_arch",
              "device_cc", "arch_string", "cc_phrase", "cc_requirement", "rocm_tell", "gfx_anywhere",
              "torch_gfx_suffix", "moe_down_suffix", "amdsmi_tell", "rank"),
}


@dataclass(frozen=True)
class ReportPatterns:
    detect: Mapping
    report: Mapping
    vendors: Mapping
    topology: Mapping
    hints: Mapping


def _compile(text: str, where: str, problems: list[Problem]):
    try:
        return regex.compile(text)
    except regex.error as exc:
        pos = getattr(exc, "pos", None)
        caret = f"\n    {text}" + (f"\n    {' ' * pos}^" if pos is not None else "")
        problems.append(Problem(where, f"invalid regex: {exc}{caret}"))
        return None


def _section(name: str, raw: dict, fname: str, packages: str, problems: list[Problem]) -> Mapping:
    out: dict = {}
    for key in REQUIRED[name]:
        if key not in raw:
            problems.append(Problem(f"{fname} [{name}]", f"missing key '{key}'"))
    for key, value in raw.items():
        where = f"{fname} [{name}] {key}"
        if key in _NOT_REGEX or isinstance(value, (int, float)):
            out[key] = MappingProxyType(dict(value)) if isinstance(value, dict) else \
                tuple(value) if isinstance(value, list) else value
        elif isinstance(value, str):
            out[key] = _compile(value.replace("{packages}", packages), where, problems)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = tuple(_compile(v, f"{where} #{i + 1}", problems) for i, v in enumerate(value))
        else:
            problems.append(Problem(where, "must be a regex string or a list of them"))
    return MappingProxyType(out)


def read_report_patterns(path: Path) -> ReportPatterns:
    fname = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise_problems([Problem(str(path), "environment-report patterns not found")])
    except tomllib.TOMLDecodeError as exc:
        raise_problems([Problem(fname, f"not valid TOML: {exc}")])
    problems: list[Problem] = []
    for name in REQUIRED:
        if not isinstance(data.get(name), dict):
            problems.append(Problem(fname, f"missing table [{name}]"))
    raise_problems(problems)
    names = data["report"].get("packages", [])
    packages = "|".join(regex.escape(p) for p in sorted(names, key=len, reverse=True))
    sections = {name: _section(name, data[name], fname, packages, problems) for name in REQUIRED}
    raise_problems(problems)
    return ReportPatterns(**sections)


@functools.lru_cache(maxsize=2)
def report_patterns(path: str | None = None) -> ReportPatterns:
    return read_report_patterns(Path(path) if path else data_path("parsers/env_reports.toml"))
