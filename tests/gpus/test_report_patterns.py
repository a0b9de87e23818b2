"""The environment-report and hint patterns are data (parsers/env_reports.toml): loaded,
compiled and checked like the grammars, one module per job of the former hardware.py."""
from __future__ import annotations

import subprocess
import sys

import pytest

from logsleuth.errors import GrammarError
from logsleuth.gpus import hints
from logsleuth.gpus.report_patterns import REQUIRED, read_report_patterns, report_patterns
from logsleuth.resources import data_path


def test_shipped_patterns_load_with_every_required_key():
    p = report_patterns()
    for section, keys in REQUIRED.items():
        assert set(keys) <= set(getattr(p, section)), section
    # {packages} expanded into the alternation of the package list, longest name first
    assert "flashinfer\\-jit\\-cache|" in p.report["pip_line"].pattern
    assert p.report["pip_line"].search("[pip3] flashinfer-python==0.5.2").groups() == ("flashinfer-python", "0.5.2")
    assert hints.prefilter_likes() and all(s.startswith("%") for s in hints.prefilter_likes())
    assert hints.hint_rank("moe_config") < hints.hint_rank("free_memory") < hints.hint_rank("never-heard-of")


def test_broken_patterns_file_names_every_bad_key(tmp_path):
    text = data_path("parsers/env_reports.toml").read_text(encoding="utf-8")
    text = text.replace("smi_banner = 'NVIDIA-SMI \\d+\\.\\d+'", "smi_banner = 'NVIDIA-SMI (\\d+'")
    text = text.replace("nv_cell = ", "nv_cel = ")
    broken = tmp_path / "env_reports.toml"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(GrammarError) as err:
        read_report_patterns(broken)
    msg = str(err.value)
    assert "env_reports.toml [detect] smi_banner: invalid regex" in msg
    assert "env_reports.toml [topology]: missing key 'nv_cell'" in msg


def test_split_modules_are_headless_and_hardware_module_is_gone():
    code = ("import sys, logsleuth.gpus.catalog, logsleuth.gpus.env_report, logsleuth.gpus.hints, "
            "logsleuth.gpus.resolve; print(sorted(m for m in ('typer', 'rich', 'duckdb', 'polars') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    with pytest.raises(ImportError):
        __import__("logsleuth.gpus.hardware")
