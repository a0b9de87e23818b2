"""The severities of findings, most severe first: the one definition every part reads.

Contract: ``SEVERITIES`` is ``("critical", "warning", "info")``; ``SEV_RANK[s]`` is the
position (0 = most severe), so ``SEV_RANK[a] <= SEV_RANK[b]`` means "a at or above b".
No imports: the CLI reads it to list ``--min-severity`` choices without loading the rules.
"""
from __future__ import annotations

from types import MappingProxyType

SEVERITIES = ("critical", "warning", "info")
SEV_RANK = MappingProxyType({s: i for i, s in enumerate(SEVERITIES)})


def at_or_above(severity: str, threshold: str) -> bool:
    """Whether ``severity`` is as severe as ``threshold`` or more."""
    return SEV_RANK[severity] <= SEV_RANK[threshold]
