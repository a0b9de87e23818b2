"""Where things are: the checkout, the bundled samples, the golden files and the real corpus."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SAMPLES = TESTS / "samples"
GOLDEN = TESTS / "golden"
# the real corpus sits beside the checkout (../shared/corpus/real); CI lays it there too
CORPUS = Path(os.environ.get("LOGSLEUTH_CORPUS", ROOT.parent / "shared" / "corpus" / "real"))


def corpus_files() -> list[Path]:
    """Every log of the real corpus (empty when it is not available)."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "MANIFEST.md")


def sample_files() -> list[Path]:
    """The samples described by tests/samples/MANIFEST.md: top level, eras/ and env/."""
    out = [p for p in sorted(SAMPLES.iterdir()) if p.is_file() and p.name != "MANIFEST.md"]
    for sub in ("eras", "env"):
        out += sorted(p for p in (SAMPLES / sub).iterdir() if p.is_file())
    return out
