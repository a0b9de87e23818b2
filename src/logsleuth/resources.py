"""Locate logsleuth's data files (parser grammars, the GPU catalog, rule and report queries).

The data folders ``parsers/`` and ``queries/`` live at the top of the source checkout. A built wheel carries
them inside the package as ``logsleuth/_data/parsers`` and ``logsleuth/_data/queries`` (hatch force-include,
see pyproject.toml). :func:`data_path` hides that difference from callers.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

_PACKAGE_DIR = Path(__file__).resolve().parent
_INSTALLED_ROOT = _PACKAGE_DIR / "_data"
# src/logsleuth/resources.py -> parents[2] is the checkout root holding parsers/ and queries/.
_SOURCE_ROOT = _PACKAGE_DIR.parents[1]


def data_path(rel: str) -> Path:
    """Return the path of a data file or folder given relative to the data root, e.g. ``"parsers/gpus.toml"``.

    The installed package's ``_data/`` folder wins; otherwise the source checkout is used. The returned path
    may not exist (the caller reports a missing file with its own context).

    Raises ValueError for absolute paths or paths that climb out of the data root with ``..``.
    """
    parts = PurePosixPath(rel.replace("\\", "/"))
    if parts.is_absolute() or ".." in parts.parts or not parts.parts:
        raise ValueError(f"data path must be relative to the data root, got {rel!r}")
    installed = _INSTALLED_ROOT.joinpath(*parts.parts)
    if installed.exists():
        return installed
    return _SOURCE_ROOT.joinpath(*parts.parts)
