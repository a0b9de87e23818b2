"""The folders of ``logsleuth`` are layers (docs/architecture.md): a module imports from its
own folder or from folders below it, never above; imports inside functions count (a lazy
import still ties the two folders together; only ``if TYPE_CHECKING:`` imports are left out).

``LAYERS`` is the order, top first; the folders of one entry are siblings that may not import
each other, except the pairs in ``SIBLING_EDGES``. A module directly under ``logsleuth/``
belongs to the layer ``MODULES`` gives it.
"""
from __future__ import annotations

import pytest

from support.source_code import import_graph, modules

LAYERS: list[tuple[str, ...]] = [
    ("cli",),  # and __main__.py, which runs it
    ("api",),  # api.py and __init__.py: `import logsleuth`
    ("watch", "fleet", "report"),
    ("analysis",),
    ("intake",),  # which inputs, and whether each is a log (ingest) or telemetry
    ("telemetry",),
    ("ingest",),
    ("derive",),
    ("gpus",),
    ("formats",),
    ("db",),
    ("core",),
]
#: (importer, imported) folders of one layer that may import each other in that direction
SIBLING_EDGES = {("report", "fleet")}  # the report's fleet page reads the fleet summary
#: the modules directly under logsleuth/ and their layer
MODULES = {"logsleuth": "api", "logsleuth.api": "api", "logsleuth.__main__": "cli"}
CORE = {"errors", "settings", "resources", "version", "inert", "interrupts", "scratch", "walk", "nesting", "private",
        "table"}


def folder_of(module: str) -> str:
    if module in MODULES:
        return MODULES[module]
    part = module.split(".")[1]
    return "core" if part in CORE else part


def rank_of(folder: str) -> int:
    for i, layer in enumerate(LAYERS):
        if folder in layer:
            return i
    raise AssertionError(f"folder {folder} has no layer: add it to LAYERS and docs/architecture.md")


def violations(graph) -> list[str]:
    out = []
    for src, targets in graph.items():
        a = folder_of(src)
        for dst in targets:
            b = folder_of(dst)
            if a == b or (a, b) in SIBLING_EDGES:
                continue
            if rank_of(b) <= rank_of(a):
                out.append(f"{src} ({a}) -> {dst} ({b})")
    return sorted(out)


def test_every_folder_has_a_layer():
    for name in modules():
        rank_of(folder_of(name))


def test_imports_point_down_only():
    assert violations(import_graph()) == []


def test_the_layer_order_is_the_documented_one():
    from support.paths import ROOT

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert len(rows) == len(LAYERS), "docs/architecture.md lists another number of layers"
    for row, layer in zip(rows, LAYERS):
        for folder in layer:
            name = {"core": "core modules", "api": "api.py", "__main__": "__main__.py"}.get(folder, f"{folder}/")
            assert name in row, f"docs/architecture.md: {name} not in the row of its layer: {row}"


@pytest.mark.parametrize("edge, expected", [
    ({"logsleuth.db.x": frozenset({"logsleuth.derive.y"})}, ["logsleuth.db.x (db) -> logsleuth.derive.y (derive)"]),
    ({"logsleuth.derive.y": frozenset({"logsleuth.db.x"})}, []),
    ({"logsleuth.watch.a": frozenset({"logsleuth.fleet.b"})}, ["logsleuth.watch.a (watch) -> logsleuth.fleet.b (fleet)"]),
    ({"logsleuth.report.a": frozenset({"logsleuth.fleet.b"})}, []),
    ({"logsleuth.errors": frozenset({"logsleuth.db.x"})}, ["logsleuth.errors (core) -> logsleuth.db.x (db)"]),
])
def test_the_check_sees_upward_and_sibling_imports(edge, expected):
    assert violations(edge) == expected


def test_environment_is_read_in_settings_only():
    """``settings.py`` is the one module that reads environment variables: a variable read
    elsewhere is a setting nobody can find."""
    import ast

    readers = []
    for name, mod in modules().items():
        if name == "logsleuth.settings":
            continue
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb") \
                    and isinstance(node.value, ast.Name) and node.value.id == "os":
                readers.append(f"{mod.rel}:{node.lineno}")
    assert readers == []
