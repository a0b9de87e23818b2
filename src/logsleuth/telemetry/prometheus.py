"""Prometheus text exposition -> ``metrics`` rows.

Contract: ``parse_exposition(lines, name, default_ts=None, first_snapshot=0)`` takes the physical lines of one file
(or one HTTP response) as a list and returns ``(metrics, line_kinds)``: a polars frame of
``metrics`` columns (one row per sample, ``line_no`` 1-based) and the kind of every line
(``metrics`` for a sample, ``metric_meta`` for HELP/TYPE/other comments, ``snapshot`` for a
separator). Lines are split and classified with polars (vectorized); each distinct series
(name and label set) is parsed once by prometheus_client (a well-kept parser, not ours),
and values and exposition timestamps are cast column-wise. A file it refuses raises
``BadInputError`` naming the first bad line, and nothing is stored.

Snapshots: a scrape loop writes many expositions one after another. A new snapshot starts
at a separator line carrying a time (``# 2026-03-06T16:45:26Z``, ``date`` output, ``ts=<unix>``
...) or, without separators, where a metric family's ``# HELP``/``# TYPE`` (or first sample)
comes round again. A sample's own exposition timestamp wins over its snapshot's time.
"""
from __future__ import annotations

import datetime as dt

import polars as pl
import regex as re

from ..errors import BadInputError
from .timestamps import epoch_to_local, parse_stamp

METRIC_COLUMNS = {"line_no": pl.Int64, "snapshot": pl.Int32, "ts": pl.Datetime("us"), "family": pl.Utf8,
                  "name": pl.Utf8, "type": pl.Utf8, "labels": pl.Utf8, "model": pl.Utf8, "host": pl.Utf8,
                  "le": pl.Float64, "value": pl.Float64}

#: label names carrying the host: DCGM exporter's ``Hostname`` (renamed ``hostname``)
HOST_LABELS = ("hostname", "Hostname", "host")
_SAMPLE_RE = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?[ \t]+(\S+)(?:[ \t]+(-?\d+(?:\.\d+)?))?$"
_META_RE = r"^#\s*(HELP|TYPE|UNIT|EOF)\b"
_SUFFIX_RE = r"_(total|created|bucket|count|sum|gcount|gsum|info)$"


def _classify(lines: list[str]) -> pl.DataFrame:
    """One row per line: kind (blank | meta | comment | sample | other), sample name/key/value
    text/timestamp text, the metric name a HELP/TYPE line declares and its type."""
    f = pl.DataFrame({"raw": lines}, schema={"raw": pl.Utf8}).with_row_index("i")
    s = pl.col("raw").str.strip_chars()
    f = f.with_columns(s.alias("s"))
    parts = pl.col("s").str.extract_groups(_SAMPLE_RE)
    f = f.with_columns(parts.alias("p"))
    f = f.with_columns(
        pl.when(pl.col("s") == "").then(pl.lit("blank"))
        .when(pl.col("s").str.contains(_META_RE)).then(pl.lit("meta"))
        .when(pl.col("s").str.starts_with("#")).then(pl.lit("comment"))
        .when(pl.col("p").struct.field("1").is_not_null()).then(pl.lit("sample"))
        .otherwise(pl.lit("other")).alias("kind"),
        pl.col("p").struct.field("1").alias("name"),
        (pl.col("p").struct.field("1") + pl.col("p").struct.field("2").fill_null("")).alias("key"),
        pl.col("p").struct.field("3").alias("value_text"),
        pl.col("p").struct.field("4").alias("ts_text"),
        pl.col("s").str.extract(r"^#\s*(?:HELP|TYPE|UNIT)\s+(\S+)", 1).alias("meta_name"),
        pl.col("s").str.extract(r"^#\s*TYPE\s+\S+\s+(\S+)", 1).alias("meta_type"),
    ).drop("p")
    return f


def _separators(f: pl.DataFrame) -> dict[int, dt.datetime]:
    """Time stamps of separator lines (comments or bare lines carrying a time): few lines,
    checked one by one; an `other` line that is no time stamp is a broken line."""
    stamps = {}
    for i, s, kind in f.filter(pl.col("kind").is_in(["comment", "other"])).select("i", "s", "kind").iter_rows():
        stamp = parse_stamp(s)
        if stamp is not None:
            stamps[i] = stamp
    return stamps


