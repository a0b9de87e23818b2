"""The grammars ingest parses with: loaded, and their sample lines checked against the real
classifier once per set of grammar files and classifier code.

Contract: ``checked_grammars(grammar_dirs=())`` returns the shipped and user grammars (plus
``grammar_dirs``) with regexes compiled and every sample line claimed by its own pattern; a
stamp in the user cache remembers a passed check (``LOGSLEUTH_NO_GRAMMAR_CACHE=1`` always
re-checks). The grammars are the same cached objects ``formats.grammar.default_grammars``
gives with ``check_regexes=False``, so the derivations below ingest read the very set ingest
parsed with. ``sample_problems`` is the check itself (``formats check`` runs it too).
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from .. import settings
from ..formats.grammar import Grammar, Pattern, Problem, default_grammars, grammar_files, load_grammars, raise_problems
from ..resources import data_path


def sample_problems(grammars: list[Grammar]) -> list[Problem]:
    """Every sample line must be classified as its own pattern by the full classifier."""
    from .parse import classify_lines

    problems: list[Problem] = []
    by_engine: dict[str, list[tuple[Pattern, str]]] = {}
    for g in grammars:
        for p in g.patterns:
            for s in p.samples:
                by_engine.setdefault(g.engine, []).append((p, s))
    engines = sorted({g.engine for g in grammars if g.engine != "common"}) or ["none"]
    for engine, items in by_engine.items():
        # a common pattern's sample may carry either engine's header: any engine may claim it
        tries = [engine] if engine != "common" else engines
        results = [classify_lines([s for _, s in items], grammars, e) for e in tries]
        for i, (p, sample) in enumerate(items):
            got = [r[i] for r in results]
            if p.name not in got:
                claimed = next((x for x in got if x), None)
                problems.append(Problem(
                    f"{p.source_file} pattern '{p.name}'",
                    f"sample not claimed by its own pattern (claimed by: {claimed or 'nothing'})\n    {sample}",
                    hint="fix the regex or the literal, or reorder patterns"))
    return problems


def check_samples_claimed(grammars: list[Grammar]) -> None:
    raise_problems(sample_problems(grammars))


def _stamp(paths: list[Path]) -> Path | None:
    """Cache stamp naming these grammar files and the code that checks and classifies them."""
    if not settings.grammar_cache_enabled():
        return None
    code = Path(__file__).resolve().parents[1]
    try:
        h = hashlib.sha256()
        for f in sorted(paths, key=lambda p: str(p)) + [code / "formats" / "grammar.py", code / "formats" / "schema.py",
                                                        code / "ingest" / "parse.py", code / "ingest" / "read.py",
                                                        data_path("parsers/grammar.schema.json")]:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        return settings.user_cache_dir() / f"grammar-checked-{h.hexdigest()[:32]}"
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def _checked(dirs: tuple[str, ...]) -> tuple[Grammar, ...]:
    paths = grammar_files(extra_dirs=list(dirs))
    stamp = _stamp(paths)
    if stamp is None or not stamp.exists():
        check_samples_claimed(load_grammars(paths))  # regexes compiled, samples classified
        if stamp is not None:
            try:
                stamp.parent.mkdir(parents=True, exist_ok=True)
                stamp.write_text("ok\n", encoding="utf-8")
            except OSError:
                pass
    return default_grammars(dirs, check_regexes=False)


def checked_grammars(grammar_dirs=()) -> tuple[Grammar, ...]:
    """Shipped + user grammars (+ ``grammar_dirs``) with regexes and samples checked (see the
    module contract); cached per folder list for the life of the process."""
    return _checked(tuple(str(d) for d in grammar_dirs))

