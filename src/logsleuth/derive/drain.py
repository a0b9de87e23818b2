"""Template miner for the lines no grammar pattern claimed (pipeline stage 7, "template").

Contract::

    def mine_templates(messages: pl.Series) -> tuple[pl.Series, pl.DataFrame]:
        '''messages: Utf8 series (one per unclaimed line, nulls allowed, may be empty).
        Returns (template_index per input row as UInt32 series aligned with input
                 (null for null input),
                 templates DataFrame with columns: template_index (UInt32), template (Utf8),
                 n_lines (UInt32), example_row (UInt32: index into `messages` of the first
                 line of that template)), sorted by n_lines desc.'''

    def mask_messages(messages: pl.Series) -> pl.Series:
        '''The masked form of every message (same length, nulls stay null).'''

How it works (no Python loop over input lines):

1. **Mask** (vectorized, polars ``str.replace_all``, Rust regex dialect; runs on the streaming
   engine so morsels are masked in parallel). ANSI escapes are removed, then variable parts
   become placeholder tokens, in this order: tqdm progress bars -> ``<BAR>`` (first, because
   a bar holds times and numbers the later masks would otherwise chew up); timestamps and
   dates -> ``<TS>`` (glog ``I0209 14:38:38.388363`` keeps its letter: ``I<TS>``); UUIDs ->
   ``<UUID>``; hex ids (``0x...``, hex runs of 8+ chars holding a letter) -> ``<HEX>``; IPv4
   with optional port -> ``<IP>``; file paths with line numbers -> ``<PATH>:<NUM>`` (and
   Python's ``File "<PATH>", line <NUM>``); quoted strings of 30+ chars -> ``'<STR>'`` /
   ``"<STR>"``; numbers (ints, floats, versions, exponents, thousands separators) -> ``<NUM>``
   with a glued unit (``GB``, ``%``, ``ms``, ``it/s``) kept after it, and comma-separated
   number lists -> ``<NUMS>``. Whitespace is collapsed, the text stripped and truncated to
   ``MAX_MASKED_CHARS`` characters. Pure digit runs are numbers, not hex.
2. **Deduplicate** the masked strings (count + first row per distinct string). Real logs
   collapse 10-1000x here; only the distinct masked strings reach step 3.
3. **Drain** (He et al. 2017; the algorithm of the drain3 package, self-contained, with its
   configuration pinned in the constants below: the drain3 package is not used because it
   silently reads ``drain3.ini`` from the working directory and is slow). Strings are
   tokenised on whitespace; the tree is keyed by token count, then by the first DEPTH-2
   tokens (tokens with a digit or a placeholder go to the ``<*>`` branch); a leaf holds
   clusters. A string joins the most similar cluster of its leaf if the similarity is >=
   SIM_TH, and the positions that differ become ``<*>``. Similarity is drain3's (equal
   non-wildcard tokens / tokens) except that positions where template and string hold the
   same mask placeholder (``<NUM>``, ``[<TS>]``, ``pid=<NUM>)``) count neither way: see
   ``_drain``. Distinct strings are processed in a deterministic order (count desc, then
   string asc), so the same multiset of lines always yields the same templates, whatever the
   input order.
4. **Map back** with a vectorized hash lookup (``replace_strict``); clusters whose final
   templates are equal are merged. ``template_index`` is 0-based: the rank in the templates
   frame, ordered by ``n_lines`` desc then ``template`` asc, so it does not depend on input
   order either. ``example_row`` is the first (lowest) row of the template.
"""

from __future__ import annotations

import re
from operator import eq

import numpy as np
import polars as pl

__all__ = [
    "DEPTH",
    "MAX_CHILDREN",
    "MAX_CLUSTERS",
    "MAX_MASKED_CHARS",
    "SIM_TH",
    "WILDCARD",
    "mask_messages",
    "mine_templates",
]

# --------------------------------------------------------------------------------------------
# Pinned configuration (the drain3 equivalents are named in brackets).
# --------------------------------------------------------------------------------------------

