"""Tests of the hardware layer: GPU catalog, name lookup, environment reports, log hints, resolution.

Report examples are small inline texts assembled from the formats in shared/docs/env-reports.md (made-up
values); hints are also checked on real server logs of shared/corpus/real/ (skipped when that folder is absent).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logsleuth.gpus import catalog, env_report, hints, resolve


class hw:  # the four jobs of the former gpus/hardware.py, under the names these tests use
    load_catalog, lookup_gpu, cc_to_sm, family_of = (catalog.load_catalog, catalog.lookup_gpu, catalog.cc_to_sm,
                                                     catalog.family_of)
    VENDORS, CATALOG_INTERCONNECTS = catalog.VENDORS, catalog.CATALOG_INTERCONNECTS
    REPORT_KINDS, detect_report_kind, parse_env_report, parse_topology = (
        env_report.REPORT_KINDS, env_report.detect_report_kind, env_report.parse_env_report, env_report.parse_topology)
    Hint, gpu_hints_from_text = hints.Hint, hints.gpu_hints_from_text
    GpuContext, resolve_gpu = resolve.GpuContext, resolve.resolve_gpu
from logsleuth.errors import GrammarError
from logsleuth.resources import data_path

from support.paths import ROOT  # noqa: E402
# shared/ sits beside the checkout, for sessions and CI alike (conftest honours LOGSLEUTH_CORPUS)
from support.paths import CORPUS  # noqa: E402
ENV_SAMPLES = ROOT / "tests" / "samples" / "env"


def corpus_lines(name: str) -> list[str]:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} not available")
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def report(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


# ---------------------------------------------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------------------------------------------


def test_catalog_loads_from_packaged_data():
    path = data_path("parsers/gpus.toml")
    assert path.is_file()
    catalog = hw.load_catalog()
    assert len(catalog) >= 30
    assert hw.load_catalog(path) == catalog


def test_catalog_entries_are_well_formed():
    catalog = hw.load_catalog()
    names = [m.name for m in catalog]
    assert len(names) == len(set(names))
    for model in catalog:
        assert model.vendor in hw.VENDORS
        assert model.interconnect in hw.CATALOG_INTERCONNECTS
        assert model.memory_gib > 1
        assert model.arch
        # the family the rules use agrees with what the CC / gfx target implies
        assert hw.family_of(model.vendor, model.cc) == model.family, model.name
        if model.vendor == "nvidia":
            assert model.sm == hw.cc_to_sm(model.cc)
        else:
            assert model.cc.startswith("gfx") and model.sm == ""


def test_every_name_and_alias_finds_its_own_model():
    for model in hw.load_catalog():
        for text in (model.name, *model.aliases):
            found = hw.lookup_gpu(text)
            assert found is not None and found.name == model.name, (text, found and found.name)


def test_catalog_covers_the_documented_models():
    names = {m.name for m in hw.load_catalog()}
    for expected in (
        "NVIDIA GB10", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA GeForce RTX 5090", "NVIDIA B200",
        "NVIDIA B300 SXM6 AC", "NVIDIA H100 80GB HBM3", "NVIDIA H20-3e", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S",
        "NVIDIA GeForce RTX 3090", "NVIDIA GH200 480GB", "NVIDIA RTX A6000", "AMD Instinct MI300X",
        "AMD Instinct MI355X", "AMD Radeon AI PRO R9700",
    ):
        assert expected in names


def test_broken_catalog_names_file_entry_and_key(tmp_path):
    bad = tmp_path / "gpus.toml"
    bad.write_text(
        '[[gpu]]\nname = "NVIDIA X"\naliases = []\nvendor = "nvidia"\ncc = "12.0"\nsm = "SM100"\n'
        'arch = "Blackwell"\nmemory_gib = 10.0\ninterconnect = "pcie"\nfamily = "sm120"\n'
    )
    with pytest.raises(GrammarError, match=r"gpus.toml \[\[gpu\]\] #1 \(NVIDIA X\): 'sm' must be 'SM120'"):
        hw.load_catalog(bad)
    bad.write_text('[[gpu]]\nname = "AMD Y"\n')
    with pytest.raises(GrammarError, match="missing key 'aliases'"):
        hw.load_catalog(bad)


def test_data_path_rejects_escapes():
    with pytest.raises(ValueError):
        data_path("../etc/passwd")
    with pytest.raises(ValueError):
        data_path("/etc/passwd")


def test_module_is_headless():
    code = "import sys, logsleuth.gpus.resolve; print(sorted(m for m in ('typer', 'rich') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NVIDIA RTX PRO 6000 Blac...", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
        ("NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
        ("NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition",
         "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"),
        ("nvidia rtx pro 6000 blackwell workstation edition", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
        ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
        ("NVIDIA GB10", "NVIDIA GB10"),
        ("NVIDIA_GB10", "NVIDIA GB10"),
        ("H100", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA H100", "NVIDIA H100 80GB HBM3"),
        ("H100_80GB_HBM3", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA_H20-3e", "NVIDIA H20-3e"),
        ("NVIDIA H20", "NVIDIA H20"),
        ("NVIDIA_A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
        ("NVIDIA RTX 6000 Ada Gene...", "NVIDIA RTX 6000 Ada Generation"),
        ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"),
        ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120", "NVIDIA GeForce RTX 5090"),
        ("NVIDIA B300 SXM6 AC", "NVIDIA B300 SXM6 AC"),
        ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)", "AMD Instinct MI300X"),
        ("AMD Instinct MI300X OAM", "AMD Instinct MI300X"),
        ("AMD_Instinct_MI300X_HF", "AMD Instinct MI300X"),
        ("AMD_Instinct_MI350_OAM", "AMD Instinct MI350X"),
        ("AMD Radeon AI PRO R9700", "AMD Radeon AI PRO R9700"),
        ("AMD_Radeon_R9700", "AMD Radeon AI PRO R9700"),
        ("AMD Radeon Graphics (gfx1201)", "AMD Radeon AI PRO R9700"),
    ],
)
def test_lookup_real_strings(text, expected):
    model = hw.lookup_gpu(text)
    assert model is not None and model.name == expected


@pytest.mark.parametrize("text", ["12.0", "9.4", "", "   ", "Tesla T4", "NVIDIA Graphics Device", "gfx942", "banana"])
def test_lookup_refuses_what_it_cannot_name(text):
    # gfx942 is MI300X, MI325X and MI308X: a target alone does not name one model
    assert hw.lookup_gpu(text) is None


def test_lookup_never_turns_amd_into_sm120():
    model = hw.lookup_gpu("AMD Radeon AI PRO R9700 (gfx1201)")
    assert model.vendor == "amd" and model.sm == "" and model.cc == "gfx1201"


def test_cc_helpers():
    assert hw.cc_to_sm("12.0") == "SM120"
    assert hw.cc_to_sm("10.3") == "SM103"
    assert hw.cc_to_sm("9.0") == "SM90"
    assert hw.cc_to_sm("gfx1201") is None
    assert hw.family_of("amd", "12.0") is None  # an AMD pseudo-CC is no NVIDIA family
    assert hw.family_of("nvidia", "12.1") == "sm120"


# ---------------------------------------------------------------------------------------------------------------
# Environment reports (inline examples built from env-reports.md)
# ---------------------------------------------------------------------------------------------------------------

TOPO_8_NODE = "\n".join(
    ["        GPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    + [
        f"GPU{i}\t" + "\t".join(" X " if j == i else ("NODE" if (i < 4) == (j < 4) else "SYS") for j in range(8))
        + f"\t{'0-63' if i < 4 else '64-127'}\t{0 if i < 4 else 1}\t\tN/A"
        for i in range(8)
    ]
    + ["", "Legend:", "", "  X    = Self", "  NV#  = Connection traversing a bonded set of # NVLinks"]
)

CHECK_ENV_RTX_PRO = report(
    """
    Python: 3.12.3 (main, Jun 19 2026, 12:46:00) [GCC 13.3.0]
    CUDA available: True
    GPU 0,1,2,3,4,5,6,7: NVIDIA RTX PRO 6000 Blackwell Server Edition
    GPU 0,1,2,3,4,5,6,7 Compute Capability: 12.0
    CUDA_HOME: /usr/local/cuda
    NVCC: Cuda compilation tools, release 12.9, V12.9.86
    CUDA Driver Version: 580.95.05
    PyTorch: 2.9.1+cu129
    sglang: 0.5.9
    sgl_kernel: 0.3.21
    flashinfer_python: 0.6.1
    flashinfer_cubin: 0.6.1
    triton: 3.5.1
    transformers: 4.57.1
    vllm: Module Not Found
    NVIDIA Topology:
    """
) + TOPO_8_NODE + "\n\nHypervisor vendor:: KVM\nulimit soft: 1048576\n"


def test_check_env_rtx_pro_6000_is_8x_sm120_pcie():
    assert hw.detect_report_kind(CHECK_ENV_RTX_PRO) == "sglang_check_env"
    facts = hw.parse_env_report(CHECK_ENV_RTX_PRO)
    assert facts.kind == "sglang_check_env"
    assert facts.vendor == "nvidia"
    assert facts.gpu_name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert facts.gpu_count == 8
    assert (facts.compute_capability, facts.sm) == ("12.0", "SM120")
    assert facts.interconnect == "pcie"
    assert facts.driver_version == "580.95.05"
    assert facts.cuda_version == "12.9"
    assert (facts.torch_version, facts.torch_cuda) == ("2.9.1+cu129", "12.9")
    assert facts.engine_versions["sglang"] == "0.5.9"
    assert facts.engine_versions["flashinfer"] == "0.6.1"
    assert facts.engine_versions["sgl_kernel"] == "0.3.21"
    assert "vllm" not in facts.engine_versions  # "Module Not Found"
    assert facts.env == {"CUDA_HOME": "/usr/local/cuda"}
    assert facts.memory_gib == pytest.approx(94.97)  # check_env prints none: catalog
    assert facts.facts_source == "sglang_check_env + catalog (memory of NVIDIA RTX PRO 6000 Blackwell Server Edition)"


def test_check_env_with_log_prefixes():
    text = "\n".join(f"INFO 2025-04-06T03:02:45Z {line}" for line in CHECK_ENV_RTX_PRO.splitlines()[:9])
    assert hw.detect_report_kind(text) == "sglang_check_env"
    facts = hw.parse_env_report(text)
    assert (facts.gpu_count, facts.sm, facts.engine_versions["sglang"]) == (8, "SM120", "0.5.9")


CHECK_ENV_ROCM_R9700 = report(
    """
    Python: 3.12.9 (main, Feb  4 2026, 10:00:00) [GCC 11.4.0]
    ROCM available: True
    GPU 0,1: AMD Radeon AI PRO R9700
    GPU 0,1 Compute Capability: 12.0
    ROCM_HOME: /opt/rocm
    HIPCC: HIP version: 6.4.43482-0f2d60242
    ROCM Driver Version: 6.12.12
    PyTorch: 2.9.0+rocm6.4
    sglang: 0.5.9
    AMD Topology:
    ========================= Link Type between two GPUs =========================
           GPU0         GPU1
    GPU0   0            PCIE
    GPU1   PCIE         0
    ulimit soft: 1048576
    """
)


def test_rocm_check_env_stays_amd_not_sm120():
    assert hw.detect_report_kind(CHECK_ENV_ROCM_R9700) == "sglang_check_env"
    facts = hw.parse_env_report(CHECK_ENV_ROCM_R9700)
    assert facts.vendor == "amd"
    assert facts.sm is None
    assert facts.compute_capability == "gfx1201"  # from the catalog, not the pseudo-CC 12.0
    assert facts.gpu_count == 2
    assert facts.interconnect == "pcie"
    assert facts.torch_cuda is None
    ctx = hw.resolve_gpu(None, [facts], [])
    assert (ctx.vendor, ctx.sm, ctx.family) == ("amd", None, "amd-rdna4")


NVIDIA_SMI_TABLE = report(
    """
    Tue Jun 30 10:00:00 2026
    +-----------------------------------------------------------------------------------------+
    | NVIDIA-SMI 580.82.07              Driver Version: 580.82.07      CUDA Version: 13.0     |
    +-----------------------------------------+------------------------+----------------------+
    | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
    | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
    |                                         |                        |               MIG M. |
    |=========================================+========================+======================|
    |   0  NVIDIA RTX PRO 6000 Blac...    On  |   00000000:61:00.0 Off |                  Off |
    | 30%   41C    P8             22W /  600W |       3MiB /  97887MiB |      0%      Default |
    |                                         |                        |                  N/A |
    +-----------------------------------------+------------------------+----------------------+
    |   1  NVIDIA RTX PRO 6000 Blac...    On  |   00000000:62:00.0 Off |                  Off |
    | 30%   39C    P8             21W /  600W |       3MiB /  97887MiB |      0%      Default |
    |                                         |                        |                  N/A |
    +-----------------------------------------+------------------------+----------------------+

    +-----------------------------------------------------------------------------------------+
    | Processes:                                                                              |
    |  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
    |=========================================================================================|
    |  No running processes found                                                             |
    +-----------------------------------------------------------------------------------------+
    """
)


def test_nvidia_smi_table():
    assert hw.detect_report_kind(NVIDIA_SMI_TABLE) == "nvidia_smi"
    facts = hw.parse_env_report(NVIDIA_SMI_TABLE)
    assert facts.gpu_name == "NVIDIA RTX PRO 6000 Blac..."
    assert facts.gpu_count == 2
    assert (facts.compute_capability, facts.sm) == ("12.0", "SM120")  # catalog
    assert facts.memory_gib == pytest.approx(95.59)  # 97887 MiB as printed
    assert facts.driver_version == "580.82.07"
    assert facts.driver_cuda == "13.0"
    assert facts.cuda_version is None  # the banner's CUDA is the driver's, not the toolkit
    assert facts.vendor == "nvidia"
    ctx = hw.resolve_gpu(None, [facts], [])
    assert ctx.name == "NVIDIA RTX PRO 6000 Blac..."  # the variant cannot be told from a truncated name
    assert (ctx.count, ctx.sm, ctx.interconnect, ctx.source) == (2, "SM120", "pcie", "env_report:nvidia_smi")


def test_nvidia_smi_gb10_memory_not_supported():
    text = report(
        """
        | NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
        |=========================================+========================+======================|
        |   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |
        | N/A   42C    P8              4W /  N/A  | Not Supported          |      0%      Default |
        """
    )
    facts = hw.parse_env_report(text)
    assert (facts.gpu_name, facts.gpu_count, facts.sm) == ("NVIDIA GB10", 1, "SM121")
    assert facts.memory_gib == pytest.approx(120.7)  # unified memory: catalog value
    assert "memory" in facts.facts_source


NVIDIA_SMI_Q = report(
    """
    ==============NVSMI LOG==============

    Timestamp                                 : Tue Jun 30 10:00:00 2026
    Driver Version                            : 570.124.06
    CUDA Version                              : 12.8

    Attached GPUs                             : 8
    GPU 00000000:18:00.0
        Product Name                          : NVIDIA H100 80GB HBM3
        Product Brand                         : NVIDIA
        Product Architecture                  : Hopper
        MIG Mode
            Current                           : Disabled
        FB Memory Usage
            Total                             : 81559 MiB
            Reserved                          : 551 MiB
            Used                              : 0 MiB
    GPU 00000000:2A:00.0
        Product Name                          : NVIDIA H100 80GB HBM3
        FB Memory Usage
            Total                             : 81559 MiB
    """
)


def test_nvidia_smi_q():
    assert hw.detect_report_kind(NVIDIA_SMI_Q) == "nvidia_smi_q"
    facts = hw.parse_env_report(NVIDIA_SMI_Q)
    assert facts.gpu_name == "NVIDIA H100 80GB HBM3"
    assert facts.gpu_count == 8  # Attached GPUs, though only two blocks were pasted
    assert (facts.compute_capability, facts.sm) == ("9.0", "SM90")
    assert facts.memory_gib == pytest.approx(79.65)
    assert (facts.driver_version, facts.driver_cuda) == ("570.124.06", "12.8")


def test_nvidia_smi_l():
    text = "GPU 0: NVIDIA H200 (UUID: GPU-1f0e7c2a-aaaa)\nGPU 1: NVIDIA H200 (UUID: GPU-2f0e7c2a-bbbb)\n"
    assert hw.detect_report_kind(text) == "nvidia_smi_l"
    facts = hw.parse_env_report(text)
    assert (facts.gpu_name, facts.gpu_count, facts.sm, facts.vendor) == ("NVIDIA H200", 2, "SM90", "nvidia")


@pytest.mark.parametrize(
    "text",
    [
        "index, name, memory.total [MiB], compute_cap, driver_version\n"
        "0, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0, 570.124.06\n"
        "1, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0, 570.124.06\n",
        "0, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0, 570.124.06\n1, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0, 570.124.06\n",
    ],
    ids=["header", "noheader"],
)
def test_nvidia_smi_csv(text):
    assert hw.detect_report_kind(text) == "nvidia_smi_csv"
    facts = hw.parse_env_report(text)
    assert (facts.gpu_name, facts.gpu_count, facts.compute_capability) == ("NVIDIA H100 80GB HBM3", 2, "9.0")
    assert facts.memory_gib == pytest.approx(79.65)
    assert facts.driver_version == "570.124.06"


def test_nvidia_smi_csv_gb10_na_memory():
    text = "name, memory.total [MiB], compute_cap\nNVIDIA GB10, [N/A], 12.1\n"
    facts = hw.parse_env_report(text)
    assert (facts.kind, facts.gpu_name, facts.sm) == ("nvidia_smi_csv", "NVIDIA GB10", "SM121")


def topo(cells: list[list[str]]) -> str:
    n = len(cells)
    head = "\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [f"GPU{i}\t" + "\t".join(row) + "\t0-47\t0\t\tN/A" for i, row in enumerate(cells)]
    return "\n".join([head, *rows, "", "Legend:", "  X    = Self"]) + "\n"


def test_topo_8x_h100_nv18_is_nvlink():
    text = topo([[" X " if i == j else "NV18" for j in range(8)] for i in range(8)])
    assert hw.detect_report_kind(text) == "nvidia_topo"
    facts = hw.parse_env_report(text)
    assert (facts.interconnect, facts.gpu_count, facts.vendor) == ("nvlink", 8, "nvidia")
    assert hw.parse_topology(text.splitlines()).max_nvlinks == 18


def test_topo_nv12_pairs_with_sys_is_partial_nvlink():
    def cell(i, j):
        return " X " if i == j else "NV12" if i // 2 == j // 2 else "SYS"

    text = topo([[cell(i, j) for j in range(4)] for i in range(4)])
    facts = hw.parse_env_report(text)
    assert (facts.interconnect, facts.gpu_count) == ("partial-nvlink", 4)


def test_topo_pcie_only_and_old_driver_soc():
    text = topo([[" X " if i == j else ("PIX" if i + j == 1 else "SOC") for j in range(3)] for i in range(3)])
    assert hw.parse_env_report(text).interconnect == "pcie"


def test_topo_single_gpu_has_no_interconnect():
    text = "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-23\t0\t\tN/A\n"
    facts = hw.parse_env_report(text)
    assert (facts.kind, facts.gpu_count, facts.interconnect) == ("nvidia_topo", 1, None)


VLLM_COLLECT_ENV_SECTIONED = report(
    """
    Collecting environment information...
    uv is set
    ==============================
            System Info
    ==============================
    OS                           : Ubuntu 22.04.5 LTS (x86_64)
    ==============================
           PyTorch Info
    ==============================
    PyTorch version              : 2.7.1+cu128
    Is debug build               : False
    CUDA used to build PyTorch   : 12.8
    ROCM used to build PyTorch   : N/A
    ==============================
          CUDA / GPU Info
    ==============================
    Is CUDA available            : True
    CUDA runtime version         : 12.8.93
    GPU models and configuration :
    GPU 0: NVIDIA H200
    GPU 1: NVIDIA H200
    GPU 2: NVIDIA H200
    GPU 3: NVIDIA H200
    Nvidia driver version        : 570.86.15
    ==============================
    Versions of relevant libraries
    ==============================
    [pip3] flashinfer-python==0.2.9rc2
    [pip3] numpy==2.2.6
    [pip3] nvidia-nccl-cu12==2.26.2
    [pip3] torch==2.7.1+cu128
    [pip3] transformers==4.55.2
    [pip3] triton==3.3.1
    [conda] Could not collect
    ==============================
             vLLM Info
    ==============================
    ROCM Version                 : Could not collect
    vLLM Version                 : 0.10.1.1
    vLLM Build Flags:
      CUDA Archs: Not Set; ROCm: Disabled
    GPU Topology:
      \tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
    GPU0\t X \tNV18\tNV18\tNV18\t0-47\t0\t\tN/A
    GPU1\tNV18\t X \tNV18\tNV18\t0-47\t0\t\tN/A
    GPU2\tNV18\tNV18\t X \tNV18\t48-95\t1\t\tN/A
    GPU3\tNV18\tNV18\tNV18\t X \t48-95\t1\t\tN/A

    ==============================
         Environment Variables
    ==============================
    NCCL_CUMEM_ENABLE=0
    CUDA_VISIBLE_DEVICES=0,1,2,3
    VLLM_USAGE_SOURCE=production-docker-image
    VLLM_API_KEY=should-never-be-kept
    NCCL_VERSION=2.25.1-1
    CUDA_VERSION=12.8.1
    PYTORCH_NVML_BASED_CUDA_CHECK=1
    """
)


def test_vllm_collect_env_sectioned():
    assert hw.detect_report_kind(VLLM_COLLECT_ENV_SECTIONED) == "vllm_collect_env"
    facts = hw.parse_env_report(VLLM_COLLECT_ENV_SECTIONED)
    assert (facts.gpu_name, facts.gpu_count, facts.sm) == ("NVIDIA H200", 4, "SM90")
    assert facts.interconnect == "nvlink"
    assert (facts.torch_version, facts.torch_cuda) == ("2.7.1+cu128", "12.8")
    assert facts.cuda_version == "12.8"
    assert facts.driver_version == "570.86.15"
    assert facts.nccl_version == "2.26.2"  # torch's wheel, not the container's NCCL_VERSION
    assert facts.engine_versions["vllm"] == "0.10.1.1"
    assert facts.engine_versions["flashinfer"] == "0.2.9rc2"
    assert facts.env["NCCL_CUMEM_ENABLE"] == "0"
    assert facts.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert "VLLM_API_KEY" not in facts.env
    assert facts.vendor == "nvidia"


VLLM_COLLECT_ENV_FLAT_ROCM = report(
    """
    Collecting environment information...
    PyTorch version: 2.5.0+rocm6.2
    Is debug build: False
    CUDA used to build PyTorch: N/A
    ROCM used to build PyTorch: 6.2.41133-dd7f95766

    OS: Ubuntu 22.04.4 LTS (x86_64)
    Is CUDA available: True
    CUDA runtime version: Could not collect
    GPU models and configuration: AMD Instinct MI300X (gfx942:sramecc+:xnack-)
    Nvidia driver version: Could not collect
    HIP runtime version: 6.2.41133
    MIOpen runtime version: 3.2.0

    Versions of relevant libraries:
    [pip3] torch==2.5.0+rocm6.2
    [pip3] triton==3.1.0
    ROCM Version: 6.2.41133-dd7f95766
    Neuron SDK Version: N/A
    vLLM Version: 0.6.3.post1@a2c71c5405fdd8822956bcd785e72149c1cfb655
    vLLM Build Flags:
    CUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled
    GPU Topology:
    ============================ ROCm System Management Interface ============================
    ================================ Weight between two GPUs =================================
           GPU0         GPU1         GPU2         GPU3
    GPU0   0            15           15           15
    GPU1   15           0            15           15
    GPU2   15           15           0            15
    GPU3   15           15           15           0
    ================================= Link Type between two GPUs =============================
           GPU0         GPU1         GPU2         GPU3
    GPU0   0            XGMI         XGMI         XGMI
    GPU1   XGMI         0            XGMI         XGMI
    GPU2   XGMI         XGMI         0            XGMI
    GPU3   XGMI         XGMI         XGMI         0

    PYTORCH_ROCM_ARCH=gfx942
    """
)


def test_vllm_collect_env_flat_rocm():
    assert hw.detect_report_kind(VLLM_COLLECT_ENV_FLAT_ROCM) == "vllm_collect_env"
    facts = hw.parse_env_report(VLLM_COLLECT_ENV_FLAT_ROCM)
    assert facts.vendor == "amd"
    assert facts.gpu_name == "AMD Instinct MI300X (gfx942:sramecc+:xnack-)"
    assert facts.gpu_count == 4  # device 0 only is named: the count comes from the topology
    assert (facts.compute_capability, facts.sm) == ("gfx942", None)
    assert facts.interconnect == "xgmi"
    assert facts.torch_cuda is None
    assert facts.engine_versions["vllm"] == "0.6.3.post1"
    ctx = hw.resolve_gpu(None, [facts], [])
    assert (ctx.name, ctx.count, ctx.memory_gib) == ("AMD Instinct MI300X", 4, pytest.approx(191.98))


TORCH_COLLECT_ENV = report(
    """
    <frozen runpy>:128: RuntimeWarning: 'torch.utils.collect_env' found in sys.modules
    Collecting environment information...
    PyTorch version: 2.8.0+cu128
    Is debug build: False
    CUDA used to build PyTorch: 12.8
    ROCM used to build PyTorch: N/A

    OS: Ubuntu 24.04.2 LTS (x86_64)
    Python version: 3.12.3 (main, Feb  4 2025, 14:48:35) [GCC 13.3.0] (64-bit runtime)
    Is CUDA available: True
    CUDA runtime version: 12.8.93
    CUDA_MODULE_LOADING set to: LAZY
    GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090
    Nvidia driver version: 575.57.08
    cuDNN version: Could not collect
    HIP runtime version: N/A

    Versions of relevant libraries:
    [pip3] numpy==2.3.1
    [pip3] nvidia-nccl-cu12==2.27.3
    [pip3] torch==2.8.0+cu128
    [pip3] triton==3.4.0
    """
)


def test_torch_collect_env():
    assert hw.detect_report_kind(TORCH_COLLECT_ENV) == "torch_collect_env"
    facts = hw.parse_env_report(TORCH_COLLECT_ENV)
    assert (facts.gpu_name, facts.gpu_count) == ("NVIDIA GeForce RTX 5090", 1)
    assert (facts.sm, facts.vendor) == ("SM120", "nvidia")
    assert (facts.torch_cuda, facts.nccl_version, facts.driver_version) == ("12.8", "2.27.3", "575.57.08")
    assert facts.engine_versions == {"triton": "3.4.0"}
    assert facts.interconnect is None


NCCL_DEBUG = report(
    """
    node7:4121:4121 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>
    node7:4121:4121 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.
    node7:4121:4121 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
    node7:4121:4121 [0] NCCL INFO cudaDriverVersion 12090
    node7:4121:4121 [0] NCCL INFO NCCL version 2.27.5+cuda12.9
    node7:4122:4122 [1] NCCL INFO cudaDriverVersion 12090
    node7:4121:4190 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct
    node7:4122:4191 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct
    node7:4121:4190 [0] NCCL INFO comm 0x5611aa rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 - Init COMPLETE
    node7:4122:4191 [1] NCCL INFO comm 0x5611ab rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2000 - Init COMPLETE
    """
)


def test_nccl_debug():
    assert hw.detect_report_kind(NCCL_DEBUG) == "nccl_debug"
    facts = hw.parse_env_report(NCCL_DEBUG)
    assert facts.nccl_version == "2.27.5"
    assert facts.driver_cuda == "12.9"
    assert facts.env == {"NCCL_P2P_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0"}
    assert facts.gpu_count == 2
    assert facts.interconnect is None  # SHM because P2P was disabled by hand: the wiring is unknown
    assert facts.vendor == "nvidia"


def test_nccl_shm_without_p2p_disable_is_pcie_and_nvls_is_nvlink():
    shm = NCCL_DEBUG.replace("NCCL_P2P_DISABLE set by environment to 1.", "Using network Socket")
    assert hw.parse_env_report(shm).interconnect == "pcie"
    nvls = NCCL_DEBUG + "node7:4121:4190 [0] NCCL INFO NVLS multicast support is available on dev 0\n"
    assert hw.parse_env_report(nvls).interconnect == "nvlink"


ROCM_SMI = report(
    """
    ============================ ROCm System Management Interface ============================
    ====================================== Product Info ======================================
    GPU[0]          : Card Series:          AMD Instinct MI300X OAM
    GPU[0]          : Card Model:           0x74a1
    GPU[0]          : GFX Version:          gfx942
    GPU[1]          : Card Series:          AMD Instinct MI300X OAM
    GPU[1]          : Card Model:           0x74a1
    GPU[1]          : GFX Version:          gfx942
    ==========================================================================================
    GPU[0]          : VRAM Total Memory (B): 206158430208
    GPU[1]          : VRAM Total Memory (B): 206158430208
    ================================= Link Type between two GPUs =============================
           GPU0         GPU1
    GPU0   0            XGMI
    GPU1   XGMI         0
    ================================== End of ROCm SMI Log ===================================
    """
)


def test_rocm_smi():
    assert hw.detect_report_kind(ROCM_SMI) == "rocm_smi"
    facts = hw.parse_env_report(ROCM_SMI)
    assert facts.vendor == "amd"
    assert facts.gpu_name == "AMD Instinct MI300X OAM"
    assert facts.gpu_count == 2
    assert (facts.compute_capability, facts.sm) == ("gfx942", None)
    assert facts.memory_gib == pytest.approx(192.0)
    assert facts.interconnect == "xgmi"


def test_concatenated_smi_and_topo_are_both_read():
    text = NVIDIA_SMI_TABLE + "\n" + topo([[" X " if i == j else "NODE" for j in range(2)] for i in range(2)])
    facts = hw.parse_env_report(text)
    assert (facts.kind, facts.gpu_count, facts.interconnect) == ("nvidia_smi", 2, "pcie")


def test_not_a_report():
    assert hw.detect_report_kind("") is None
    assert hw.detect_report_kind("hello\nworld\n") is None
    facts = hw.parse_env_report("hello\n")
    assert (facts.kind, facts.gpu_name, facts.facts_source) == (None, None, "unknown")


@pytest.mark.parametrize(
    "name",
    [
        "sglang__TianyangChen357__LLM__sglang.log",
        "sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log",
        "sglang__udbhav-ag__SGLang_setup__sglang.log",
        "vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out",
        "vllm__leadawon__structrag__vllm.log",
        "vllm__sostrowsk__dgx-spark-local-llm__vllm.log",
        "vllm__amdgoose__arno_vllm_chat__vllm_server.log",
    ],
)
def test_server_logs_are_not_reports(name):
    lines = corpus_lines(name)
    assert hw.detect_report_kind("\n".join(lines)) is None
    # NCCL INFO lines mixed into the head do not make a server log an NCCL dump
    nccl = NCCL_DEBUG.splitlines()
    mixed = lines[:5] + nccl + lines[5:40] + nccl
    assert hw.detect_report_kind("\n".join(mixed)) is None


def test_server_log_with_nvidia_smi_dump_on_top():
    lines = NVIDIA_SMI_TABLE.splitlines() + corpus_lines("sglang__TianyangChen357__LLM__sglang.log")
    assert hw.detect_report_kind("\n".join(lines)) is None
    hints = hw.gpu_hints_from_text([line for line in lines if "NVIDIA" in line])
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.sm, ctx.source) == ("NVIDIA RTX PRO 6000 Blac...", "SM120", "log_hint:nvidia_smi")


def test_every_corpus_server_log_is_not_a_report():
    if not CORPUS.is_dir():
        pytest.skip("corpus not available")
    for path in sorted(CORPUS.glob("*.log")) + sorted(CORPUS.glob("*.out")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert hw.detect_report_kind(text) is None, path.name


# ---------------------------------------------------------------------------------------------------------------
# Hints in server logs
# ---------------------------------------------------------------------------------------------------------------


def test_hints_h100_moe_config_in_real_vllm_log():
    lines = corpus_lines("vllm__Zzsf11__VideoCuttingAgent__Qwen3VL_vllm-server.out")
    candidates = [line for line in lines if "device_name=" in line]
    hints = hw.gpu_hints_from_text(candidates)
    assert hints and {h.value for h in hints} == {"NVIDIA H100 80GB HBM3"}
    assert {h.how for h in hints} == {"moe_config"}
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.sm, ctx.source) == ("NVIDIA H100 80GB HBM3", "SM90", "log_hint:moe_config")


def test_hints_r9700_sglang_log():
    lines = corpus_lines("sglang__mattbucci__2x-R9700-RDNA4-GFX1201-sglang-inference__Qwen3.6-27B-AWQ.log")
    candidates = [line for line in lines if "amdsmi" in line or "GFX" in line.upper()]
    hints = hw.gpu_hints_from_text(candidates)
    assert ("amd", "amdsmi") in {(h.value, h.how) for h in hints}
    assert ("gfx1201", "gfx_target") in {(h.value, h.how) for h in hints}
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.vendor, ctx.cc, ctx.sm) == ("AMD Radeon AI PRO R9700", "amd", "gfx1201", None)
    # the ROCm tell alone gives the vendor and nothing else
    only_amdsmi = [h for h in hints if h.how == "amdsmi"]
    ctx = hw.resolve_gpu(None, [], only_amdsmi)
    assert (ctx.vendor, ctx.name, ctx.sm, ctx.source) == ("amd", None, None, "log_hint:amdsmi")


def test_hints_gb10_flashinfer_cache_folder():
    lines = corpus_lines("vllm__sostrowsk__dgx-spark-local-llm__vllm.log")
    hints = hw.gpu_hints_from_text([line for line in lines if "flashinfer_autotune_cache" in line])
    assert {(h.value, h.how) for h in hints} == {("12.1", "flashinfer_arch")}
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.sm, ctx.family) == ("NVIDIA GB10", "SM121", "sm120")


def test_hints_flashinfer_jit_folder_gives_ada():
    lines = corpus_lines("sglang__udbhav-ag__SGLang_setup__sglang.log")
    hints = hw.gpu_hints_from_text([line for line in lines if "/.cache/flashinfer/" in line])
    assert hints and {h.value for h in hints} == {"8.9"}
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.cc, ctx.family) == (None, "8.9", "ada")  # several Ada cards: no name


def test_hints_vllm_free_memory():
    lines = corpus_lines("vllm__mrpid12org__imageworks__nohup.out")
    hints = hw.gpu_hints_from_text([line for line in lines if "Free memory on device" in line])
    assert hints and {(h.value, h.kind) for h in hints} == {("15.99 GiB", "memory")}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
         "79.19 GiB of which 1.06 GiB is free.", {("79.19 GiB", "total_capacity")}),
        ("Tried to allocate 20.00 MiB (GPU 0; 39.39 GiB total capacity; 37.5 GiB already allocated)",
         {("39.39 GiB", "total_capacity")}),
        ("[2026-01-02 10:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file "
         "not found at /x/configs/triton_3_4_0/E=256,N=256,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,"
         "dtype=fp8_w8a8,block_shape=[128, 128].json",
         {("NVIDIA RTX PRO 6000 Blackwell Server Edition", "moe_config")}),
        ("Config file not found at /x/E=128,N=768,device_name=NVIDIA_GeForce_RTX_3090_down.json",
         {("NVIDIA GeForce RTX 3090", "moe_config")}),
        ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
         "PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
         "sm_80 sm_86 sm_90.", {("NVIDIA GeForce RTX 5090", "device_string"), ("12.0", "device_capability")}),
        ("WARNING 01-02 10:00:00 [cuda.py:100] Detected different devices in the system: NVIDIA H100 80GB HBM3, "
         "NVIDIA H100 PCIe. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior.",
         {("NVIDIA H100 80GB HBM3", "different_devices"), ("NVIDIA H100 PCIe", "different_devices")}),
        ("nvcc -gencode=arch=compute_120a,code=sm_120a -c batch_decode.cu", {("12.0", "arch_string")}),
        ("flashinfer.jit: Loading JIT ops: fused_moe_sm121", set()),  # "_sm121" inside an identifier
        ("TORCH_CUDA_ARCH_LIST=8.0 9.0 10.0 12.0 sm_90 sm_100", set()),  # a build list, not the device
        ("RuntimeError: HIP error: invalid device function", {("amd", "rocm")}),
        ("| NVIDIA-SMI 570.133.20   Driver Version: 570.133.20   CUDA Version: 12.8 |", {("nvidia", "nvidia_smi")}),
        ("|   0  NVIDIA RTX PRO 6000 Blac...    On  |   00000000:61:00.0 Off |                  Off |",
         {("NVIDIA RTX PRO 6000 Blac...", "nvidia_smi")}),
        ("Using AMD Instinct MI355X (gfx950) with aiter kernels",
         {("AMD Instinct MI355X", "device_string"), ("gfx950", "gfx_target")}),
        ("FA2 is only supported on devices with compute capability >= 8", set()),
    ],
)
def test_hints_from_single_lines(line, expected):
    assert {(h.value, h.how) for h in hw.gpu_hints_from_text([line])} == expected


def test_unknown_config_name_is_kept():
    hints = hw.gpu_hints_from_text(["Config file not found at E=8,N=14336,device_name=Tesla_T4.json"])
    assert [(h.value, h.how) for h in hints] == [("Tesla T4", "moe_config")]
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.vendor, ctx.cc, ctx.source) == ("Tesla T4", "nvidia", None, "log_hint:moe_config")


def test_hint_kinds_and_indices():
    hints = hw.gpu_hints_from_text(["nothing here", "GPU 0 has a total capacity of 94.97 GiB", "sm_120a"])
    assert [(h.kind, h.line_index) for h in hints] == [("memory", 1), ("cc", 2)]
    # 12.0 + 94.97 GiB: three RTX PRO 6000 variants fit, so no name is invented
    ctx = hw.resolve_gpu(None, [], hints)
    assert (ctx.name, ctx.cc, ctx.sm, ctx.memory_gib) == (None, "12.0", "SM120", 94.97)
    # with 31.36 GiB only the RTX 5090 fits
    hints = hw.gpu_hints_from_text(["GPU 0 has a total capacity of 31.36 GiB", "sm_120a"])
    assert hw.resolve_gpu(None, [], hints).name == "NVIDIA GeForce RTX 5090"


# ---------------------------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------------------------


def test_resolve_precedence_explicit_over_env_over_hints():
    env = hw.parse_env_report(CHECK_ENV_RTX_PRO)
    hints = [hw.Hint("NVIDIA H100 80GB HBM3", "moe_config", 3)]
    ctx = hw.resolve_gpu(None, [env], hints)
    assert (ctx.source, ctx.sm, ctx.count, ctx.interconnect) == ("env_report:sglang_check_env", "SM120", 8, "pcie")
    ctx = hw.resolve_gpu("RTX PRO 6000 Workstation", [env], hints)
    assert ctx.source == "explicit"
    assert ctx.name == "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    assert (ctx.count, ctx.interconnect) == (8, "pcie")  # same CC: the report fills the count
    ctx = hw.resolve_gpu(None, [], hints)
    assert ctx.source == "log_hint:moe_config" and ctx.interconnect == "nvlink"


def test_resolve_does_not_mix_other_hardware():
    env = hw.parse_env_report(CHECK_ENV_RTX_PRO)
    ctx = hw.resolve_gpu("H100", [env], [])
    assert (ctx.name, ctx.cc, ctx.count) == ("NVIDIA H100 80GB HBM3", "9.0", None)
    amd = hw.parse_env_report(ROCM_SMI)
    ctx = hw.resolve_gpu(None, [amd], [hw.Hint("12.0", "arch_string", 0)])
    assert (ctx.vendor, ctx.sm, ctx.cc) == ("amd", None, "gfx942")


def test_resolve_topology_only_report_is_filled_by_hints():
    env = hw.parse_env_report(topo([[" X " if i == j else "NV18" for j in range(8)] for i in range(8)]))
    ctx = hw.resolve_gpu(None, [env], [hw.Hint("NVIDIA H200", "device_string", 0)])
    assert (ctx.name, ctx.count, ctx.interconnect, ctx.source) == ("NVIDIA H200", 8, "nvlink", "log_hint:device_string")


@pytest.mark.parametrize(
    ("explicit", "expected"),
    [
        ("8xH100", ("NVIDIA H100 80GB HBM3", 8, "9.0", "SM90", "nvidia")),
        ("RTX PRO 6000 x 4", ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 4, "12.0", "SM120", "nvidia")),
        ("sm_121", (None, None, "12.1", "SM121", "nvidia")),
        ("12.0", (None, None, "12.0", "SM120", "nvidia")),
        ("gfx1201", ("AMD Radeon AI PRO R9700", None, "gfx1201", None, "amd")),  # one model has that target
        ("gfx942", (None, None, "gfx942", None, "amd")),  # MI300X, MI325X, MI308X
        ("H100×2", ("NVIDIA H100 80GB HBM3", 2, "9.0", "SM90", "nvidia")),
        ("2× AMD Radeon AI PRO R9700", ("AMD Radeon AI PRO R9700", 2, "gfx1201", None, "amd")),
        ("Tesla T4", ("Tesla T4", None, None, None, "nvidia")),
    ],
)
def test_resolve_explicit_forms(explicit, expected):
    ctx = hw.resolve_gpu(explicit, [], [])
    assert (ctx.name, ctx.count, ctx.cc, ctx.sm, ctx.vendor) == expected
    assert ctx.source == "explicit"


def test_resolve_nothing_known():
    assert hw.resolve_gpu(None, [], []) == hw.GpuContext()
    assert hw.resolve_gpu(None, [hw.parse_env_report("hello")], []).source is None


# ---------------------------------------------------------------------------------------------------------------
# Real environment reports under tests/samples/env/ (added by another helper; skipped while absent)
# ---------------------------------------------------------------------------------------------------------------

ENV_FILES = sorted(p for p in ENV_SAMPLES.glob("*") if p.is_file() and p.suffix != ".md")


@pytest.mark.skipif(not ENV_FILES, reason="no tests/samples/env/ reports yet")
@pytest.mark.parametrize("path", ENV_FILES, ids=[p.name for p in ENV_FILES])
def test_env_sample_files(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    kind = hw.detect_report_kind(text)
    assert kind in hw.REPORT_KINDS
    facts = hw.parse_env_report(text)
    assert facts.kind == kind
    assert facts.gpu_name or facts.gpu_count or facts.interconnect or facts.nccl_version
    if "RTX PRO 6000" in text:
        ctx = hw.resolve_gpu(None, [facts], [])
        assert ctx.vendor == "nvidia" and ctx.family == "sm120"
        if facts.interconnect:
            assert facts.interconnect == "pcie"
