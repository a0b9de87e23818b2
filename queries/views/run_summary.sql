-- run_summary: one row per run with the figures people compare.
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
  r.model, r.served_model_name, r.model_key, r.model_arch, r.tp_size, r.dp_size, r.parallel_source,
  r.attention_backend, r.spec_method, r.spec_kind, r.num_spec_tokens AS spec_k, r.num_spec_tokens,
  r.cuda_graph, r.kv_cache_tokens, r.weight_load_s, r.cuda_graph_capture_s, r.time_to_ready_s,
  r.end_state, r.gpu_name, r.gpu_sm,
  d.decode_samples, d.single_stream_tok_s, d.peak_gen_tok_s, d.no_graph_share,
  sp.accept_len AS mean_accept_len,
  CASE WHEN r.spec_kind = 'ceiling' OR coalesce(r.num_spec_tokens, 0) = 0 THEN sp.proposed_rate
       ELSE least(1, greatest(0, (sp.accept_len - 1) / r.num_spec_tokens)) END AS draft_accept_rate,
  sp.per_position, sp.n_spec_obs,
  e.n_errors, e.n_fatal,
  l.n_lines, l.n_unparsed, round(1 - l.n_unparsed / nullif(l.n_lines, 0), 4) AS parse_coverage
FROM runs r
JOIN sources s USING (source_id)
LEFT JOIN (
  SELECT run_id, count(*) AS decode_samples,
    median(gen_tok_s) FILTER (WHERE running_reqs = 1 AND gen_tok_s > 0) AS single_stream_tok_s,
    max(gen_tok_s) AS peak_gen_tok_s,
    avg(CASE WHEN cuda_graph IS NULL THEN NULL WHEN cuda_graph THEN 0 ELSE 1 END)
      FILTER (WHERE running_reqs > 0) AS no_graph_share
  FROM decode_primary WHERE primary_rank GROUP BY run_id
) d USING (run_id)
LEFT JOIN (
  SELECT run_id,
    coalesce(sum(accept_len * w) / nullif(sum(w) FILTER (WHERE w IS NOT NULL), 0), avg(accept_len)) AS accept_len,
    coalesce(sum(accepted_tokens)::DOUBLE / nullif(sum(drafted_tokens), 0), avg(draft_accept_rate)) AS proposed_rate,
    count(*) AS n_spec_obs,
    (SELECT list(pv ORDER BY pos) FROM (
       SELECT pos, round(sum(p * coalesce(w2, 1)) / sum(coalesce(w2, 1)), 3) AS pv
       FROM (SELECT unnest(per_position) AS p, generate_subscripts(per_position, 1) AS pos, num_drafts AS w2
             FROM spec_stats x WHERE x.run_id = o.run_id AND per_position IS NOT NULL AND coalesce(drafted_tokens, 1) > 0)
       GROUP BY pos)) AS per_position
  FROM (
    SELECT run_id, accept_len, accepted_tokens, drafted_tokens, draft_accept_rate,
           coalesce(num_drafts, drafted_tokens)::DOUBLE AS w
    FROM spec_stats
    WHERE accept_len IS NOT NULL AND NOT coalesce(cumulative, false) AND coalesce(drafted_tokens, 1) > 0
    UNION ALL  -- cumulative counters (vLLM V0): the last line totals the run
    SELECT run_id, accept_len, accepted_tokens, drafted_tokens, draft_accept_rate, NULL
    FROM spec_stats WHERE coalesce(cumulative, false) AND accept_len IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
  ) o
  GROUP BY run_id
) sp USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n_errors, count(*) FILTER (WHERE fatal) AS n_fatal FROM errors GROUP BY run_id) e USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n_lines, count(*) FILTER (WHERE kind = 'unparsed') AS n_unparsed FROM lines GROUP BY run_id) l USING (run_id)