#: Depth of the prefix tree [drain_depth]: root -> token-count node -> the first DEPTH-2
#: tokens -> leaf. DEPTH = 4 routes on the first two tokens.
DEPTH = 4
#: Similarity threshold [drain_sim_th]: a string joins the most similar cluster of its leaf if
#: (number of positions where the cluster template has the same, non-wildcard token)
#: / (number of tokens) >= SIM_TH.
SIM_TH = 0.5
#: Max children of an inner tree node [drain_max_children]; tokens beyond it go to the
#: wildcard branch.
MAX_CHILDREN = 100
#: Max number of Drain clusters [drain_max_clusters]. Once reached, no new cluster is created:
#: a string that matches no existing cluster becomes its own template (its masked text,
#: verbatim). This bounds the Python work on pathological inputs.
MAX_CLUSTERS = 5000
#: Masked text is truncated to this many characters before deduplication and mining.
MAX_MASKED_CHARS = 512
#: The wildcard token written into templates at positions that vary [param_str].
WILDCARD = "<*>"

# --------------------------------------------------------------------------------------------
# Masks: (regex in the Rust dialect polars uses, replacement). Applied in this order.
# Character classes are ASCII ([0-9], [A-Za-z0-9_]) and word boundaries are ASCII
# ((?-u:\b)) so the regex engine stays on its fast DFA path even on non-ASCII lines.
# --------------------------------------------------------------------------------------------

_B = r"(?-u:\b)"  # ASCII word boundary
_HEXC = "[0-9a-fA-F]"
# A run of 8+ hex chars with at least one letter (pure digit runs are numbers, not ids).
# Without look-ahead this is spelled out by the position i of the first letter.
_HEX_RUN = (
    _B
    + "(?:"
    + "|".join(f"[0-9]{{{i}}}[a-fA-F]{_HEXC}{{{7 - i},}}" for i in range(7))
    + f"|[0-9]{{7,}}[a-fA-F]{_HEXC}*"
    + ")"
    + _B
)
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"

_ANSI_MASKS: list[tuple[str, str]] = [
    # CSI sequences (colours, cursor moves), OSC sequences, any other stray ESC+char.
    (r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]?", ""),
]

