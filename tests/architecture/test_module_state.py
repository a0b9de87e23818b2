"""No module-level mutable state: a module-level dict, list or set that some code changes
(``X[k] = v``, ``X.append(...)``, ``X.clear()``, ``X += ...``), or a ``global`` statement,
is state shared by every caller of the process (threads, the tests of one session, two
databases opened side by side). Such state becomes an object the caller holds and passes
around. A cache of a *pure* function of immutable arguments is acceptable and is written
as ``functools.lru_cache`` on the loader (the detector does not flag it: it holds no
container a caller could change). Containers that are only read are constants; prefer
tuples, frozensets and ``MappingProxyType`` for them, so that nobody can change them.
"""
from __future__ import annotations

import ast
from pathlib import Path

from support.source_code import Module, module_state, mutable_globals, mutations

#: state left, each with its reason. Process state by nature: interrupts.py (signal handlers are per process
#: and reach nothing else; _COMMITTED, what this process committed, and _LAST, the interrupt
#: delivered after a commit, are what they report); ingest/workers.py _worker (what the pool
#: initializer sets in each worker process, never in the caller).
KNOWN = {("interrupts.py", "_COMMITTED"), ("interrupts.py", "_LAST"),
         ("ingest/workers.py", "_worker")}


def test_no_module_level_mutable_state():
    assert [f"{file} {name}: {where}" for file, name, where in module_state() if (file, name) not in KNOWN] == []


def test_known_state_is_still_there():
    gone = KNOWN - {(file, name) for file, name, _ in module_state()}
    assert gone == set(), f"gone: drop from KNOWN: {sorted(gone)}"


def _module(code: str) -> Module:
    return Module("logsleuth.example", Path("example.py"), ast.parse(code), False)


def test_detector_sees_changes_and_globals():
    mod = _module("_CACHE = {}\n_SEEN = set()\nLIMITS = (1, 2)\nFLAG = None\n"
                  "def f(k):\n    _CACHE[k] = 1\n    _SEEN.add(k)\n    global FLAG\n    FLAG = k\n"
                  "def g(rows):\n    rows.append(1)\n    _SEEN = set()\n    _SEEN.add(2)\n")
    assert mutable_globals(mod) == {"_CACHE": 1, "_SEEN": 2}
    changes = {(name, how) for name, _, how in mutations(mod)}
    assert {("_CACHE", "assign"), ("_SEEN", ".add()"), ("FLAG", "global"), ("rows", ".append()")} <= changes
