"""Engine per run: a launch marker of another engine switches the engine a log is parsed with.

Contract: ``EngineSwitch(grammars, engine)`` holds, for one file, the launch-marker literals
of every engine grammar. ``split(frame)`` cuts a chunk (in line order) into segments, each
with the engine its lines are parsed with: the file's engine up to the first launch marker
of another engine (say a vLLM banner after an SGLang server, as ``cat a.log b.log`` gives),
that engine from there on, and so on. A marker counts only when that engine's own grammar
(its prefix and launch pattern) claims the line, so a line that merely mentions another
engine's literal does not switch. Switch points are remembered by line number, so lines
parsed again (the fold carry, an append's open tail) get the same engine every time.
``switches`` (a list of ``[line_no, engine]``) is the state an append resumes.

Cost: one multi-literal scan (Aho-Corasick) of each chunk, plus parsing the few hit lines
with each engine's grammar; segments are contiguous slices.
"""
from __future__ import annotations

import polars as pl

from ..formats.grammar import role_map
from .parse import parse_frame, patterns_for

#: lines looked at before a marker for its launch chatter
_CHATTER_MAX = 200


class EngineSwitch:
    def __init__(self, grammars, engine: str, switches: list | None = None):
        self.grammars = grammars
        self.start_engine = engine
        self.engines = [g.engine for g in grammars
                        if g.engine not in ("common", "bench", "env") and any(p.launch is not None for p in g.patterns)]
        self.launch = {e: {p.name for p in patterns_for(grammars, e) if p.launch is not None} for e in self.engines}
        self.literals = sorted({p.literal for e in self.engines for p in patterns_for(grammars, e)
                                if p.launch is not None and p.literal})
        self.switches: list = [list(s) for s in (switches or [])]  # [line_no, engine], ascending
        roles = role_map(grammars)
        self.prelaunch = roles.get("prelaunch", [])
        self.prelaunch_stamped = roles.get("prelaunch_stamped", [])

    def engine_at(self, line_no: int) -> str:
        engine = self.start_engine
        for at, e in self.switches:
            if at > line_no:
                break
            engine = e
        return engine

    def split(self, frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
        """Contiguous segments of ``frame`` with the engine each is parsed with."""
        if frame.height == 0 or not self.literals:
            return [(self.engine_at(0), frame)]
        self._learn(frame)
        first, last = int(frame["line_no"][0]), int(frame["line_no"][-1])
        cuts = [(at, e) for at, e in self.switches if first < at <= last]
        if not cuts:
            return [(self.engine_at(first), frame)]
        out, start_engine, lo = [], self.engine_at(first), first
        for at, e in cuts:
            seg = frame.filter((pl.col("line_no") >= lo) & (pl.col("line_no") < at))
            if seg.height:
                out.append((start_engine, seg))
            start_engine, lo = e, at
        out.append((start_engine, frame.filter(pl.col("line_no") >= lo)))
        return out

    def _learn(self, frame: pl.DataFrame) -> None:
        """Record the launch markers of another engine found in ``frame`` (in line order)."""
        hit = frame["raw"].str.contains_any(self.literals).fill_null(False)
        if not hit.any():
            return
        sub = frame.filter(hit).select([c for c in frame.columns if c in ("line_no", "raw", "truncated")])
        claims = {e: parse_frame(sub, self.grammars, e).frame["pattern"].is_in(list(self.launch[e])).to_list()
                  for e in self.engines}
        known = self.switches[-1][0] if self.switches else 0
        for i, line_no in enumerate(sub["line_no"].to_list()):
            if line_no <= known:
                continue  # learnt before (a line parsed again)
            current = self.engine_at(line_no)
            claimers = [e for e in self.engines if claims[e][i]]
            if claimers and current not in claimers:
                floor = self.switches[-1][0] if self.switches else 0
                start = self._chatter_start(frame, line_no, claimers[0], floor)
                self.switches.append([start, claimers[0]])
                known = line_no

    def _chatter_start(self, frame: pl.DataFrame, line_no: int, engine: str, floor: int) -> int:
        """First line of the launch chatter the new engine prints right before its marker
        (grammar roles ``prelaunch`` without a timestamp, ``prelaunch_stamped``), so that
        it is parsed with that engine too; the marker's own line when there is none."""
        before = frame.filter((pl.col("line_no") < line_no) & (pl.col("line_no") > floor)).tail(_CHATTER_MAX)
        if before.height == 0:
            return line_no
        parsed = parse_frame(before.select([c for c in before.columns if c in ("line_no", "raw", "truncated")]),
                             self.grammars, engine).frame
        movable = (parsed["pattern"].is_in(self.prelaunch).fill_null(False) & parsed["time"].is_null()) \
            | parsed["pattern"].is_in(self.prelaunch_stamped).fill_null(False)
        stops = (~movable).arg_true()
        first = int(stops[-1]) + 1 if stops.len() else 0
        return int(parsed["line_no"][first]) if first < parsed.height else line_no