_MASKS: list[tuple[str, str]] = [
    # tqdm progress bars: "12%|█▎   | 1/8 [00:00<00:04,  1.73it/s]", SGLang's
    # "50% Completed | 1/2 [00:03<00:03,  3.11s/it]", and total-less "12it [00:01, 9.5it/s]".
    (
        r"(?:[0-9]{1,3}%[ ]*(?:Completed[ ]*)?)?(?:\|[^|\[\]\n]*)?\|?[ ]*"
        r"[0-9]+(?:\.[0-9]+)?[kMGT]?/[0-9?]+(?:\.[0-9]+)?[kMGT]?[ ]*"
        r"\[[0-9:?]+(?:<[0-9:?]+)?(?:,[^\]\n]*)?\]",
        " <BAR>",
    ),
    (r"[0-9]+(?:\.[0-9]+)?[kMGT]?(?:it|B)? \[[0-9:]+(?:<[0-9:?]+)?,[^\]\n]*\]", "<BAR>"),
    # Timestamps and dates. glog "I0209 14:38:38.388363" keeps its severity letter; then one
    # alternation (leftmost-first, longest forms first): ISO-like datetime, syslog
    # "Feb  9 14:38:13", US "11-20-2025 14:01:02", vLLM "01-15 10:23:45", bare date, bare time.
    (_B + r"([IWEF])[0-9]{4} " + _TIME, "${1}<TS>"),
    (
        r"[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?"
        r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
        r"|(?:" + _MONTHS + r") +[0-9]{1,2},? (?:[0-9]{4} )?" + _TIME
        + r"|[0-9]{2}[-/][0-9]{2}[-/][0-9]{4}(?:[ T]" + _TIME + ")?"
        + r"|[0-9]{2}-[0-9]{2} " + _TIME
        + r"|[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}"
        + r"|" + _TIME,
        "<TS>",
    ),
    # UUIDs, hex ids. Scientific floats are masked as numbers first, or the hex-run mask
    # would take "189000017300714e" out of "3.189000017300714e-05".
    (f"{_HEXC}{{8}}-{_HEXC}{{4}}-{_HEXC}{{4}}-{_HEXC}{{4}}-{_HEXC}{{12}}", "<UUID>"),
    (r"[0-9]+\.[0-9]+[eE][+-]?[0-9]+", "<NUM>"),
    (r"0[xX][0-9a-fA-F]+|" + _HEX_RUN, "<HEX>"),
    # IPv4 with optional port.
    (_B + r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]{1,5})?" + _B, "<IP>"),
    # File paths with line numbers. The leading group keeps the "//host:port" of URLs intact.
    (r'"[^"\n]*[/\\][^"\n]*", line [0-9]+', '"<PATH>", line <NUM>'),
    (
        r"(^|[ \t\"'(\[=,{])[A-Za-z0-9_.~<>\-]*(?:/[A-Za-z0-9_.+@<>\-]+)+:[0-9]+",
        "${1}<PATH>:<NUM>",
    ),
    # Long quoted strings.
    # An opening quote follows a non-word char and a closing quote precedes one ((?-u:\B)
    # next to a quote), so the closing quote of a short string is not taken as an opening one.
    (r"(?-u:\B)'[^'\n]{30,}'(?-u:\B)", "'<STR>'"),
    (r'(?-u:\B)"[^"\n]{30,}"(?-u:\B)', '"<STR>"'),
    # Numbers (thousands separators, decimals, versions, exponents); a unit glued to the
    # number ("GB", "%", "ms", "it/s") is not consumed. Then lists "1, 2, 4" -> "<NUMS>".
    (_B + r"[0-9]+(?:,[0-9]{3}" + _B + r")*(?:\.[0-9]+)*(?:[eE][+-]?[0-9]+)?", "<NUM>"),
    (r"<NUM>(?:[ ]*,[ ]*<NUM>)+", "<NUMS>"),
    # Whitespace: runs of 2+ and any non-space whitespace (tab, CR...) become one space.
    (r"\s{2,}|[\s&&[^ ]]", " "),
]

# Placeholder tokens written by the masks above.
_PLACEHOLDERS = ("TS", "UUID", "HEX", "IP", "PATH", "STR", "NUM", "NUMS", "BAR")
_PLACEHOLDER = re.compile("<(?:" + "|".join(_PLACEHOLDERS) + ")>")
# A token routes to the wildcard branch of the tree if it holds a digit or a placeholder.
_PARAM_TOKEN = re.compile(r"[0-9]|<(?:" + "|".join(_PLACEHOLDERS) + r"|\*)>")

def mask_messages(messages: pl.Series) -> pl.Series:
    """Masked form of each message (vectorized). Same length and name; nulls stay null."""
    s = messages if messages.dtype == pl.Utf8 else messages.cast(pl.Utf8)
    # The streaming engine runs the regex chain on morsels in parallel (~2x on 2 cores).
    masked = (
        s.to_frame("m")
        .lazy()
        .select(_mask_expr(pl.col("m")).alias(s.name))
        .collect(engine="streaming")
        .to_series()
    )
    return masked.rechunk()


def _mask_expr(expr: pl.Expr) -> pl.Expr:
    for pattern, repl in _ANSI_MASKS + _MASKS:
        expr = expr.str.replace_all(pattern, repl)
    return expr.str.strip_chars(" ").str.slice(0, MAX_MASKED_CHARS)


