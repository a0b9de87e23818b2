"""Prometheus text exposition -> ``metrics`` rows.

Contract: ``parse_exposition(lines, default_ts=None)`` takes the physical lines of one file
(or one HTTP response) as a list and returns ``(metrics, line_kinds)``: a polars frame of
``metrics`` columns (one row per sample, ``line_no`` 1-based) and the kind of every line
(``metrics`` for a sample, ``metric_meta`` for HELP/TYPE/other comments, ``snapshot`` for a
separator). Parsing itself is prometheus_client's (a well-kept parser, not ours): a file
it refuses raises ``BadInputError`` naming the first bad line, and nothing is stored.

Snapshots: a scrape loop writes many expositions one after another. A new snapshot starts
at a separator line carrying a time (``# 2026-03-06T16:45:26Z``, ``date`` output, ``ts=<unix>``
...) or, without separators, where a metric family's ``# HELP``/``# TYPE`` (or first sample)
comes round again. A sample's own exposition timestamp wins over its snapshot's time.
"""
from __future__ import annotations

import datetime as dt
import math

import polars as pl
import regex as re

from ..errors import BadInputError
from .timestamps import epoch_to_local, parse_stamp

METRIC_COLUMNS = {"line_no": pl.Int64, "snapshot": pl.Int32, "ts": pl.Datetime("us"), "family": pl.Utf8,
                  "name": pl.Utf8, "type": pl.Utf8, "labels": pl.Utf8, "model": pl.Utf8, "host": pl.Utf8,
                  "le": pl.Float64, "value": pl.Float64}

_META = re.compile(r"^#\s*(HELP|TYPE|UNIT|EOF)\b")
_META_NAME = re.compile(r"^#\s*(?:HELP|TYPE|UNIT)\s+(\S+)")
_SAMPLE_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)")
#: label names carrying the host: DCGM exporter's ``Hostname`` (renamed ``hostname``)
HOST_LABELS = ("hostname", "Hostname", "host")
_SUFFIXES = ("_bucket", "_count", "_sum", "_created", "_total")


