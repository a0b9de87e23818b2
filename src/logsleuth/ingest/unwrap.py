"""Unwrap: peel what a capturing program put around a log before the engine grammar reads it.

Contract:
* ``learn(head, grammars) -> Wrapper | None`` decides, once per file, from the text of its
  head, whether its lines carry a wrapper: a notebook (ingest/notebook.py), a named prefix
  of parsers/wrappers.toml, or a prefix learned from the file itself. None: the file is read
  as it is (every bare log: a file whose lines mostly start with an engine header is never
  learned on).
* ``peel(frame, wrapper)`` takes a chunk as read (``READ_COLUMNS``) and returns it with
  ``raw`` holding the text the engine grammar is to read, ``_line`` the line as read and
  ``_dup`` marking a record a doubling viewer printed again. One polars regex per chunk; no
  Python per line. Redaction then masks ``raw`` (the peeled text: a notebook's ``"text": [``
  is not a prompt field) and ``restore(frame)`` rebuilds ``_line`` from the masked text, so
  the stored line (ingest/write.py stores ``_line`` in ``lines.raw``) is masked too.
* ``peeled_head(head, wrapper)`` is the head as detection is to see it.
* ``drop_repeats(parsed)``: a doubled record is stored as a line but claimed by nothing, so
  it is counted once in the typed tables and cannot start a second run.

How a prefix is learned (``_learned``): the first lines of the head are cut into tokens
(digit runs, letter runs, blank runs, other symbols); position by position, while nearly
every line agrees, a token becomes a constant (the same text on the lines) or a variable of
its class (a clock's digits, a counter, padding, a pod or service name). Every blank that
ends a run of agreed tokens is a candidate end of the prefix; each candidate is scored by
parsing the peeled sample with the engine grammar (lines that then carry an engine header
or are claimed by a pattern), and the best one is kept only if it beats the text as it came
by a clear margin: an engine's own header (SGLang ``[date TP0]``, vLLM ``INFO mm-dd ...``,
ISO stamps the grammar reads) peeled off scores lower, so it is never taken for a wrapper.
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field

import polars as pl

from ..resources import data_path

#: the columns peeling adds to a chunk (kept through parsing, see workers.reparse)
WRAP_COLUMNS = ("_line", "_dup")
_TOKEN = re.compile(r"\d+|[^\W\d_]+|[ \t]+|(?:[^\w\s]|_)+")
_CLASS_RX = {"D": r"\d+", "A": r"[^\W\d_]+", "P": r"(?:[^\w\s]|_)+"}
#: a clock near the start of a line (the engine header's time)
_CLOCK = r"^.{0,80}?\d\d:\d\d:\d\d"
#: sample lines a candidate wrapper is scored on (parsed with the engine grammar)
_SCORE_LINES = 200
#: longest prefix looked at when learning (characters)
_MAX_PREFIX = 96


@dataclass
class Wrapper:
    """A file's wrapper: ``regex`` matches the prefix to peel (anchored); ``kind`` is
    ``prefix`` or ``notebook``; ``doubled``: records printed twice are claimed once."""
    name: str
    regex: str = ""
    kind: str = "prefix"
    doubled: bool = False
    state: dict = field(default_factory=dict)  # carried across chunks (notebook structure)

    def to_json(self) -> dict:
        return {"name": self.name, "regex": self.regex, "kind": self.kind, "doubled": self.doubled,
                "state": dict(self.state)}

    @classmethod
    def from_json(cls, data: dict | None) -> "Wrapper | None":
        return cls(**data) if data else None


@dataclass(frozen=True)
class _Policy:
    named: tuple  # (name, regex, doubles)
    bare: str  # alternation of engine header starts
    bare_share: float
    sample_lines: int
    min_coverage: float
    window: int
    doubled_share: float


@functools.lru_cache(maxsize=1)
def policy() -> _Policy:
    """parsers/wrappers.toml, loaded and checked once (a bad regex or a sample its regex
    does not match is a packaging error, reported by name)."""
    data = tomllib.loads(data_path("parsers/wrappers.toml").read_text(encoding="utf-8"))
    named = []
    for w in data.get("wrapper", []):
        rx = re.compile(w["regex"])
        for s in w.get("samples", []):
            if not rx.match(s):
                raise ValueError(f"parsers/wrappers.toml wrapper {w['name']}: sample not matched: {s!r}")
        named.append((w["name"], w["regex"], bool(w.get("doubles", False))))
    learn_ = data["learn"]
    return _Policy(tuple(named), "^(?:" + "|".join(data["bare"]["starts"]) + ")", float(data["bare"]["share"]),
                   int(learn_["sample_lines"]), float(learn_["min_coverage"]), int(learn_["repeat_window"]),
                   float(learn_["doubled_share"]))


# --- deciding, once per file ------------------------------------------------------------


def learn(head: str, grammars) -> Wrapper | None:
    """The wrapper of a file whose head is ``head``, or None (read the file as it is)."""
    from .notebook import notebook_kind

    nb = notebook_kind(head)
    if nb is not None:
        return Wrapper(nb[0], kind="notebook", state=nb[1])
    pol = policy()
    lines = _sample(head, pol.sample_lines)
    if len(lines) < 2:
        return None
    sample = pl.Series("raw", lines, dtype=pl.Utf8)
    if _headed(sample, pol).mean() >= pol.bare_share:
        return None  # the engine's own headers start most lines
    best = _best_wrapper(sample, grammars, pol)
    if best is not None:  # measured, whatever the wrapper's name promises: a bare record seen twice stays
        best.doubled = _doubled(sample, best, pol)
    return best


def _headed(text: pl.Series, pol: _Policy) -> pl.Series:
    """Lines starting with an engine header (colour codes aside)."""
    from .read import strip_ansi

    return pl.select(strip_ansi(pl.lit(text)).str.contains(pol.bare)).to_series()


def _sample(head: str, n: int) -> list[str]:
    """Up to ``n`` non-blank lines of the head (the last, maybe cut, line left out)."""
    lines = head.split("\n")
    if len(lines) > 1:
        lines = lines[:-1]
    out = [ln.rstrip("\r") for ln in lines if ln.strip()]
    return out[:n]


def _best_wrapper(sample: pl.Series, grammars, pol: _Policy) -> Wrapper | None:
    """The candidate (named, then learned) whose peeled sample the grammar knows best."""
    candidates = [Wrapper(name, rx, doubled=d) for name, rx, d in pol.named]
    candidates += [Wrapper("learned", rx) for rx in _learned(sample.to_list(), pol.min_coverage)]
    # the coverage test is one regex over the sample; only what passes it is parsed
    candidates = [c for c in candidates if sample.str.contains(c.regex).mean() >= pol.min_coverage]
    if not candidates:
        return None
    # scored on the first lines only: parsing is what learning costs (~20 ms a candidate)
    scored = sample.head(_SCORE_LINES)
    margin = max(2, int(0.1 * scored.len()))
    scores = _scores([scored] + [_peel_text(scored, c.regex) for c in candidates], grammars)
    (base, base_all), best, best_score = scores[0], None, scores[0]
    for cand, score in zip(candidates, scores[1:]):
        # more headed or typed lines; or as many, and more lines claimed at all (a traceback
        # tail has no header: its frames are what the grammar knows)
        better = score[0] >= base + margin or (score[0] >= base and score[1] >= base_all + margin)
        if better and score > best_score:
            best, best_score = cand, score
    return best


def _scores(texts: list[pl.Series], grammars) -> list[tuple[int, int]]:
    """Per text, (lines the engine grammar knows: an engine header peeled, or a pattern of a
    typed table claiming them; lines any pattern claims), with the engine detection picks on
    that text. The texts of one engine are parsed together, in one call (parsing costs the
    same for 200 lines or 2,000)."""
    from .detect import detect
    from .parse import ShapeCache, parse_frame

    by_engine: dict[str, list[int]] = {}
    for k, text in enumerate(texts):
        det = detect("\n".join(text.to_list()), grammars)
        # the engine whose literals the text holds most (a benchmark printout's too)
        engine = det.engine if det.kind == "server_log" else max(det.scores, key=det.scores.get, default="none")
        by_engine.setdefault(engine, []).append(k)
    out = [(0, 0)] * len(texts)
    for engine, ks in by_engine.items():
        frame = pl.concat([pl.DataFrame({"raw": texts[k], "_k": pl.repeat(k, texts[k].len(), eager=True,
                                                                          dtype=pl.Int32)}) for k in ks])
        frame = frame.with_row_index("line_no", offset=1).with_columns(pl.col("line_no").cast(pl.Int64),
                                                                      pl.lit(False).alias("truncated"))
        parsed = parse_frame(frame.select("line_no", "raw", "truncated"), grammars, engine, ShapeCache()).frame
        # an indented line claimed by the catch-all "lines" table (traceback body) does not
        # count: a prefix starting with blanks would make every line one
        known = pl.col("table").is_not_null() & ((pl.col("table") != "lines") | ~pl.col("raw").str.contains(r"^\s"))
        for g in ("level", "time", "md", "date"):
            if g in parsed.columns:
                known = known | pl.col(g).is_not_null()
        counts = parsed.with_columns(frame["_k"]).group_by("_k").agg(
            known.sum().alias("n"), pl.col("table").is_not_null().sum().alias("all"))
        for k, n, n_all in counts.iter_rows():
            out[k] = (int(n), int(n_all))
    return out


def _learned(lines: list[str], coverage: float) -> list[str]:
    """Candidate prefix regexes common to ``coverage`` of ``lines``: one per blank that
    ends a run of agreed tokens (see the module docstring), shortest first."""
    toks = [_TOKEN.findall(ln[:_MAX_PREFIX]) for ln in lines]
    need = coverage * len(toks)
    parts: list[str] = []
    out: list[str] = []
    pos = [0] * len(toks)  # each line's next token
    for _ in range(40):
        heads = [t[p] if p < len(t) else None for t, p in zip(toks, pos)]
        blank = sum(1 for h in heads if h is not None and h[0] in " \t")
        if blank >= need / 2 and blank < len(heads):
            # padding some lines have and others not (a right-aligned counter): optional
            parts.append(r"[ \t]*")
            pos = [p + 1 if h is not None and h[0] in " \t" else p for h, p in zip(heads, pos)]
            continue
        piece = _agreed(heads, need)
        if piece is None:
            break
        rx, is_blank, widths = piece
        if is_blank:
            # the blank ends a candidate prefix: its narrowest width is the separator (the rest
            # of a wider one is the message's own indentation)
            out.append("^" + "".join(parts) + r"[ \t]{%d}" % min(widths))
            parts.append(r"[ \t]+")
        else:
            parts.append(rx)
        pos = [p + 1 for p in pos]
    return out[:8]


def _agreed(heads: list, need: float) -> tuple[str, bool, list] | None:
    """(regex, whether blank, blank widths) of the token that ``need`` lines have here."""
    present = [h for h in heads if h is not None]
    if len(present) < need:
        return None
    counts: dict[str, int] = {}
    for h in present:
        counts[h] = counts.get(h, 0) + 1
    text, n = max(counts.items(), key=lambda kv: kv[1])
    if present[0][0] in " \t" and all(h[0] in " \t" for h in present):
        return r"[ \t]+", True, [len(h) for h in present]
    if n >= need:
        return re.escape(text), False, []
    classes: dict[str, int] = {}
    for h in present:
        c = _klass(h)
        classes[c] = classes.get(c, 0) + 1
    c, n = max(classes.items(), key=lambda kv: kv[1])
    if n >= need and c in _CLASS_RX:
        return _CLASS_RX[c], False, []
    return None


def _klass(tok: str) -> str:
    ch = tok[0]
    if ch.isdigit():
        return "D"
    if ch in " \t":
        return "S"
    if ch.isalpha():
        return "A"
    return "P"


def _doubled(sample: pl.Series, w: Wrapper, pol: _Policy) -> bool:
    """Whether the capturer printed most records twice: of the peeled lines that carry an
    engine header with a clock (unique in a bare log; an access line without one repeats),
    the share repeated nearby."""
    from .read import strip_ansi

    text = _peel_text(sample, w.regex)
    headed = _headed(text, pol) & pl.select(strip_ansi(pl.lit(text)).str.contains(_CLOCK)).to_series()
    if headed.sum() < 4:
        return False
    rep = _repeats(pl.DataFrame({"raw": text}), pol.window)
    return (rep & headed).sum() / headed.sum() >= pol.doubled_share


# --- peeling, per chunk -------------------------------------------------------------------


def _peel_text(text: pl.Series, regex: str) -> pl.Series:
    return text.str.replace(regex, "")


def peel(frame: pl.DataFrame, w: Wrapper | None) -> pl.DataFrame:
    """The chunk with its wrapper peeled (see the module docstring)."""
    if w is None or frame.height == 0:
        return frame
    if w.kind == "notebook":
        from .notebook import peel_notebook

        frame = peel_notebook(frame, w)
    else:
        frame = frame.with_columns(pl.col("raw").alias("_line"), pl.col("raw").str.replace(w.regex, ""))
        frame = frame.with_columns(pl.col("_line").str.head(pl.col("_line").str.len_chars()
                                                            - pl.col("raw").str.len_chars()).alias("_pre"))
    if not w.doubled:
        return frame.with_columns(pl.lit(False).alias("_dup"))
    return frame.with_columns(_repeats(frame, policy().window).alias("_dup"))


def restore(frame: pl.DataFrame) -> pl.DataFrame:
    """``_line`` of a peeled chunk after redaction masked its ``raw``: the wrapper's prefix and
    the masked text; a notebook line whose text was masked is written again as a JSON string
    (its indentation and trailing comma kept)."""
    if "_pre" in frame.columns:
        return frame.with_columns(pl.concat_str([pl.col("_pre"), pl.col("raw")]).alias("_line")).drop("_pre")
    if "_peeled" not in frame.columns:
        return frame
    from .redact import RedactState, redact_frame

    # the notebook's own lines (metadata, markdown, JSON structure) were read as blank: their
    # credentials are masked here, line by line (the notebook is not a prompt record)
    frame = redact_frame(frame, "_line", True, RedactState())
    changed = pl.col("raw") != pl.col("_peeled")
    if not frame.select(changed.any()).item():
        return frame.drop("_peeled")
    quoted = pl.struct(pl.col("raw").alias("s")).struct.json_encode().str.slice(5).str.strip_suffix("}")
    line = pl.concat_str([pl.col("_line").str.extract(r"^(\s*)", 1), quoted,
                          pl.when(pl.col("_line").str.contains(r",\s*$")).then(pl.lit(",")).otherwise(pl.lit(""))])
    return frame.with_columns(pl.when(changed).then(line).otherwise(pl.col("_line")).alias("_line")).drop("_peeled")


def peeled_head(head: str, w: Wrapper | None) -> str:
    """``head`` as the engine detection is to read it."""
    if w is None:
        return head
    frame = pl.DataFrame({"raw": head.split("\n")}).with_row_index("line_no", offset=1).with_columns(
        pl.col("line_no").cast(pl.Int64))
    probe = Wrapper(w.name, w.regex, w.kind, False, {})  # a copy: the chunks' state stays at the start
    return "\n".join(peel(frame, probe)["raw"].to_list())


def _repeats(frame: pl.DataFrame, window: int) -> pl.Series:
    """Lines whose text a line at most ``window`` lines before holds too (blank lines aside)."""
    f = frame.select(pl.col("raw")).with_row_index("_i").with_columns(
        pl.col("_i").shift(1).over("raw").alias("_prev"))
    rep = ((pl.col("_i") - pl.col("_prev")) <= window).fill_null(False) & (pl.col("raw").str.strip_chars() != "")
    return f.select(rep.alias("_dup")).to_series()


def drop_repeats(parsed):
    """``parsed`` (an ingest.parse.Parsed of a peeled chunk) without the claims of records
    printed again: the line stays, unclaimed; its typed rows go."""
    frame = parsed.frame
    if "_dup" not in frame.columns or not frame["_dup"].any():
        return parsed
    gone = frame.filter(pl.col("_dup"))["line_no"]
    frame = frame.with_columns([pl.when(pl.col("_dup")).then(None).otherwise(pl.col(c)).alias(c)
                                for c in ("pattern", "table") if c in frame.columns])
    tables = {t: [p.filter(~pl.col("line_no").is_in(gone.implode())) if "line_no" in p.columns else p
                  for p in parts] for t, parts in parsed.tables.items()}
    return type(parsed)(frame=frame, tables=tables)


def describe(w: Wrapper | None) -> str | None:
    """A note for the ingest result."""
    if w is None:
        return None
    what = "notebook outputs" if w.kind == "notebook" else f"wrapper {w.name!r} peeled before parsing"
    return what + ("; records printed twice counted once" if w.doubled else "")
