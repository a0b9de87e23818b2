"""Turn newly arrived log lines into typed observations for the phase tracker.

Contract: ``LineObserver.observe(lines, first_line_no)`` returns the observations of a
batch of complete physical lines, in order: one per line that the library's grammars
claim as an event, a decode/prefill/spec statistic or an error, one per tqdm progress
update, and one per launch marker. ``observe_partial(text, line_no)`` does the same for
the unterminated last line (the newest ``\\r`` update of a growing bar). Lines nothing
claims are not observations; the tracker still learns that *a* line arrived (for stall
detection) from the batch's last line.

The classification is the ingest's own (``parse_frame`` + ``extract`` over the batch, in
polars: no regex per line in Python), so the watcher and the database never disagree
about what a line is, and a grammar added to ``parsers/`` is understood here too. A
physical line holding several ``\\r``-separated updates is split into its updates first
(the stored line stays whole; that is the ingest's business).
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

import polars as pl

#: a tqdm bar as written by SGLang/vLLM (and anything else using tqdm): ``desc: 41%|███ | 26/64
#: [02:40<04:05, 6.47s/it]`` or the ``% Completed |`` bar_format of the weight loaders.
#: Digits inside the bar glyphs cannot occur, so ``\D*?`` skips them.
TQDM = (r"^(?P<desc>.*?):?\s*(?P<pct>\d{1,3})%\s*(?:Completed\s*)?\|\D*?(?P<n>\d+)/(?P<total>\d+)\s*"
        r"\[(?P<elapsed>[\d:]+)<(?P<remaining>[\d:?]+)")
#: tables whose rows the tracker reads
TYPED_TABLES = ("events", "decode_stats", "prefill_stats", "spec_stats", "errors")


@dataclass
class Observation:
    line_no: int
    kind: str  # event kind, "decode", "prefill", "spec", "error", "progress" or "launch"
    ts: dt.datetime | None = None
    fields: dict = field(default_factory=dict)
    text: str = ""  # the message (last \r update), for evidence and "last line"
    partial: bool = False
    engine: str | None = None  # the engine the source was detected as (sglang, vllm)


def _clock_seconds(text: str | None) -> float | None:
    if not text or "?" in text:
        return None
    secs = 0.0
    for part in text.split(":"):
        if not part.isdigit():
            return None
        secs = secs * 60 + int(part)
    return secs


class LineObserver:
    """Classifies lines of one followed source; re-detects the engine until it is known."""

    def __init__(self):
        from ..formats.grammar import default_grammars
        from ..ingest.stages import ShapeCache, TimeState

        self.grammars = default_grammars()
        self.engine: str | None = None
        self._head: list[str] = []
        self._cache = ShapeCache()
        self._time = TimeState()
        self._patterns = None
        self._launch: dict[str, str | None] = {}  # launch-marker pattern -> its config parser

    # -- engine -------------------------------------------------------------------
    def _detect(self, lines: list[str]) -> None:
        if self.engine and self.engine not in ("none", "unknown"):
            return
        from ..ingest.stages import ShapeCache, detect, engine_for_parsing, patterns_for

        self._head.extend(lines[: max(0, 4000 - len(self._head))])
        # the followed text's head grows with each batch until its engine is known
        engine = engine_for_parsing(detect("\n".join(self._head), self.grammars))
        if engine != self.engine:

            self.engine = engine
            self._cache = ShapeCache()
            self._patterns = patterns_for(self.grammars, engine)
            self._launch = {p.name: p.parser for p in self._patterns if p.launch is not None}

    # -- batches ------------------------------------------------------------------
    def observe(self, lines: list[str], first_line_no: int) -> list[Observation]:
        if not lines:
            return []
        self._detect(lines)
        frame = pl.DataFrame({"raw": lines}).with_row_index("line_no", offset=first_line_no)
        frame = frame.with_columns(pl.col("line_no").cast(pl.Int64))
        return self._observe_frame(frame, partial=False)

    def observe_partial(self, text: str, line_no: int) -> list[Observation]:
        """The growing last line: only its newest ``\\r`` update matters to the live view."""
        from .follow import latest_update

        update = latest_update(text)
        if not update:
            return []
        self._detect([update])
        frame = pl.DataFrame({"raw": [update], "line_no": [line_no]}).with_columns(pl.col("line_no").cast(pl.Int64))
        return self._observe_frame(frame, partial=True)

    def _observe_frame(self, frame: pl.DataFrame, partial: bool) -> list[Observation]:
        from ..ingest.stages import add_timestamps, extract, parse_frame, redact_frame, strip_ansi

        # one row per \r update, ANSI colours off, secrets masked before anything reads it
        frame = (frame.with_columns(strip_ansi(pl.col("raw")).str.split("\r").alias("raw"))
                 .explode("raw").filter(pl.col("raw").str.strip_chars() != "")
                 .with_row_index("_seq"))
        if frame.height == 0:
            return []
        frame = redact_frame(frame, "raw").with_columns(pl.lit(False).alias("truncated"))
        parsed = parse_frame(frame, self.grammars, self.engine or "none", self._cache).frame
        parsed = add_timestamps(parsed, self._time, time.time(), None)
        obs: list[tuple[int, Observation]] = []
        tables = extract(parsed, self._patterns or [])
        for table, parts in tables.items():
            if table not in TYPED_TABLES:
                continue
            for part in parts:
                obs.extend(self._rows(table, part, parsed, partial))
        launches = parsed.filter(pl.col("pattern").is_in(list(self._launch)))
        for row in launches.select("_seq", "line_no", "ts", "msg", "pattern").iter_rows(named=True):
            obs.append((row["_seq"] - 0.5, Observation(row["line_no"], "launch", row["ts"],
                                                       {"config": self._config(row["pattern"], row["msg"] or "")},
                                                       (row["msg"] or "")[:300], partial)))
        obs.extend(self._bars(parsed, partial))
        obs.sort(key=lambda t: t[0])
        for _, o in obs:
            o.engine = self.engine
        return [o for _, o in obs]

    def _config(self, pattern: str, msg: str) -> dict:
        """The settings a launch line carries (model, TP size...), parsed as the ingest does."""
        from ..ingest.stages import parse_config_line

        parser = self._launch.get(pattern)
        if not parser:
            return {}
        try:
            return {k: v for k, v in parse_config_line(parser, msg) if v is not None}
        except Exception:  # a mangled dump must not stop the watch; the ingest reports it
            return {}

    def _rows(self, table: str, part: pl.DataFrame, parsed: pl.DataFrame, partial: bool):
        # extract drops _seq; join it back by line number and message (unique enough per batch)
        keys = parsed.select("line_no", "msg", "_seq").unique(subset=["line_no", "msg"], keep="first")
        part = part.join(keys, on=["line_no", "msg"], how="left")
        skip = {"line_no", "date", "md", "time", "pid", "msg", "level", "ts", "run_id", "_kind", "_pattern", "_seq"}
        kind_of = {"decode_stats": "decode", "prefill_stats": "prefill", "spec_stats": "spec", "errors": "error"}
        for row in part.iter_rows(named=True):
            kind = row["_kind"] if table == "events" else kind_of[table]
            if table == "errors" and row.get("kind"):
                row = {**row, "error_kind": row["kind"]}
            fields = {k: v for k, v in row.items() if k not in skip and v is not None}
            yield (row["_seq"] if row["_seq"] is not None else 0,
                   Observation(row["line_no"], kind or table, row.get("ts"), fields, row.get("msg") or "", partial))

    def _bars(self, parsed: pl.DataFrame, partial: bool):
        text = pl.coalesce(pl.col("msg"), pl.col("raw"))
        cand = parsed.filter(text.str.contains(r"\d%\s*(?:Completed\s*)?\|"))
        if cand.height == 0:
            return []
        bars = cand.select("_seq", "line_no", "ts", text.alias("text"),
                           text.str.extract_groups(TQDM).alias("g")).unnest("g").filter(pl.col("n").is_not_null())
        out = []
        for row in bars.iter_rows(named=True):
            fields = {"desc": (row["desc"] or "").strip(), "n": int(row["n"]), "total": int(row["total"]),
                      "elapsed_s": _clock_seconds(row["elapsed"]), "remaining_s": _clock_seconds(row["remaining"])}
            out.append((row["_seq"] + 0.25, Observation(row["line_no"], "progress", row["ts"], fields,
                                                         row["text"], partial)))
        return out