def _family_of(name: str) -> str:
    for suffix in ("_bucket", "_count", "_sum", "_created"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _snapshots(lines: list[str]) -> tuple[list[tuple[int, int, dt.datetime | None]], dict[int, str]]:
    """Split into (first, last_exclusive, ts) blocks; kinds of separator and comment lines."""
    kinds: dict[int, str] = {}
    blocks = []
    start, ts = 0, None
    seen: set[str] = set()
    last_family = None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            kinds[i] = "metric_meta"
            continue
        if s.startswith("#"):
            m = _META_NAME.match(s)
            if m:
                fam = _family_of(m.group(1))
                if fam in seen and fam != last_family:  # the first family comes round again
                    blocks.append((start, i, ts))
                    start, seen = i, set()
                seen.add(fam)
                last_family = fam
                kinds[i] = "metric_meta"
                continue
            if _META.match(s):
                kinds[i] = "metric_meta"
                continue
            stamp = parse_stamp(s)
            if stamp is not None:
                if i > start:
                    blocks.append((start, i, ts))
                start, ts, seen, last_family = i + 1, stamp, set(), None
                kinds[i] = "snapshot"
            else:
                kinds[i] = "metric_meta"
            continue
        m = _SAMPLE_NAME.match(s)
        if m is None or not _looks_like_sample(s):
            stamp = parse_stamp(s)
            if stamp is not None:  # a bare `date` line between scrapes
                if i > start:
                    blocks.append((start, i, ts))
                start, ts, seen, last_family = i + 1, stamp, set(), None
                kinds[i] = "snapshot"
                continue
        if m is not None:
            fam = _family_of(m.group(1))
            if fam != last_family:
                if fam in seen:  # untyped exposition (no HELP/TYPE) starting over
                    blocks.append((start, i, ts))
                    start, seen = i, set()
                seen.add(fam)
                last_family = fam
    if start < len(lines):
        blocks.append((start, len(lines), ts))
    return [b for b in blocks if b[1] > b[0]], kinds


def _looks_like_sample(s: str) -> bool:
    return bool(re.match(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+\S+(\s+\S+)?$', s))


def _parse_block(text: str):
    from prometheus_client.parser import text_string_to_metric_families

    return [(fam.name, fam.type, s) for fam in text_string_to_metric_families(text) for s in fam.samples]


def _first_bad_line(lines: list[str], first: int, last: int) -> tuple[int, str]:
    """Locate the line prometheus_client refuses (only on the error path)."""
    for i in range(first, last):
        s = lines[i].strip()
        if not s or s.startswith("#"):
            continue
        try:
            _parse_block(s + "\n")
        except Exception as exc:  # the parser raises ValueError, and others on odd input
            return i, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return first, "not Prometheus text exposition"


def parse_exposition(lines: list[str], name: str, default_ts: dt.datetime | None = None,
                     first_snapshot: int = 0) -> tuple[pl.DataFrame, dict[int, str]]:
    blocks, kinds = _snapshots(lines)
    rows_line, rows_snap, rows_ts, rows_fam, rows_name, rows_type, rows_labels, rows_value = ([] for _ in range(8))
    rows_sample_ts = []
    for snap, (first, last, ts) in enumerate(blocks, start=first_snapshot):
        body = [lines[i] if kinds.get(i) != "snapshot" else "" for i in range(first, last)]
        try:
            samples = _parse_block("\n".join(body) + "\n")
        except Exception:
            i, why = _first_bad_line(lines, first, last)
            raise BadInputError(f"{name}: line {i + 1}: not Prometheus text exposition ({why[:120]})",
                                hint="nothing was stored from this file") from None
        sample_lines = [i for i in range(first, last)
                        if kinds.get(i) is None and lines[i].strip() and not lines[i].lstrip().startswith("#")]
        if len(sample_lines) != len(samples):
            raise BadInputError(f"{name}: lines {first + 1}-{last}: {len(sample_lines)} sample lines but "
                                f"{len(samples)} samples parsed; not a Prometheus exposition")
        for i, (fam, typ, s) in zip(sample_lines, samples):
            kinds[i] = "metrics"
            rows_line.append(i + 1)
            rows_snap.append(snap)
            rows_ts.append(ts or default_ts)
            rows_sample_ts.append(s.timestamp)
            rows_fam.append(fam)
            rows_name.append(s.name)
            rows_type.append(typ)
            rows_labels.append(s.labels)
            rows_value.append(float(s.value))
    return _frame(rows_line, rows_snap, rows_ts, rows_sample_ts, rows_fam, rows_name, rows_type, rows_labels,
                  rows_value), kinds


def _frame(line_no, snap, ts, sample_ts, fam, names, types, labels, values) -> pl.DataFrame:
    import json

    if not line_no:
        return pl.DataFrame(schema=METRIC_COLUMNS)
    # an exposition timestamp on the sample (ms in the text, seconds here) wins
    own = [None if t is None else epoch_to_local(float(t)) for t in sample_ts] if any(
        t is not None for t in sample_ts) else [None] * len(ts)
    label_json = [json.dumps(lb, sort_keys=True) for lb in labels]
    frame = pl.DataFrame({
        "line_no": line_no, "snapshot": snap,
        "ts": pl.Series([o or t for o, t in zip(own, ts)], dtype=pl.Datetime("us")),
        "family": fam, "name": names, "type": types, "labels": label_json, "value": values,
    }, schema_overrides={"line_no": pl.Int64, "snapshot": pl.Int32, "value": pl.Float64})
    lab = pl.col("labels")
    host = pl.coalesce([lab.str.json_path_match(f"$.{h}") for h in HOST_LABELS])
    le = lab.str.json_path_match("$.le")
    frame = frame.with_columns(
        pl.col("labels").str.json_path_match("$.model_name").alias("model"),
        host.alias("host"),
        pl.when(le == "+Inf").then(pl.lit(math.inf)).otherwise(le.cast(pl.Float64, strict=False)).alias("le"),
        # untyped expositions (DCGM without TYPE lines, hand-trimmed files): a `_bucket` with an
        # `le` label is a histogram all the same, `_sum`/`_count` beside it belong to it
        pl.when((pl.col("type") == "unknown") & pl.col("name").str.ends_with("_bucket") & le.is_not_null())
        .then(pl.lit("histogram")).otherwise(pl.col("type")).alias("type"),
        pl.when((pl.col("type") == "unknown") & pl.col("name").str.contains(r"_(bucket|sum|count)$"))
        .then(pl.col("name").str.replace(r"_(bucket|sum|count)$", ""))
        .otherwise(pl.col("family")).alias("family"),
    )
    # a family's `_sum`/`_count` seen before its first `_bucket` were typed unknown: type them by family
    hist = frame.filter(pl.col("type") == "histogram").select("family").unique()
    if hist.height:
        frame = frame.with_columns(
            pl.when(pl.col("family").is_in(hist["family"].to_list()) & (pl.col("type") == "unknown"))
            .then(pl.lit("histogram")).otherwise(pl.col("type")).alias("type"))
    return frame.select(list(METRIC_COLUMNS))
