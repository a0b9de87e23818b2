"""GPU sampler outputs -> ``gpu_samples`` rows (vectorized with polars).

Contract: ``parse_gpu_text(kind, lines, name)`` takes the physical lines of an
``nvidia-smi --query-gpu ... --format=csv`` loop (``nvidia_smi_csv``), ``nvidia-smi dmon``
(``nvidia_smi_dmon``), ``rocm-smi --csv`` (``rocm_smi_csv``) or ``amd-smi metric --csv``
(``amd_smi_csv``) and returns ``(samples, line_kinds)``: one row per GPU per sample with the
``gpu_samples`` columns (ratios 0..1, memory in MiB, power in W, clocks in MHz) and the kind
of every line (``gpu_samples``, ``gpu_header`` or ``gpu_meta``). A row that does not fit its
header (a truncated CSV) raises ``BadInputError`` naming the line: nothing is stored.
Columns are found by header name, never by position (every tool lets users choose them).
"""
from __future__ import annotations

import polars as pl
import regex as re

from ..errors import BadInputError
from ..formats.telemetry_detect import is_nvidia_smi_header

#: nvml clocks-event (throttle) reason bits, nvml.h nvmlClocksEventReason* (docs telemetry-formats.md 3.1)
THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                 0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
                 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}
_REASON_BIT = {v: k for k, v in THROTTLE_BITS.items()}

#: nvidia-smi query field (canonical or alias, unit suffix stripped) -> gpu_samples column
NVIDIA_COLUMNS = {
    "timestamp": "ts", "index": "gpu_index", "name": "gpu_name", "gpu_name": "gpu_name", "uuid": "uuid",
    "pci.bus_id": "pci_bus_id", "pstate": "pstate", "utilization.gpu": "gpu_util", "utilization.memory": "mem_util",
    "memory.used": "mem_used_mib", "memory.total": "mem_total_mib", "power.draw": "power_w",
    "power.draw.average": "power_w", "power.draw.instant": "power_w", "power.limit": "power_limit_w",
    "enforced.power.limit": "power_limit_w", "clocks.current.sm": "sm_clock_mhz", "clocks.sm": "sm_clock_mhz",
    "clocks.max.sm": "sm_clock_max_mhz", "clocks.current.memory": "mem_clock_mhz", "clocks.mem": "mem_clock_mhz",
    "temperature.gpu": "temp_c", "temperature.memory": "mem_temp_c",
    "pcie.link.gen.current": "pcie_gen", "pcie.link.gen.gpucurrent": "pcie_gen", "pcie.link.gen.max": "pcie_gen_max",
    "pcie.link.width.current": "pcie_width", "pcie.link.width.max": "pcie_width_max",
    "clocks_throttle_reasons.active": "throttle_hex", "clocks_event_reasons.active": "throttle_hex",
}
#: dmon column -> gpu_samples column (units from its second header line: W, C, %, MHz, MB)
DMON_COLUMNS = {"gpu": "gpu_index", "pwr": "power_w", "gtemp": "temp_c", "mtemp": "mem_temp_c", "sm": "gpu_util",
                "mem": "mem_util", "mclk": "mem_clock_mhz", "pclk": "sm_clock_mhz", "fb": "mem_used_mib"}
#: rocm-smi --csv header (case-insensitive regex) -> gpu_samples column and scale to the schema unit
ROCM_COLUMNS = [(r"^GPU use \(%\)$", "gpu_util", 0.01), (r"^GPU Memory Allocated \(VRAM%\)$", "mem_util", 0.01),
                (r"^VRAM Total Memory \(B\)$", "mem_total_mib", 1 / 2**20),
                (r"^VRAM Total Used Memory \(B\)$", "mem_used_mib", 1 / 2**20),
                (r"Graphics Package Power \(W\)$", "power_w", 1.0),
                (r"^Temperature \(Sensor (edge|junction)\) \(C\)$", "temp_c", 1.0),
                (r"^Temperature \(Sensor (memory|HBM 0)\) \(C\)$", "mem_temp_c", 1.0),
                (r"^sclk clock speed:?$", "sm_clock_mhz", 1.0), (r"^mclk clock speed:?$", "mem_clock_mhz", 1.0),
                (r"^Card (series|model|SKU)$", "gpu_name", None)]
