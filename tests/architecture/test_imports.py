"""The import graph of ``logsleuth``: no cycle between modules, and the CLI on top.

Level: modules (``logsleuth.cli.app``, ``logsleuth.analysis.compare``...), an edge for every
import that can run, at module level or inside a function (a lazy import still ties the two
modules together; only ``if TYPE_CHECKING:`` imports are left out). Packages are not the
level: every module of a package needs its ``__init__``, which may re-export from below,
so a package-level graph would report cycles that Python never meets.
Layering: ``logsleuth.cli`` may import the library; nothing in the library imports
``logsleuth.cli`` (``logsleuth/__main__.py`` runs the entry point, ``cli/launch.py``, and does). ``import
logsleuth`` pulling in no typer/rich/click is checked in tests/api/test_api.py.
"""
from __future__ import annotations

from support.source_code import cycles, import_graph, modules

#: cycles left, each with its reason (none)
KNOWN_CYCLES: list = []


def test_no_import_cycle_between_modules():
    found = cycles(import_graph())
    assert [c for c in found if c not in KNOWN_CYCLES] == []
    assert [c for c in KNOWN_CYCLES if c not in found] == [], "a known cycle is gone: drop it from KNOWN_CYCLES"


def test_library_never_imports_the_cli():
    offenders = sorted(f"{m} -> {t}" for m, targets in import_graph().items() for t in targets
                       if t.startswith("logsleuth.cli") and not m.startswith("logsleuth.cli")
                       and m != "logsleuth.__main__")
    assert offenders == []


def test_graph_holds_lazy_and_relative_imports():
    """The walker sees what the tests above rely on: a relative import inside a function
    (the CLI imports the API in each command) and a module-level one."""
    graph = import_graph()
    assert "logsleuth.api" in graph["logsleuth.cli.app"]  # `from .. import api` inside commands
    assert "logsleuth.cli.params" in graph["logsleuth.cli.app"]  # `from .params import ...` at the top
    assert "logsleuth.cli.launch" in graph["logsleuth.__main__"]
    assert "logsleuth.cli.app" in graph["logsleuth.cli.launch"]  # `from .app import main` inside main()
    assert len(modules()) > 50


def test_cycle_finder():
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"}),
             "e": frozenset({"f"}), "f": frozenset({"e"}), "g": frozenset()}
    assert cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    assert cycles({"a": frozenset({"b"}), "b": frozenset()}) == []
