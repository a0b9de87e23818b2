"""The package's own source as data, for the architecture tests: its modules, the imports
between them, its functions and its module-level names.

Contract: ``modules()`` parses every ``src/logsleuth/**/*.py`` once (``ast``) and returns
``Module`` records keyed by dotted name. ``import_graph()`` maps each module to the package
modules it imports, at module level and inside functions alike (an import in a function
still ties the two modules together), relative imports resolved, ``from pkg import name``
pointing at ``pkg.name`` when that is a module and at ``pkg`` otherwise; imports under
``if TYPE_CHECKING:`` are left out (they never run). ``cycles(graph)`` returns the strongly
connected components of more than one node (Tarjan), each sorted.
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from support.paths import ROOT

SRC = ROOT / "src"
PACKAGE = "logsleuth"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool

    @property
    def rel(self) -> str:
        """Path below src/logsleuth, e.g. ``cli/app.py`` (how tests and reports name files)."""
        return self.path.relative_to(SRC / PACKAGE).as_posix()

    @property
    def package(self) -> str:
        """The package a relative import of this module starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@functools.lru_cache(maxsize=None)  # the source does not change during a test session
def modules() -> dict[str, Module]:
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        out[name] = Module(name, path, ast.parse(path.read_text(), str(path)), is_package)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _resolve(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(mod: Module) -> list[tuple[str, int]]:
    """(dotted target, line) of every import statement of ``mod`` that can run."""
    skip = _type_checking_nodes(mod.tree)
    out = []
    for node in ast.walk(mod.tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(mod, node)
            out += [(f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base, node.lineno)
                    for a in node.names]
    return out


def _owner(target: str) -> str | None:
    """The package module a dotted import target lives in (None outside the package)."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in modules():
            return name
        parts.pop()
    return None


@functools.lru_cache(maxsize=None)
def import_graph() -> dict[str, frozenset[str]]:
    graph = {}
    for name, mod in modules().items():
        targets = {_owner(t) for t, _ in imported_names(mod) if t.split(".")[0] == PACKAGE}
        graph[name] = frozenset(t for t in targets if t and t != name)
    return graph


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


#: calls that build a mutable container
_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "bytearray"}
#: methods that change a container in place
_MUTATORS = {"append", "extend", "insert", "add", "update", "clear", "pop", "popitem", "remove", "discard",
             "setdefault", "sort", "reverse", "appendleft", "extendleft", "__setitem__", "__delitem__"}


def _is_mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in _MUTABLE_CALLS
    return False


def mutable_globals(mod: Module) -> dict[str, int]:
    """Module-level names bound to a mutable container: name -> line."""
    out = {}
    for stmt in mod.tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
        if targets and _is_mutable(stmt.value):
            out.update({t.id: stmt.lineno for t in targets if isinstance(t, ast.Name)})
    return out


def _root_name(node: ast.expr) -> str | None:
    """``X`` of ``X``, ``X[k]``, ``X.attr`` chains (the container a mutation lands in)."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def mutations(mod: Module) -> list[tuple[str, int, str]]:
    """(name, line, how) of every in-place change of a name in ``mod``: item or attribute
    assignment/deletion, augmented assignment, a mutating method call, ``global``."""
    out = []
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Global):
            out += [(n, node.lineno, "global") for n in node.names]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) or (isinstance(node, ast.AugAssign) and isinstance(t, ast.Name)):
                    if (name := _root_name(t)) is not None:
                        out.append((name, node.lineno, type(node).__name__.lower()))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _MUTATORS and (name := _root_name(node.func.value)) is not None):
            out.append((name, node.lineno, f".{node.func.attr}()"))
    return out


def module_state() -> list[tuple[str, str, str]]:
    """Module-level mutable containers that some code changes, and every ``global``:
    (file, NAME, ``line ... changed at file:line how``). A name counts in its own module
    and in every module that imports it by name."""
    mods = modules()
    defined = {name: mutable_globals(m) for name, m in mods.items()}
    found = []
    for name, mod in mods.items():
        local = dict(defined[name])  # name -> defining module
        owner = {n: name for n in local}
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(mod, node)
                for a in node.names:
                    if a.name in defined.get(base, {}):
                        owner[a.asname or a.name] = base
        shadowed = _function_locals(mod)
        for var, line, how in mutations(mod):
            if how == "global":
                found.append((mod.rel, var, f"global statement at line {line}"))
            elif var in owner and (var, line) not in shadowed:
                src = mods[owner[var]]
                found.append((src.rel, var, f"line {defined[owner[var]][var]}, changed at {mod.rel}:{line} {how}"))
    return sorted(set(found))


def _function_locals(mod: Module) -> set[tuple[str, int]]:
    """(name, line) of the lines inside a function where ``name`` is a local of that function
    (assigned or a parameter there): a change to it is not a change to the global."""
    out = set()
    for fn in ast.walk(mod.tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        args = fn.args
        names = {a.arg for a in args.args + args.kwonlyargs + args.posonlyargs}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a}
        body = fn.body if isinstance(fn.body, list) else [fn.body]
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    names.add(n.id)
        lines = range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
        out |= {(name, line) for name in names for line in lines}
    return out


def long_functions(limit: int) -> list[tuple[str, int, int, str]]:
    """(``file:function``, line, length, the def line) of every function or method longer
    than ``limit`` lines, counted from its ``def`` line to its last line (decorators not
    counted, the signature and docstring counted)."""
    out = []
    for mod in modules().values():
        lines = mod.path.read_text().splitlines()
        for node in ast.walk(mod.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    out.append((f"{mod.rel}:{node.name}", node.lineno, length, lines[node.lineno - 1]))
    return sorted(out)