#: amd-smi metric --csv header -> gpu_samples column and scale
AMD_COLUMNS = {"gpu": ("gpu_index", None), "gfx_activity": ("gpu_util", 0.01), "umc_activity": ("mem_util", 0.01),
               "socket_power": ("power_w", 1.0), "gfx_0_clk": ("sm_clock_mhz", 1.0), "mem_0_clk": ("mem_clock_mhz", 1.0),
               "edge": ("temp_c", 1.0), "hotspot": ("hotspot_c", 1.0), "mem": ("mem_temp_c", 1.0),
               "throttle_status": ("throttle_reasons", None), "used_vram": ("mem_used_mib", 1.0),
               "total_vram": ("mem_total_mib", 1.0)}

_RATIO = {"gpu_util", "mem_util"}
_INT = {"gpu_index", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max"}
_TEXT = {"gpu_name", "uuid", "pci_bus_id", "pstate", "throttle_reasons", "throttle_hex"}


def _number(expr: pl.Expr) -> pl.Expr:
    """'84.33 W', ' 0 %', '[N/A]', 'N/A', '-' -> float or null."""
    return expr.str.strip_chars().str.extract(r"^([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", 1).cast(pl.Float64, strict=False)


def _finish(frame: pl.DataFrame, tool: str) -> pl.DataFrame:
    """Types, ratio scaling and decoded throttle reasons, whatever the tool."""
    out = []
    for col in frame.columns:
        if col in ("line_no", "ts") or col.startswith("reason:") or frame.schema[col] != pl.Utf8:
            continue  # already typed by the tool's own parser
        if col in _TEXT:
            out.append(pl.col(col).str.strip_chars().replace({"[N/A]": None, "N/A": None, "[Not Supported]": None}))
        elif col in _INT:
            out.append(_number(pl.col(col)).cast(pl.Int32))
        elif col in _RATIO:
            out.append(_number(pl.col(col)) / 100.0)
        else:
            out.append(_number(pl.col(col)))
    frame = frame.with_columns(out)
    reasons = [c for c in frame.columns if c.startswith("reason:")]
    mask = None
    if "throttle_hex" in frame.columns:
        mask = pl.col("throttle_hex").str.replace("^0x", "").str.to_integer(base=16, strict=False)
    if reasons:
        per = pl.sum_horizontal([pl.when(pl.col(c).str.strip_chars() == "Active").then(pl.lit(_REASON_BIT.get(
            c.split(":", 1)[1], 0))).otherwise(0) for c in reasons])
        mask = per if mask is None else (mask.fill_null(0) | per)
    if mask is not None:
        frame = frame.with_columns(mask.cast(pl.Int64).alias("throttle_mask"))
        names = [pl.when((pl.col("throttle_mask") & bit) != 0).then(pl.lit(nm)) for bit, nm in THROTTLE_BITS.items()]
        frame = frame.with_columns(pl.concat_str(names, separator=",", ignore_nulls=True).alias("throttle_reasons"))
        frame = frame.with_columns(pl.when(pl.col("throttle_reasons") == "").then(None)
                                   .otherwise(pl.col("throttle_reasons")).alias("throttle_reasons"))
    frame = frame.drop([c for c in frame.columns if c.startswith("reason:") or c in ("throttle_hex", "hotspot_c")])
    return frame.with_columns(pl.lit(tool).alias("tool"))


def _split_rows(lines: list[str], idx: list[int], width: int, sep: str, name: str, what: str) -> pl.DataFrame:
    frame = pl.DataFrame({"line_no": [i + 1 for i in idx], "raw": [lines[i] for i in idx]},
                         schema={"line_no": pl.Int64, "raw": pl.Utf8})
    parts = frame.with_columns(pl.col("raw").str.strip_chars().str.split(sep).alias("f"))
    bad = parts.filter(pl.col("f").list.len() != width)
    if bad.height:
        ln, raw = bad.row(0)[:2]
        got = len(raw.strip().split(sep))
        raise BadInputError(f"{name}: line {ln}: {got} field(s) where the {what} header has {width} "
                            "(truncated or mixed output?)", hint="nothing was stored from this file")
    return parts


def _line_kinds(lines: list[str], header_like: str, is_header) -> tuple[dict[int, str], list[int], list[int]]:
    """Kinds of all lines, vectorized: blank -> gpu_meta, header-looking lines (regex, then
    confirmed one by one: there are few) -> gpu_header, the rest gpu_samples."""
    f = pl.DataFrame({"raw": lines}, schema={"raw": pl.Utf8}).with_row_index("i")
    f = f.with_columns(pl.col("raw").str.strip_chars().alias("s"))
    f = f.with_columns(pl.when(pl.col("s") == "").then(pl.lit("gpu_meta"))
                       .when(pl.col("s").str.contains(header_like)).then(pl.lit("header?"))
                       .otherwise(pl.lit("gpu_samples")).alias("kind"))
    headers = [i for i, s in f.filter(pl.col("kind") == "header?").select("i", "s").iter_rows() if is_header(s)]
    f = f.with_columns(pl.when(pl.col("kind") == "header?").then(
        pl.when(pl.col("i").is_in(headers)).then(pl.lit("gpu_header")).otherwise(pl.lit("gpu_samples")))
        .otherwise(pl.col("kind")).alias("kind"))
    kinds = dict(zip(f["i"].to_list(), f["kind"].to_list()))
    return kinds, headers, f.filter(pl.col("kind") == "gpu_samples")["i"].to_list()


def _nvidia_csv(lines: list[str], name: str):
    kinds, headers, data = _line_kinds(lines, r"^[a-z_]+[a-z_.]*( \[[^\]]*\])?\s*,", is_nvidia_smi_header)
    header = lines[headers[0]]
    fields = [re.sub(r"\s*\[[^\]]*\]\s*$", "", f.strip()).lower() for f in header.split(",")]
    for i in headers[1:]:  # a header printed again by a new loop is fine; other columns are not
        if lines[i].strip() != header.strip():
            raise BadInputError(f"{name}: line {i + 1}: a second CSV header with other columns; "
                                "split the file per nvidia-smi invocation")
    parts = _split_rows(lines, data, len(fields), ",", name, "nvidia-smi CSV")
    cols = []
    for k, f in enumerate(fields):
        target = NVIDIA_COLUMNS.get(f)
        if target is None and f.startswith(("clocks_throttle_reasons.", "clocks_event_reasons.")):
            target = "reason:" + f.split(".", 1)[1]
        if target is None or target in [c for c, _ in cols]:
            continue
        cols.append((target, k))
    frame = parts.select("line_no", *[pl.col("f").list.get(k).str.strip_chars().alias(t) for t, k in cols])
    if "ts" in frame.columns:
        frame = frame.with_columns(pl.coalesce(
            pl.col("ts").str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f", strict=False),
            pl.col("ts").str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S", strict=False)).alias("ts"))
    return _finish(frame, "nvidia-smi"), kinds


def _dmon(lines: list[str], name: str):
    kinds, headers, data = _line_kinds(lines, r"^#", lambda s: True)
    # dmon prints its two header lines again every screenful: the names line must stay the same
    named = [lines[i].strip().lstrip("#").split() for i in headers]
    named = [(i, cols) for i, cols in zip(headers, named) if cols and cols[0] in ("gpu", "Date")]
    if not named:
        raise BadInputError(f"{name}: nvidia-smi dmon output without its '# gpu ...' header")
    names = named[0][1]
    for i, cols in named[1:]:
        if cols != names:
            raise BadInputError(f"{name}: line {i + 1}: dmon header changes columns mid-file")
    frame = pl.DataFrame({"line_no": [i + 1 for i in data], "raw": [lines[i] for i in data]},
                         schema={"line_no": pl.Int64, "raw": pl.Utf8})
    frame = frame.with_columns(pl.col("raw").str.strip_chars().str.replace_all(r"\s+", " ").str.split(" ").alias("f"))
    bad = frame.filter(pl.col("f").list.len() != len(names))
    if bad.height:
        raise BadInputError(f"{name}: line {bad['line_no'][0]}: {bad['f'][0].len()} field(s) where the dmon header "
                            f"has {len(names)} (truncated output?)", hint="nothing was stored from this file")
    sel = [pl.col("line_no")]
    for k, n in enumerate(names):
        if n in DMON_COLUMNS:
            sel.append(pl.col("f").list.get(k).alias(DMON_COLUMNS[n]))
    if names[:2] == ["Date", "Time"]:
        sel.append(pl.concat_str([pl.col("f").list.get(0), pl.col("f").list.get(1)], separator=" ")
                   .str.strptime(pl.Datetime("us"), "%Y%m%d %H:%M:%S", strict=False).alias("ts"))
    return _finish(frame.select(sel), "nvidia-smi dmon"), kinds


def _rocm_csv(lines: list[str], name: str):
    import io

    kinds = {i: "gpu_meta" for i in range(len(lines))}
    header_idx = next(i for i, ln in enumerate(lines) if ln.startswith("device,"))
    kinds[header_idx] = "gpu_header"
    data = [i for i in range(header_idx + 1, len(lines)) if lines[i].startswith("card")]
    for i in data:
        kinds[i] = "gpu_samples"
    header = lines[header_idx].split(",")
    text = "\n".join([lines[header_idx]] + [lines[i] for i in data]) + "\n"
    try:
        raw = pl.read_csv(io.StringIO(text), infer_schema=False, has_header=True)
    except Exception as exc:
        raise BadInputError(f"{name}: rocm-smi CSV does not parse ({str(exc).splitlines()[0][:120]})") from None
    sel = [pl.Series("line_no", [i + 1 for i in data], dtype=pl.Int64),
           raw.get_column(raw.columns[0]).str.replace("^card", "").alias("gpu_index")]
    used = set()
    for col in header[1:]:
        for pattern, target, scale in ROCM_COLUMNS:
            if target not in used and re.search(pattern, col.strip(), re.I) and col in raw.columns:
                used.add(target)
                s = raw.get_column(col)
                sel.append((_number_series(s) * scale).alias(target) if scale else s.alias(target))
    return _finish(pl.DataFrame(sel), "rocm-smi"), kinds


def _number_series(s: pl.Series) -> pl.Series:
    return s.to_frame().select(_number(pl.col(s.name).str.replace(r"^\(", ""))).to_series()


def _amd_csv(lines: list[str], name: str):
    import io

    kinds = {i: "gpu_meta" for i in range(len(lines))}
    header_idx = next(i for i, ln in enumerate(lines) if re.match(r"^(timestamp,)?gpu,", ln))
    kinds[header_idx] = "gpu_header"
    data = [i for i in range(header_idx + 1, len(lines)) if lines[i].strip()]
    for i in data:
        kinds[i] = "gpu_samples"
    text = "\n".join([lines[header_idx]] + [lines[i] for i in data]) + "\n"
    try:
        raw = pl.read_csv(io.StringIO(text), infer_schema=False, has_header=True)
    except Exception as exc:
        raise BadInputError(f"{name}: line {header_idx + 1}: amd-smi CSV does not parse "
                            f"({str(exc).splitlines()[0][:120]})", hint="nothing was stored from this file") from None
    if raw.height != len(data):
        raise BadInputError(f"{name}: amd-smi CSV has {len(data)} data lines but {raw.height} rows parse")
    sel = [pl.Series("line_no", [i + 1 for i in data], dtype=pl.Int64)]
    for col, (target, scale) in AMD_COLUMNS.items():
        if col in raw.columns:
            s = raw.get_column(col)
            if target == "throttle_reasons":
                s = s.str.strip_chars().replace({"UNTHROTTLED": None, "N/A": None})
            elif scale is not None:
                s = _number_series(s) * scale
            sel.append(s.alias(target))
    if "timestamp" in raw.columns:
        from .timestamps import epoch_to_local

        sel.append(pl.Series("ts", [epoch_to_local(float(v)) if v and v.replace(".", "", 1).isdigit() else None
                                    for v in raw.get_column("timestamp").to_list()], dtype=pl.Datetime("us")))
    return _finish(pl.DataFrame(sel), "amd-smi"), kinds


_PARSERS = {"nvidia_smi_csv": _nvidia_csv, "nvidia_smi_dmon": _dmon, "rocm_smi_csv": _rocm_csv,
            "amd_smi_csv": _amd_csv}


def parse_gpu_text(kind: str, lines: list[str], name: str) -> tuple[pl.DataFrame, dict[int, str]]:
    frame, kinds = _PARSERS[kind](lines, name)
    if frame.height == 0:
        raise BadInputError(f"{name}: {kind.replace('_', ' ')} header but no samples")
    return frame, kinds
