"""A small authored fleet: seven hosts, one slow, three with the same crash."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.paths import SAMPLES

HEALTHY = SAMPLES / "sglang_tuned_v1.log"  # Kimi-K2.5 on 8x RTX PRO 6000, SGLang
CRASH = SAMPLES / "eras" / "vllm_illegal_memory_access.log"  # vLLM, illegal memory access mid-serving
SLOW_FACTOR = 0.6  # the slow host decodes at 60% of its peers' speed (40% below: past the 25% margin)


def slowed(text: str, factor: float) -> str:
    """The same log with every generation throughput figure scaled by ``factor``."""
    return re.sub(r"(gen throughput \(token/s\): )([0-9.]+)",
                  lambda m: f"{m.group(1)}{float(m.group(2)) * factor:.2f}", text)


def build_fleet(root: Path) -> dict[str, Path]:
    """host -> its server.log under root/HOST/server.log (each file starts with a line naming
    its host, so no two files have the same bytes: identical content is ingested once)."""
    hosts = {}
    for i in range(1, 8):
        host = f"gpu-{i:02d}"
        body = (CRASH if i >= 5 else HEALTHY).read_text(encoding="utf-8")
        if i == 4:
            body = slowed(body, SLOW_FACTOR)
        dest = root / host / "server.log"
        dest.parent.mkdir(parents=True)
        dest.write_text(f"+ collected on {host}\n" + body, encoding="utf-8")
        hosts[host] = dest
    return hosts


@pytest.fixture(scope="session")
def fleet_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fleet") / "logs"
    build_fleet(root)
    return root
