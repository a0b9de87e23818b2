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

_LINE_REF = [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("run_id", "INTEGER")]
_WHEN = [("ts", "TIMESTAMP"), ("rank", "VARCHAR"), ("tp_rank", "INTEGER"), ("dp_rank", "INTEGER"),
         ("proc", "VARCHAR")]

_LINE_COLUMNS = [("source_id", "INTEGER"), ("line_no", "BIGINT"), ("run_id", "INTEGER"),
                 ("kind", "VARCHAR"), ("pattern", "VARCHAR"), ("template_id", "INTEGER"),
                 ("truncated", "BOOLEAN"), ("raw", "VARCHAR")]

_DECODE_COLUMNS = _LINE_REF + _WHEN + [
    ("engine_idx", "INTEGER"), ("running_reqs", "INTEGER"), ("queued_reqs", "INTEGER"),
    ("swapped_reqs", "INTEGER"), ("tokens", "BIGINT"), ("kv_usage", "DOUBLE"),
    ("swa_usage", "DOUBLE"), ("mamba_usage", "DOUBLE"), ("cuda_graph", "BOOLEAN"),
    ("gen_tok_s", "DOUBLE"), ("prompt_tok_s", "DOUBLE"), ("prefix_hit_rate", "DOUBLE"),
    ("accept_len", "DOUBLE"), ("accept_rate", "DOUBLE"), ("preemptions", "INTEGER"),
    ("retracted_reqs", "INTEGER"), ("fwd_iter", "BIGINT"), ("primary_rank", "BOOLEAN"),
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
    ],
    "config": _LINE_REF + [("origin", "VARCHAR"), ("key", "VARCHAR"), ("value", "VARCHAR")],
    "events": _LINE_REF + _WHEN + [
        ("kind", "VARCHAR"), ("message", "VARCHAR"), ("value", "DOUBLE"), ("text", "VARCHAR"),
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
        ("message", "VARCHAR"), ("traceback", "VARCHAR"),
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
}

#: tables whose rows come from one source; deleted together on --replace
PER_SOURCE_TABLES = ["env_reports", "lines_other", "lines_bulk", "templates", "config", "events", "decode_stats", "decode_primary",
                     "prefill_stats",
                     "spec_stats", "errors", "bench_results", "runs", "sources"]


def columns(table: str) -> list[str]:
    return [c for c, _ in TABLES["lines_other" if table == "lines" else table]]


def create_statements() -> list[str]:
    out = []
    for table, cols in TABLES.items():
        body = ", ".join(f'"{c}" {t}' for c, t in cols)
        out.append(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
    return out
