"""What the schema upgrades of ``db/migrations.py`` need from the derivations and grammars.

Contract: ``derivations()`` returns the ``migrations.Derivations`` the library's opener
(``api.open_db``) hands to ``db.connection.open_db``: per-run aggregates rebuilt by
``rollup.build_rollup`` and the event kinds the shipped grammars' bulk patterns emit. It
lives here because ``db/`` sits below ``derive/`` and ``formats/`` and may not import them.
"""
from __future__ import annotations

from ..db.migrations import Derivations


def _rollup(con, run_ids) -> None:
    from .rollup import build_rollup  # polars and the derivation SQL: only when an upgrade runs

    build_rollup(con, run_ids)


def _bulk_event_kinds() -> list[str]:
    from ..formats.grammar import default_grammars

    return sorted({p.emits for g in default_grammars() for p in g.patterns if p.table == "events" and p.bulk})


def derivations() -> Derivations:
    return Derivations(rollup=_rollup, bulk_event_kinds=_bulk_event_kinds)
