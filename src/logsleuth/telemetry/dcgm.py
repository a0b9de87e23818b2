"""DCGM exporter samples (inside ``metrics``) -> ``gpu_samples`` rows.

Contract: ``dcgm_gpu_samples(metrics)`` pivots the ``DCGM_FI_*`` rows of a parsed exposition
(polars frame of ``metrics`` columns) into one ``gpu_samples`` row per GPU per snapshot; an
empty frame when there are none. The metric rows stay in ``metrics`` as well: the pivot
only makes GPU questions answerable the same way whatever sampled the GPU. Field names and
units are those of dcgm-exporter's default-counters.csv (docs telemetry-formats.md 3.3);
values near 2^63 are DCGM's "blank" markers and become NULL.
"""
from __future__ import annotations

import polars as pl

#: DCGM field -> (gpu_samples column, scale to the schema unit)
DCGM_FIELDS = {
    "DCGM_FI_DEV_GPU_UTIL": ("gpu_util", 0.01), "DCGM_FI_DEV_MEM_COPY_UTIL": ("mem_util", 0.01),
    "DCGM_FI_DEV_FB_USED": ("mem_used_mib", 1.0), "DCGM_FI_DEV_FB_FREE": ("mem_free_mib", 1.0),
    "DCGM_FI_DEV_FB_RESERVED": ("mem_reserved_mib", 1.0), "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1.0), "DCGM_FI_DEV_MEM_CLOCK": ("mem_clock_mhz", 1.0),
    "DCGM_FI_DEV_GPU_TEMP": ("temp_c", 1.0), "DCGM_FI_DEV_MEMORY_TEMP": ("mem_temp_c", 1.0),
    "DCGM_FI_DEV_PCIE_LINK_GEN": ("pcie_gen", 1.0), "DCGM_FI_DEV_PCIE_LINK_WIDTH": ("pcie_width", 1.0),
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": ("pcie_gen_max", 1.0), "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": ("pcie_width_max", 1.0),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("throttle_mask", 1.0),
}
_BLANK = 2.0 ** 62  # DCGM's blank values sit just below 2^63


def dcgm_gpu_samples(metrics: pl.DataFrame) -> pl.DataFrame:
    rows = metrics.filter(pl.col("name").is_in(list(DCGM_FIELDS)))
    if rows.height == 0:
        return pl.DataFrame()
    lab = pl.col("labels")
    rows = rows.with_columns(
        lab.str.json_path_match("$.gpu").cast(pl.Int32, strict=False).alias("gpu_index"),
        pl.coalesce(lab.str.json_path_match("$.UUID"), lab.str.json_path_match("$.uuid")).alias("uuid"),
        lab.str.json_path_match("$.modelName").alias("gpu_name"),
        lab.str.json_path_match("$.pci_bus_id").alias("pci_bus_id"),
        pl.col("name").replace_strict({k: v[0] for k, v in DCGM_FIELDS.items()}).alias("field"),
        (pl.when(pl.col("value") >= _BLANK).then(None).otherwise(pl.col("value"))
         * pl.col("name").replace_strict({k: v[1] for k, v in DCGM_FIELDS.items()}, return_dtype=pl.Float64))
        .alias("v"),
    )
    keys = ["snapshot", "ts", "host", "gpu_index", "uuid"]
    wide = rows.pivot(on="field", index=keys, values="v", aggregate_function="first")
    first = rows.group_by(keys).agg(pl.col("line_no").min(), pl.col("gpu_name").first(),
                                    pl.col("pci_bus_id").first())
    wide = wide.join(first, on=keys, how="left", nulls_equal=True)
    if "mem_used_mib" in wide.columns and "mem_free_mib" in wide.columns:
        total = pl.col("mem_used_mib") + pl.col("mem_free_mib")
        if "mem_reserved_mib" in wide.columns:
            total = total + pl.col("mem_reserved_mib").fill_null(0)
        wide = wide.with_columns(total.alias("mem_total_mib"))
    ints = [pl.col(c).cast(pl.Int32) for c in ("pcie_gen", "pcie_width", "pcie_gen_max", "pcie_width_max")
            if c in wide.columns]
    if "throttle_mask" in wide.columns:
        ints.append(pl.col("throttle_mask").cast(pl.Int64))
    wide = wide.with_columns(ints) if ints else wide
    drop = [c for c in ("mem_free_mib", "mem_reserved_mib", "snapshot") if c in wide.columns]
    return wide.drop(drop).with_columns(pl.lit("dcgm-exporter").alias("tool")).sort("line_no")
