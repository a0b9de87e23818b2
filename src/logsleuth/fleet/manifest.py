"""The dataset manifest: which part files make up the dataset, and what each source was.

Contract: the manifest (``_logsleuth_manifest.json`` at the dataset root) is the single
source of truth. A part file not listed in it does not exist for readers, so an ingest
killed at any point leaves the previous dataset intact; the next commit removes such
orphans. Each source entry keeps its sha256 and size, so a re-ingest of the same bytes is a no-op
and a grown file (its first ``bytes`` bytes still hash to ``sha256``) replaces its entry.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field

from ..errors import BadInputError

MANIFEST = "_logsleuth_manifest.json"
FORMAT = "logsleuth-dataset"
FORMAT_VERSION = 1

#: a table name as the schema writes it: the first folder of every part file's path
_TABLE = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass
class SourceEntry:
    source_id: int
    path: str
    name: str
    sha256: str
    bytes: int
    host: str
    date: str
    kind: str = ""
    engine: str = ""
    n_lines: int = 0
    n_runs: int = 0
    files: dict = field(default_factory=dict)  # table -> part file path relative to the root


@dataclass
class Manifest:
    schema_version: int
    generation: int = 0
    sources: list = field(default_factory=list)  # list[SourceEntry]
    tables: dict = field(default_factory=dict)  # table -> [[column, type], ...] (for empty views)
    retired: list = field(default_factory=list)  # part files this generation dropped; deleted at the next

    def next_source_id(self) -> int:
        return max((s.source_id for s in self.sources), default=0) + 1

    def by_path(self, path: str) -> SourceEntry | None:
        return next((s for s in self.sources if s.path == path), None)

    def by_sha(self, sha: str) -> SourceEntry | None:
        return next((s for s in self.sources if s.sha256 == sha), None)

    def part_files(self, table: str) -> list[str]:
        return [s.files[table] for s in self.sources if table in s.files]

    def to_json(self) -> str:
        body = {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}
        return json.dumps(body, indent=1, sort_keys=True)


def load_manifest(storage, schema_version: int) -> Manifest:
    """The dataset's manifest, or an empty one for a new dataset; a foreign file is refused."""
    text = storage.read_text(MANIFEST)
    if text is None:
        return Manifest(schema_version=schema_version)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{storage.uri(MANIFEST)}: not a logsleuth dataset manifest ({exc.msg})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadInputError(f"{storage.uri(MANIFEST)}: not a logsleuth dataset manifest")
    if raw.get("format_version", 0) > FORMAT_VERSION:
        raise BadInputError(f"{storage.uri(MANIFEST)}: written by a newer logsleuth (dataset format "
                            f"{raw.get('format_version')}); upgrade logsleuth")
    try:
        sources = [SourceEntry(**s) for s in raw.get("sources", [])]
    except TypeError as exc:
        raise BadInputError(f"{storage.uri(MANIFEST)}: not a logsleuth dataset manifest ({exc})") from None
    manifest = Manifest(schema_version=raw.get("schema_version", schema_version), generation=raw.get("generation", 0),
                        sources=sources, tables=raw.get("tables", {}), retired=raw.get("retired", []))
    _check_paths(manifest, storage.uri(MANIFEST))
    return manifest


def inside_root(rel: object) -> bool:
    """Whether ``rel`` names a file under the dataset root by its text alone: relative, no
    ``..``, no scheme, no empty or ``.`` step (storage.py checks links on top of this)."""
    if not isinstance(rel, str) or not rel or rel.startswith(("/", "\\")) or "://" in rel or "\x00" in rel:
        return False
    return all(step not in ("", ".", "..") for step in re.split(r"[/\\]", rel))


def _check_paths(manifest: Manifest, where: str) -> None:
    """Every table name and part path the manifest names stays under the root: a manifest
    travels between hosts and stores, and the clean-up deletes by these names."""
    bad = [t for t in manifest.tables if not isinstance(t, str) or not _TABLE.fullmatch(t)]
    for s in manifest.sources:
        if not isinstance(s.files, dict):
            bad.append(repr(s.files))
            continue
        bad += [t for t in s.files if not isinstance(t, str) or not _TABLE.fullmatch(t)]
        bad += [f for t, f in s.files.items() if not inside_root(f) or f.split("/", 1)[0] != t]
    retired = manifest.retired if isinstance(manifest.retired, list) else [manifest.retired]
    bad += [f for f in retired if not inside_root(f) or not _TABLE.fullmatch(f.split("/", 1)[0])]
    if bad:
        raise BadInputError(f"{where}: names a path outside the dataset ({str(bad[0])[:200]!r}); "
                            "nothing was read or deleted")


def file_digest(path: str, limit: int | None = None) -> tuple[str, int]:
    """(sha256, size) of the file, or of its first ``limit`` bytes, read in 1 MiB blocks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20 if limit is None else min(1 << 20, limit - size)):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size