def mine_templates(messages: pl.Series) -> tuple[pl.Series, pl.DataFrame]:
    """Mine templates from unclaimed lines. See the module docstring for the contract."""
    masked = mask_messages(messages)
    rows = masked.to_frame("masked").with_row_index("row")
    uniq = (
        rows.drop_nulls("masked")
        .group_by("masked")
        .agg(pl.len().cast(pl.UInt32).alias("n"), pl.col("row").min().alias("first_row"))
        .sort(["n", "masked"], descending=[True, False])
    )
    uniq = uniq.with_columns(
        pl.Series("template", _drain(uniq["masked"].to_list()), dtype=pl.Utf8)
    )
    templates = (
        uniq.group_by("template")
        .agg(
            pl.col("n").sum().cast(pl.UInt32).alias("n_lines"),
            pl.col("first_row").min().cast(pl.UInt32).alias("example_row"),
        )
        .sort(["n_lines", "template"], descending=[True, False])
        .with_row_index("template_index")
        .select(
            pl.col("template_index").cast(pl.UInt32),
            "template",
            "n_lines",
            "example_row",
        )
    )
    mapping = uniq.select("masked", "template").join(
        templates.select("template", "template_index"), on="template"
    )
    index = masked.replace_strict(
        mapping["masked"], mapping["template_index"], default=None, return_dtype=pl.UInt32
    ).alias("template_index")
    return index, templates


# --------------------------------------------------------------------------------------------
# Drain over distinct masked strings (Python; the input here is already deduplicated).
# --------------------------------------------------------------------------------------------

_LEAF = None  # key of the cluster-id list inside the last tree level (tokens are never None)


def _route_key(token: str) -> str:
    return WILDCARD if _PARAM_TOKEN.search(token) else token


def _compare_keys(tpl: list[str]) -> tuple[list[str | None], list[str | None]]:
    """(constant tokens of `tpl` with None elsewhere, placeholder tokens with None elsewhere).

    Wildcard positions are None in both. ``sum(map(eq, key, tokens))`` then counts equal
    positions of one kind only, because ``eq(None, token)`` is False.
    """
    const: list[str | None] = []
    placeholder: list[str | None] = []
    for t in tpl:
        if t == WILDCARD:
            const.append(None)
            placeholder.append(None)
        elif _PLACEHOLDER.search(t):
            const.append(None)
            placeholder.append(t)
        else:
            const.append(t)
            placeholder.append(None)
    return const, placeholder


class _Leaf:
    """The clusters of one tree leaf as arrays, so that a string is compared with all of them
    at once (numpy) instead of one Python loop per cluster: 200,000 distinct lines reach
    thousands of clusters in one leaf. Rows follow cluster creation order. Tokens are interned
    to integers >= 0; -1 marks a position that never counts as equal (see _compare_keys)."""

    __slots__ = ("cids", "const", "place", "wild", "size")

    def __init__(self, n: int):
        self.cids: list[int] = []
        self.const = np.full((4, n), -1, dtype=np.int64)
        self.place = np.full((4, n), -1, dtype=np.int64)
        self.wild = np.zeros(4, dtype=np.int64)
        self.size = 0

    def add(self, cid: int, const: list[int], place: list[int], wild: int) -> int:
        if self.size == len(self.wild):  # grow by doubling
            self.const = np.vstack([self.const, np.full_like(self.const, -1)])
            self.place = np.vstack([self.place, np.full_like(self.place, -1)])
            self.wild = np.concatenate([self.wild, np.zeros_like(self.wild)])
        row = self.size
        self.set(row, const, place, wild)
        self.cids.append(cid)
        self.size += 1
        return row

    def set(self, row: int, const: list[int], place: list[int], wild: int) -> None:
        self.const[row] = const
        self.place[row] = place
        self.wild[row] = wild


