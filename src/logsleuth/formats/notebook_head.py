"""Is a file a notebook? Recognised from its head, below every layer that asks.

Contract: ``notebook_kind(head)`` is ``(name, starting state)`` of the notebook wrapper a file
starting with ``head`` is (a Jupyter ``.ipynb``, or Kaggle's JSON log download), or None;
``is_notebook_head(head)`` says whether it is one. Telemetry detection asks so that a
notebook's JSON is not taken for a benchmark result; the unwrap stage (``ingest/notebook.py``)
asks to read the notebook's cell outputs as the log.
"""
from __future__ import annotations

import re

_NOTEBOOK_HEAD = re.compile(r'\s*\{\s*"(?:cells|metadata|nbformat)"\s*:')
_KAGGLE_HEAD = re.compile(r'\s*\[\s*\{\s*"stream_name"\s*:')


def notebook_kind(head: str) -> tuple[str, dict] | None:
    """(name, starting state) of the notebook wrapper of a file starting with ``head``, or None."""
    if _NOTEBOOK_HEAD.match(head) and '"cell_type"' in head:
        return "jupyter_notebook", {"array": "", "cell": ""}
    if _KAGGLE_HEAD.match(head):
        return "kaggle_log_json", {"array": "kaggle", "cell": ""}
    return None


def is_notebook_head(head: str) -> bool:
    """Whether a file starting with ``head`` is a notebook or a Kaggle log download."""
    return notebook_kind(head) is not None