def _snapshot_of(f: pl.DataFrame, stamps: dict[int, dt.datetime]) -> tuple[pl.Series, dict[int, dt.datetime | None]]:
    """Snapshot number per line and the time of each snapshot. With separators they alone cut
    the file; without, a snapshot ends where a metric family comes round again (checked per
    run of same-family lines, not per line)."""
    if stamps:
        sep = pl.Series([i in stamps for i in range(f.height)])
        snap = sep.cum_sum()
        times: dict[int, dt.datetime | None] = {0: None}
        for k, i in enumerate(sorted(stamps), start=1):
            times[k] = stamps[i]
        return snap, times
    fam = f.select(pl.when(pl.col("kind") == "sample").then(pl.col("name").str.replace(_SUFFIX_RE, ""))
                   .when(pl.col("kind") == "meta").then(pl.col("meta_name").str.replace(_SUFFIX_RE, ""))
                   .otherwise(None).alias("fam"))["fam"]
    runs = (pl.DataFrame({"fam": fam}).with_row_index("i").filter(pl.col("fam").is_not_null())
            .with_columns((pl.col("fam") != pl.col("fam").shift(1)).fill_null(True).alias("new"))
            .filter(pl.col("new")))
    cuts, seen = [], set()
    for i, family in runs.select("i", "fam").iter_rows():  # per family run (tens per snapshot)
        if family in seen:
            cuts.append(i)
            seen = set()
        seen.add(family)
    cut = pl.Series([False] * f.height)
    if cuts:
        cut = cut.scatter(cuts, True)
    return cut.cum_sum(), {}


def _parse_keys(f: pl.DataFrame, name: str) -> pl.DataFrame:
    """(key -> family, type, sample name, labels) through prometheus_client, each distinct
    series once: a scrape loop repeats the same series in every snapshot, and the parser's
    label reading dominates the cost (0.7 ms a line for vLLM's long label sets)."""
    from prometheus_client.parser import text_string_to_metric_families

    declared = dict(f.filter((pl.col("kind") == "meta") & pl.col("meta_type").is_not_null())
                    .select("meta_name", "meta_type").unique(subset="meta_name", keep="first").iter_rows())
    keys = f.filter(pl.col("kind") == "sample").select("i", "key", "name").unique(subset="key", keep="first",
                                                                                    maintain_order=True)
    # group the keys by the family a TYPE line declares (prometheus_client names families so)
    def owner(sample: str) -> str:
        if sample in declared:
            return sample
        base = re.sub(_SUFFIX_RE, "", sample)
        return base if base in declared else sample
    groups: dict[str, list[tuple[int, str]]] = {}
    for i, key, sample in keys.iter_rows():  # distinct series only
        groups.setdefault(owner(sample), []).append((i, key))
    text, order = [], []
    for fam, members in groups.items():
        if fam in declared:
            text.append(f"# TYPE {fam} {declared[fam]}")
        for i, key in members:
            text.append(f"{key} 0")
            order.append((i, key))
    try:
        parsed = [(fam.name, fam.type, smp.name, smp.labels)
                  for fam in text_string_to_metric_families("\n".join(text) + "\n") for smp in fam.samples]
    except Exception:
        _raise_first_bad(f, [k for _, k in order], name)
    if len(parsed) != len(order):
        raise BadInputError(f"{name}: {len(order)} series but {len(parsed)} samples parsed; not a Prometheus exposition")
    import json

    def le_of(labels: dict):
        le = labels.get("le")
        try:
            return None if le is None else float(le)  # "+Inf" -> inf
        except ValueError:
            return None
    return pl.DataFrame({"key": [k for _, k in order], "family": [p[0] for p in parsed],
                         "type": [p[1] for p in parsed], "sample": [p[2] for p in parsed],
                         "labels": [json.dumps(p[3], sort_keys=True) for p in parsed],
                         "model": [p[3].get("model_name") for p in parsed],
                         "host": [next((p[3][h] for h in HOST_LABELS if p[3].get(h)), None) for p in parsed],
                         "le": [le_of(p[3]) for p in parsed]},
                        schema_overrides={"model": pl.Utf8, "host": pl.Utf8, "le": pl.Float64})