def _drain(strings: list[str]) -> list[str]:
    """Cluster `strings` (in the given order); return the final template of each string.

    Similarity of a string to a cluster template of the same length n (drain3's
    ``get_seq_distance`` without params, plus one rule for mask placeholders)::

        equal constant tokens / (n - equal placeholder tokens)

    A constant token is neither the wildcard nor a token holding a mask placeholder
    (``<NUM>``, ``[<TS>]``, ``pid=<NUM>)``). Wildcard positions count in the denominator only,
    as in drain3. Positions where template and string hold the same placeholder token are left
    out of both terms: they say nothing about two lines being the same event, and counting
    them as equal lets a constant header (vLLM's ``(APIServer pid=<NUM>) INFO <TS>
    [file.py:<NUM>]``) pull unrelated messages over SIM_TH. Measured on the real corpus that
    rule turned merges such as ``... INFO <TS> <*> <*> <*> <*>`` back into separate templates.
    """
    root: dict[int, dict] = {}
    clusters: list[list[str]] = []  # template tokens per cluster id
    where: list[tuple[_Leaf, int] | None] = []  # (leaf, row) per cluster id (None: standalone)
    assigned: list[int] = []  # cluster id per input string
    standalone: dict[int, str] = {}  # cluster ids created after MAX_CLUSTERS was reached
    n_prefix = DEPTH - 2
    ids: dict[str, int] = {}  # token -> integer

    def keys(tpl: list[str]) -> tuple[list[int], list[int], int]:
        const, place = _compare_keys(tpl)
        return ([-1 if t is None else ids.setdefault(t, len(ids)) for t in const],
                [-1 if t is None else ids.setdefault(t, len(ids)) for t in place], tpl.count(WILDCARD))

    for text in strings:
        tokens = text.split()
        n = len(tokens)
        tok_ids = np.array([ids.setdefault(t, len(ids)) for t in tokens], dtype=np.int64)
        cid = _match(root.get(n), tokens, tok_ids, n, n_prefix)
        if cid is not None:
            tpl = clusters[cid]
            new = [a if a == b else WILDCARD for a, b in zip(tpl, tokens)]
            if new != tpl:
                clusters[cid] = new
                leaf, row = where[cid]
                leaf.set(row, *keys(new))
            assigned.append(cid)
            continue
        cid = len(clusters)
        clusters.append(tokens)
        assigned.append(cid)
        if len(clusters) - len(standalone) > MAX_CLUSTERS:
            # Over the cap: this string keeps its masked text as its own template and is not
            # added to the tree (no other string can join it).
            standalone[cid] = text
            where.append(None)
            continue
        leaf = _add_to_tree(root.setdefault(n, {}), tokens, n_prefix, n)
        where.append((leaf, leaf.add(cid, *keys(tokens))))

    final = [" ".join(t) for t in clusters]
    for cid, text in standalone.items():
        final[cid] = text
    return [final[cid] for cid in assigned]


def _match(node: dict | None, tokens: list[str], tok_ids, n: int, n_prefix: int) -> int | None:
    """Tree search, then the best cluster of the leaf (drain3 tree_search + fast_match).

    Best = highest similarity (see _drain), then most wildcards, then oldest cluster; it is
    returned if its similarity >= SIM_TH.
    """
    if node is None:
        return None
    for token in tokens[:n_prefix]:
        child = node.get(token)
        if child is None:
            child = node.get(WILDCARD)
            if child is None:
                return None
        node = child
    leaf = node.get(_LEAF)
    if not leaf or not leaf.size:
        return None
    k = leaf.size
    equal = (leaf.const[:k] == tok_ids).sum(axis=1)
    denom = n - (leaf.place[:k] == tok_ids).sum(axis=1)
    # denom 0 (every position the same placeholder) has similarity 1: then equal is 0
    sims = (equal + (denom == 0)) / np.maximum(denom, 1)
    best_sim = sims.max()
    if best_sim < SIM_TH:
        return None
    # the most wildcards among the best, the first (oldest) of those: argmax returns the first
    return leaf.cids[int(np.argmax(np.where(sims == best_sim, leaf.wild[:k], -1)))]


def _add_to_tree(node: dict, tokens: list[str], n_prefix: int, n: int) -> _Leaf:
    """Descend (creating nodes) along the first `n_prefix` tokens; return the leaf."""
    for token in tokens[:n_prefix]:
        child = node.get(token)
        if child is None:
            key = _route_key(token)
            if key != WILDCARD:
                n_children = sum(1 for k in node if k is not _LEAF)
                if WILDCARD in node:
                    if n_children >= MAX_CHILDREN:
                        key = WILDCARD
                elif n_children + 1 >= MAX_CHILDREN:
                    # Keep the last slot for the wildcard branch.
                    key = WILDCARD
            child = node.setdefault(key, {})
        node = child
    leaf = node.get(_LEAF)
    if leaf is None:
        leaf = node[_LEAF] = _Leaf(n)
    return leaf
