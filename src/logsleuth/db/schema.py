"""The DuckDB schema contract: tables, columns and views users write SQL against.

Contract: ``TABLES`` maps each table to its ordered (column, DuckDB type) list; the
store creates them from here and the pipeline fills frames by these names (missing
columns become NULL). Column names carry units (``_s``, ``_ms``, ``_tok_s``); ratios are
0..1. ``SCHEMA_VERSION`` is bumped on any incompatible change; a database written by a
newer logsleuth is refused rather than misread.
"""
from __future__ import annotations

SCHEMA_VERSION = 2  # 2: lines split into lines_other + lines_bulk behind the `lines` view; decode_primary

#: physical line stores behind the ``lines`` view (queries/views/lines.sql): ``lines_bulk``
#: holds the high-volume periodic lines (decode/prefill/spec stats, HTTP access log; patterns
#: with ``bulk = true``), ``lines_other`` everything else, a few percent of a busy log. Rules
#: that search raw text read ``lines_other`` and stay fast on multi-GB logs.
LINE_TABLES = ("lines_other", "lines_bulk")

#: log text columns (line text, messages, tracebacks): stored zstd-compressed by DuckDB. A log
#: repeats itself, so zstd keeps its text 4-10x smaller than DuckDB's default choice for
#: strings (dictionary/FSST), and decompressing is cheap enough that LIKE over it stays as
#: fast (README "Performance"). The duckdb CLI 1.5 reads such columns.
TEXT = "VARCHAR USING COMPRESSION zstd"

_LINE_REF = [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("run_id", "INTEGER")]
_WHEN = [("ts", "TIMESTAMP"), ("rank", "VARCHAR"), ("tp_rank", "INTEGER"), ("dp_rank", "INTEGER"),
         ("proc", "VARCHAR")]

_LINE_COLUMNS = [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("run_id", "INTEGER"),
                 ("kind", "VARCHAR"), ("pattern", "VARCHAR"), ("template_id", "INTEGER"),
                 ("truncated", "BOOLEAN"), ("raw", TEXT)]

_DECODE_COLUMNS = _LINE_REF + _WHEN + [
    ("engine_idx", "INTEGER"), ("running_reqs", "INTEGER"), ("queued_reqs", "INTEGER"),
    ("swapped_reqs", "INTEGER"), ("tokens", "BIGINT"), ("kv_usage", "DOUBLE"),
    ("swa_usage", "DOUBLE"), ("mamba_usage", "DOUBLE"), ("cuda_graph", "BOOLEAN"),
    ("gen_tok_s", "DOUBLE"), ("prompt_tok_s", "DOUBLE"), ("prefix_hit_rate", "DOUBLE"),
    ("accept_len", "DOUBLE"), ("accept_rate", "DOUBLE"), ("preemptions", "INTEGER"),
    ("retracted_reqs", "INTEGER"), ("fwd_iter", "BIGINT"), ("primary_rank", "BOOLEAN"),
]

#: bench_results columns only the JSON result files fill (added in place to older databases)
BENCH_JSON_COLUMNS = [
    ("started_at", "TIMESTAMP"), ("model_id", "VARCHAR"), ("bench_label", "VARCHAR"),
    ("p90_ttft_ms", "DOUBLE"), ("p95_ttft_ms", "DOUBLE"), ("p90_tpot_ms", "DOUBLE"), ("p95_tpot_ms", "DOUBLE"),
    ("p90_itl_ms", "DOUBLE"), ("n_detailed", "BIGINT"), ("detail_p50_ttft_ms", "DOUBLE"),
    ("detail_p99_ttft_ms", "DOUBLE"), ("detail_p50_itl_ms", "DOUBLE"), ("detail_p99_itl_ms", "DOUBLE"),
]