def _raise_first_bad(f: pl.DataFrame, keys: list[str], name: str):
    from prometheus_client.parser import text_string_to_metric_families

    for key in keys:
        try:
            list(text_string_to_metric_families(key + " 0\n"))
        except Exception as exc:  # the parser raises ValueError, and others on odd input
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            line = f.filter(pl.col("key") == key)["i"][0] + 1
            raise BadInputError(f"{name}: line {line}: not Prometheus text exposition ({why[:120]})",
                                hint="nothing was stored from this file") from None
    raise BadInputError(f"{name}: not Prometheus text exposition")


def parse_exposition(lines: list[str], name: str, default_ts: dt.datetime | None = None,
                     first_snapshot: int = 0) -> tuple[pl.DataFrame, dict[int, str]]:
    f = _classify(lines)
    stamps = _separators(f)
    bad = f.filter((pl.col("kind") == "other") & ~pl.col("i").is_in(list(stamps)))
    if bad.height:
        i, s = bad.row(0, named=True)["i"], bad.row(0, named=True)["s"]
        why = "not a sample, comment or time separator"
        try:
            from prometheus_client.parser import text_string_to_metric_families

            list(text_string_to_metric_families(s + "\n"))
        except Exception as exc:
            why = str(exc).splitlines()[0] if str(exc) else why
        raise BadInputError(f"{name}: line {i + 1}: not Prometheus text exposition ({why[:120]})",
                            hint="nothing was stored from this file")
    snap, times = _snapshot_of(f, stamps)
    f = f.with_columns(snap.alias("snap_raw"))
    samples = f.filter(pl.col("kind") == "sample")
    kinds = {i: "snapshot" for i in stamps}
    meta_idx = f.filter(pl.col("kind").is_in(["blank", "meta", "comment"]) & ~pl.col("i").is_in(list(stamps)))["i"]
    kinds.update({i: "metric_meta" for i in meta_idx.to_list()})
    if samples.height == 0:
        return pl.DataFrame(schema=METRIC_COLUMNS), kinds
    kinds.update({i: "metrics" for i in samples["i"].to_list()})
    value = (pl.col("value_text").str.replace(r"^\+?Inf$", "inf").str.replace(r"^-Inf$", "-inf")
             .cast(pl.Float64, strict=False))
    samples = samples.with_columns(value.alias("value"))
    broken = samples.filter(pl.col("value").is_null())
    if broken.height:
        raise BadInputError(f"{name}: line {broken['i'][0] + 1}: not Prometheus text exposition "
                            f"(value {broken['value_text'][0]!r} is not a number)", hint="nothing was stored from this file")
    keys = _parse_keys(f, name)
    samples = samples.join(keys, on="key", how="left")
    # snapshots numbered densely over those holding samples, from first_snapshot
    order = samples.select("snap_raw").unique(maintain_order=True)["snap_raw"].to_list()
    dense = {raw: k + first_snapshot for k, raw in enumerate(order)}
    snap_ts = {dense[raw]: times.get(raw) or default_ts for raw in order}
    samples = samples.with_columns(pl.col("snap_raw").replace_strict(dense, return_dtype=pl.Int32).alias("snapshot"))
    snap_time = pl.col("snapshot").replace_strict(snap_ts, return_dtype=pl.Datetime("us"), default=None) \
        if any(v is not None for v in snap_ts.values()) else pl.lit(None, dtype=pl.Datetime("us"))
    own = pl.col("ts_text").cast(pl.Float64, strict=False)
    offset = _local_offset(samples["ts_text"].drop_nulls())
    own_ts = (pl.from_epoch((own / 1000 * 1_000_000).cast(pl.Int64), time_unit="us") + pl.duration(seconds=offset))
    samples = samples.with_columns(pl.coalesce(own_ts, snap_time).alias("ts"), (pl.col("i") + 1).cast(pl.Int64).alias("line_no"))
    frame = samples.select("line_no", "snapshot", "ts", "family", pl.col("sample").alias("name"), "type", "labels",
                           "model", "host", "le", "value")
    return _frame(frame), kinds


def _local_offset(ts_text: pl.Series) -> float:
    """Seconds from UTC to local time at the first exposition timestamp (0 when none)."""
    if len(ts_text) == 0:
        return 0.0
    t = float(ts_text[0]) / 1000
    return (epoch_to_local(t) - dt.datetime.utcfromtimestamp(t)).total_seconds()


def _frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Histogram typing of untyped bucket/sum/count samples (model, host, le come per series)."""
    le = pl.col("le")
    frame = frame.with_columns(
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
