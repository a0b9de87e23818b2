"""The on-disk memory of which rule SQL is exactly one SELECT (see ``SelectOnlyCache``)."""
from __future__ import annotations

import os
import re

from ..db.sandbox import select_only

_HASH = re.compile(r"[0-9a-f]{64}")


class SelectOnlyCache:
    """``select_only`` remembered across processes: the SHA-256 of each rule SQL (with the
    DuckDB version, whose parser decides) that was found to be exactly one SELECT, one per
    line in ``rules-select-only.txt`` under the user's cache folder. Parsing 60 rule files
    with DuckDB took ~0.13 s of every diagnose; a hit costs a hash. A missing, unreadable
    or corrupt file only means checking again; only passing SQL is remembered, so a rule
    that fails is re-checked (and refused) every time. Off with LOGSLEUTH_NO_GRAMMAR_CACHE.
    Rules cannot write even if this file were forged: they run in read-only transactions."""

    NAME = "rules-select-only.txt"
    KEEP = 2000  # hashes kept (newest first): edits of user rules do not grow it forever

    def __init__(self):
        from .. import settings

        self.path = settings.user_cache_dir() / self.NAME if settings.grammar_cache_enabled() else None
        self.known: list[str] = []
        self.new: list[str] = []
        if self.path is not None:
            try:
                self.known = [h for h in self.path.read_text(encoding="ascii").split() if _HASH.fullmatch(h)]
            except (OSError, ValueError):
                self.known = []
        self._set = set(self.known)

    @staticmethod
    def _key(sql: str) -> str:
        import hashlib

        import duckdb

        return hashlib.sha256(f"{duckdb.__version__}\0{sql}".encode()).hexdigest()

    def select_only(self, sql: str) -> str | None:
        key = self._key(sql)
        if key in self._set:
            return None
        why = select_only(sql)
        if why is None:
            self._set.add(key)
            self.new.append(key)
        return why

    def save(self) -> None:
        if self.path is None or not self.new:
            return
        keep = list(dict.fromkeys(self.new + self.known))[: self.KEEP]
        tmp = self.path.with_name(f"{self.NAME}.{os.getpid()}.tmp")
        try:  # written aside and renamed: a reader never sees half a file
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text("\n".join(keep) + "\n", encoding="ascii")
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass
