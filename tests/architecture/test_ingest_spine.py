"""One ingest spine: ``watch/``, ``fleet/`` and ``telemetry/`` reach the ingest only through
its public stage API (``logsleuth.ingest.stages``), never through the modules behind it or
their private names (``pipeline.read_range``, ``read._read_head``, ...). Read from the source
with ``ast``, imports inside functions included; the callers of each stage are listed, so a
new entry point that goes around the spine fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from logsleuth.ingest import stages

PKG = Path(stages.__file__).resolve().parents[1]  # src/logsleuth
OUTSIDE = ("watch", "fleet", "telemetry")


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(absolute module, imported name, line) of every ``from ... import`` in ``path``."""
    package = "logsleuth." + ".".join(path.relative_to(PKG).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out += [(module, a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names]
    return out


def _callers() -> dict[str, set[str]]:
    """stage name -> modules outside ingest/ that import it."""
    callers: dict[str, set[str]] = {}
    for folder in OUTSIDE:
        for path in sorted((PKG / folder).rglob("*.py")):
            for module, name, _ in _imports(path):
                if module == "logsleuth.ingest.stages":
                    callers.setdefault(name, set()).add(f"{folder}/{path.name}")
    return callers


@pytest.mark.parametrize("folder", OUTSIDE)
def test_only_the_stage_api_is_imported(folder):
    bad = []
    for path in sorted((PKG / folder).rglob("*.py")):
        for module, name, line in _imports(path):
            if not module.startswith("logsleuth.ingest"):
                continue
            if module == "logsleuth.ingest" and name == "stages":
                continue
            if module != "logsleuth.ingest.stages" or name not in stages.__all__:
                bad.append(f"{path.relative_to(PKG)}:{line} imports {name or module} from {module}")
    assert not bad, "\n".join(bad)


def test_the_stage_api_names_resolve_and_are_public():
    for name in stages.__all__:
        assert not name.startswith("_")
        assert getattr(stages, name) is not None, name


def test_callers_of_the_stages():
    callers = _callers()
    # watch appends, fleet byte ranges and whole files, telemetry: all through the stages
    assert callers["store_range"] == {"fleet/ranges.py"} and callers["finish_ranges"] == {"fleet/ranges.py"}
    assert callers["ingest_source"] == {"fleet/parts.py"}
    assert {"parse_frame", "redact_frame", "detect", "extract"} <= {n for n, who in callers.items()
                                                                    if "watch/observe.py" in who}
    # the telemetry layer asks the ingest's own head read (read once per source) what a file is
    assert "telemetry_kind" in callers and "telemetry/__init__.py" in callers["telemetry_kind"]
    assert "head_text" in callers and "fleet/ranges.py" in callers["head_text"]
    assert set(callers) <= set(stages.__all__)