TABLES: dict[str, list[tuple[str, str]]] = {
    "meta": [("key", "VARCHAR PRIMARY KEY"), ("value", "VARCHAR")],
    "sources": [
        ("source_id", "INTEGER PRIMARY KEY"), ("path", "VARCHAR"), ("name", "VARCHAR"),
        ("sha256", "VARCHAR UNIQUE"), ("bytes", "BIGINT"), ("n_lines", "BIGINT"),
        ("kind", "VARCHAR"), ("engine", "VARCHAR"), ("format_era", "VARCHAR"), ("label", "VARCHAR"),
        ("ingested_at", "TIMESTAMP"), ("year_basis", "VARCHAR"), ("bad_bytes", "BIGINT"),
        ("nul_bytes", "BIGINT"), ("truncated_lines", "BIGINT"), ("crlf_lines", "BIGINT"),
        ("grew_during_ingest", "BOOLEAN"), ("compressed", "BOOLEAN"),
    ],
    "runs": [
        ("run_id", "INTEGER PRIMARY KEY"), ("source_id", "INTEGER"), ("ordinal", "INTEGER"),
        ("label", "VARCHAR"), ("engine", "VARCHAR"), ("engine_version", "VARCHAR"),
        ("format_era", "VARCHAR"), ("first_line", "BIGINT"), ("last_line", "BIGINT"),
        ("started_at", "TIMESTAMP"), ("ended_at", "TIMESTAMP"), ("model", "VARCHAR"),
        ("model_arch", "VARCHAR"), ("quantization", "VARCHAR"), ("kv_cache_dtype", "VARCHAR"),
        ("tp_size", "INTEGER"), ("dp_size", "INTEGER"), ("pp_size", "INTEGER"), ("ep_size", "INTEGER"),
        ("attention_backend", "VARCHAR"), ("attention_backend_how", "VARCHAR"),
        ("spec_method", "VARCHAR"), ("num_spec_tokens", "INTEGER"), ("spec_draft_model", "VARCHAR"),
        ("cuda_graph", "BOOLEAN"), ("cuda_graph_max_bs", "INTEGER"), ("max_running_requests", "INTEGER"),
        ("context_len", "BIGINT"), ("kv_cache_tokens", "BIGINT"), ("weight_load_s", "DOUBLE"),
        ("cuda_graph_capture_s", "DOUBLE"), ("time_to_ready_s", "DOUBLE"), ("ready", "BOOLEAN"),
        ("ready_line", "BIGINT"), ("end_state", "VARCHAR"), ("end_line", "BIGINT"),
        ("end_reason", "VARCHAR"), ("gpu_name", "VARCHAR"), ("gpu_count", "INTEGER"),
        ("gpu_cc", "VARCHAR"), ("gpu_sm", "VARCHAR"), ("gpu_vendor", "VARCHAR"),
        ("gpu_memory_gib", "DOUBLE"), ("gpu_interconnect", "VARCHAR"), ("gpu_source", "VARCHAR"),
        # identity and speculative vocabulary (issue 12, derive/identity.py, derive/spec.py):
        # served_model_name is the API alias, model_key the canonical key cross-run rules match
        # on; parallel_source says where tp/dp sizes came from; spec_kind chain | ceiling
        ("served_model_name", "VARCHAR"), ("model_key", "VARCHAR"), ("parallel_source", "VARCHAR"),
        ("spec_kind", "VARCHAR"),
    ],
    "config": _LINE_REF + [("origin", "VARCHAR"), ("key", "VARCHAR"), ("value", "VARCHAR")],
    "events": _LINE_REF + _WHEN + [
        ("kind", "VARCHAR"), ("message", TEXT), ("value", "DOUBLE"), ("text", TEXT),
        ("attrs", "JSON"),
    ],
    "decode_stats": _DECODE_COLUMNS,
    # the decode_stats rows of each run's primary rank (TP0 / DP0: one row per scheduler
    # report, not one per rank), copied at ingest so rules read 1/TP of the rows
    "decode_primary": _DECODE_COLUMNS,
    "prefill_stats": _LINE_REF + _WHEN + [
        ("new_seqs", "INTEGER"), ("new_tokens", "BIGINT"), ("cached_tokens", "BIGINT"),
        ("cache_hit_rate", "DOUBLE"), ("kv_usage", "DOUBLE"), ("running_reqs", "INTEGER"),
        ("queued_reqs", "INTEGER"), ("input_tok_s", "DOUBLE"), ("cuda_graph", "BOOLEAN"),
        ("primary_rank", "BOOLEAN"),
    ],
    "spec_stats": _LINE_REF + _WHEN + [
        ("origin", "VARCHAR"), ("accept_len", "DOUBLE"), ("draft_accept_rate", "DOUBLE"),
        ("accepted_tokens", "BIGINT"), ("drafted_tokens", "BIGINT"), ("num_drafts", "BIGINT"),
        ("emitted_tokens", "BIGINT"), ("num_spec_tokens", "INTEGER"), ("system_efficiency", "DOUBLE"),
        ("per_position", "DOUBLE[]"), ("cumulative", "BOOLEAN"), ("definition", "VARCHAR"),
        ("raw_accept_len", "DOUBLE"), ("raw_rate", "DOUBLE"),
    ],
    "errors": _LINE_REF + _WHEN + [
        ("last_line", "BIGINT"), ("kind", "VARCHAR"), ("exc_type", "VARCHAR"), ("fatal", "BOOLEAN"),
        ("message", TEXT), ("traceback", TEXT),
    ],
    "bench_results": _LINE_REF + [
        ("last_line", "BIGINT"), ("tool", "VARCHAR"), ("backend", "VARCHAR"),
        ("successful_requests", "BIGINT"), ("failed_requests", "BIGINT"),
        ("max_concurrency", "DOUBLE"), ("request_rate", "DOUBLE"), ("duration_s", "DOUBLE"),
        ("total_input_tokens", "BIGINT"), ("total_output_tokens", "BIGINT"),
        ("request_throughput", "DOUBLE"), ("input_tok_s", "DOUBLE"), ("output_tok_s", "DOUBLE"),
        ("peak_output_tok_s", "DOUBLE"), ("peak_concurrency", "DOUBLE"), ("total_tok_s", "DOUBLE"),
        ("concurrency", "DOUBLE"), ("accept_len", "DOUBLE"), ("accept_rate", "DOUBLE"),
        ("mean_e2e_ms", "DOUBLE"), ("median_e2e_ms", "DOUBLE"), ("p90_e2e_ms", "DOUBLE"),
        ("p99_e2e_ms", "DOUBLE"),
        ("mean_ttft_ms", "DOUBLE"), ("median_ttft_ms", "DOUBLE"), ("p99_ttft_ms", "DOUBLE"),
        ("mean_tpot_ms", "DOUBLE"), ("median_tpot_ms", "DOUBLE"), ("p99_tpot_ms", "DOUBLE"),
        ("mean_itl_ms", "DOUBLE"), ("median_itl_ms", "DOUBLE"), ("p95_itl_ms", "DOUBLE"),
        ("p99_itl_ms", "DOUBLE"), ("max_itl_ms", "DOUBLE"),
        ("spec_drafts", "BIGINT"), ("spec_draft_tokens", "BIGINT"), ("spec_accepted_tokens", "BIGINT"),
        # bench result JSON/JSONL files (telemetry/bench_json.py); NULL for text blocks
        *BENCH_JSON_COLUMNS,
    ],
    "lines_other": _LINE_COLUMNS,
    "lines_bulk": _LINE_COLUMNS,
    "env_reports": [("source_id", "INTEGER"), ("kind", "VARCHAR"), ("vendor", "VARCHAR"),
                    ("gpu_name", "VARCHAR"), ("gpu_count", "INTEGER"), ("gpu_cc", "VARCHAR"),
                    ("gpu_sm", "VARCHAR"), ("gpu_memory_gib", "DOUBLE"), ("interconnect", "VARCHAR"),
                    ("driver_version", "VARCHAR"), ("cuda_version", "VARCHAR"), ("torch_version", "VARCHAR"),
                    ("torch_cuda", "VARCHAR"), ("nccl_version", "VARCHAR"), ("engine_versions", "JSON"),
                    ("env", "JSON")],
    "templates": [("template_id", "INTEGER PRIMARY KEY"), ("source_id", "INTEGER"),
                  ("template", "VARCHAR"), ("n_lines", "BIGINT"), ("example_line_no", "BIGINT")],
    # where an ingest left each file, so that ingesting it again after it grew reads only the
    # new bytes (ingest/source.py): resume offset and line, fingerprint, carried state (JSON)
    "source_state": [("source_id", "INTEGER PRIMARY KEY"), ("real_path", "VARCHAR"), ("family", "VARCHAR"),
                     ("read_end", "BIGINT"), ("resume_line", "BIGINT"), ("state", "VARCHAR")],
    # --- telemetry (issue 14; filled by logsleuth.telemetry, see README "Telemetry") ---
    # one row per Prometheus sample of a scrape (a file of snapshots or `logsleuth scrape`)
    "metrics": [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("snapshot", "INTEGER"),
                ("ts", "TIMESTAMP"), ("host", "VARCHAR"), ("instance", "VARCHAR"), ("family", "VARCHAR"),
                ("name", "VARCHAR"), ("type", "VARCHAR"), ("labels", "JSON"), ("model", "VARCHAR"),
                ("le", "DOUBLE"), ("value", "DOUBLE")],
    # one row per GPU per sample (nvidia-smi CSV/dmon, DCGM exporter, rocm-smi, amd-smi); ratios 0..1
    "gpu_samples": [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("ts", "TIMESTAMP"), ("host", "VARCHAR"),
                    ("tool", "VARCHAR"), ("gpu_index", "INTEGER"), ("gpu_name", "VARCHAR"), ("uuid", "VARCHAR"),
                    ("pci_bus_id", "VARCHAR"), ("pstate", "VARCHAR"), ("gpu_util", "DOUBLE"),
                    ("mem_util", "DOUBLE"), ("mem_used_mib", "DOUBLE"), ("mem_total_mib", "DOUBLE"),
                    ("power_w", "DOUBLE"), ("power_limit_w", "DOUBLE"), ("sm_clock_mhz", "DOUBLE"),
                    ("sm_clock_max_mhz", "DOUBLE"), ("mem_clock_mhz", "DOUBLE"), ("temp_c", "DOUBLE"),
                    ("mem_temp_c", "DOUBLE"), ("throttle_mask", "BIGINT"), ("throttle_reasons", "VARCHAR"),
                    ("pcie_gen", "INTEGER"), ("pcie_gen_max", "INTEGER"), ("pcie_width", "INTEGER"),
                    ("pcie_width_max", "INTEGER")],
    # per request of a bench result JSON saved with details (--output-details / --save-detailed)
    "bench_requests": [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("request_index", "INTEGER"),
                       ("input_len", "BIGINT"), ("output_len", "BIGINT"), ("start_s", "DOUBLE"),
                       ("ttft_ms", "DOUBLE"), ("itl_mean_ms", "DOUBLE"), ("itl_max_ms", "DOUBLE"),
                       ("error", "VARCHAR")],
    # one row per telemetry source: what it is, whose it is (host, scrape instance/port, model)
    # and the run it was attached to by hand (ingest --run); run_telemetry links the rest
    "telemetry_sources": [("source_id", "INTEGER"), ("tool", "VARCHAR"), ("host", "VARCHAR"),
                          ("instance", "VARCHAR"), ("port", "INTEGER"), ("model", "VARCHAR"),
                          ("first_ts", "TIMESTAMP"), ("last_ts", "TIMESTAMP"), ("run_id", "INTEGER")],
}

#: tables whose rows come from one source; deleted together on --replace
PER_SOURCE_TABLES = ["source_state", "metrics", "gpu_samples", "bench_requests", "telemetry_sources", "env_reports", "lines_other", "lines_bulk", "templates", "config", "events", "decode_stats", "decode_primary",
                     "prefill_stats",
                     "spec_stats", "errors", "bench_results", "runs", "sources"]


def columns(table: str) -> list[str]:
    return [c for c, _ in TABLES["lines_other" if table == "lines" else table]]


def create_statements() -> list[str]:
    out = []
    for table, cols in TABLES.items():
        body = ", ".join(f'"{c}" {t}' for c, t in cols)
        out.append(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
        # columns added after a database was created reach it on the next writable open
        out.extend(f'ALTER TABLE {table} ADD COLUMN IF NOT EXISTS "{c}" {t}' for c, t in cols
                   if "PRIMARY KEY" not in t and "UNIQUE" not in t)
    return out
