-- run_summary: one row per run with the figures people compare. The aggregates come from
-- run_rollup, computed once per run when it is derived (queries/derive/rollup.sql holds the
-- formulas below, applied to decode_primary, spec_stats, errors and the lines).
-- single_stream_tok_s: median generation throughput of decode/stat lines with exactly one
-- running request (one row per scheduler: primary rank of each DP rank; idle lines excluded);
-- peak_gen_tok_s: the maximum.
-- Speculative decoding, in one vocabulary for every engine (spec_stats.definition says how each
-- engine's printed numbers were converted):
--   mean_accept_len   = mean tokens per verify step including the bonus token, weighted by verify
--                       steps (drafted tokens where steps are unknown); idle intervals (0 drafts)
--                       say nothing and are skipped; vLLM V0 counters are cumulative: the last one
--   draft_accept_rate = per-token draft acceptance: (mean_accept_len - 1) / k for chain methods;
--                       accepted / drafted for ceiling methods (k is a maximum there)
--   spec_k            = draft tokens per verify step (vLLM num_speculative_tokens = SGLang
--                       speculative_num_steps), spec_kind chain | ceiling
--   per_position      = per-position acceptance rates (vLLM V1), weighted by verify steps
SELECT
  r.run_id, r.source_id, s.name AS source_name, r.label, r.engine, r.engine_version, r.format_era,
  -- the exact version when the log prints one, the era otherwise (as `logsleuth runs` shows it)
  coalesce(r.engine_version, 'era ' || r.format_era) AS version,
  r.model, r.served_model_name, r.model_key, r.model_arch, r.tp_size, r.dp_size, r.parallel_source,
  r.attention_backend, r.spec_method, r.spec_kind, r.num_spec_tokens AS spec_k, r.num_spec_tokens,
  r.cuda_graph, r.kv_cache_tokens, r.weight_load_s, r.cuda_graph_capture_s, r.time_to_ready_s,
  r.end_state, r.gpu_name, r.gpu_sm,
  d.decode_samples, d.single_stream_tok_s, d.peak_gen_tok_s, d.no_graph_share,
  d.mean_accept_len,
  CASE WHEN r.spec_kind = 'ceiling' OR coalesce(r.num_spec_tokens, 0) = 0 THEN d.proposed_rate
       ELSE least(1, greatest(0, (d.mean_accept_len - 1) / r.num_spec_tokens)) END AS draft_accept_rate,
  d.per_position, d.n_spec_obs,
  d.n_errors, d.n_fatal,
  d.n_lines, d.n_unparsed, round(1 - d.n_unparsed / nullif(d.n_lines, 0), 4) AS parse_coverage
FROM runs r
JOIN sources s USING (source_id)
LEFT JOIN run_rollup d USING (run_id)
