-- run_summary: one row per run with the figures people compare.
-- single_stream_tok_s: median generation throughput of decode/stat lines with exactly one
-- running request (primary rank only, idle lines excluded); peak_gen_tok_s: the maximum.
SELECT
  r.run_id, r.source_id, s.name AS source_name, r.label, r.engine, r.engine_version, r.format_era,
  r.model, r.model_arch, r.tp_size, r.dp_size, r.attention_backend, r.spec_method, r.num_spec_tokens,
  r.cuda_graph, r.kv_cache_tokens, r.weight_load_s, r.cuda_graph_capture_s, r.time_to_ready_s,
  r.end_state, r.gpu_name, r.gpu_sm,
  d.decode_samples, d.single_stream_tok_s, d.peak_gen_tok_s, d.no_graph_share,
  sp.accept_len AS mean_accept_len, sp.draft_accept_rate,
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
  -- interval observations: weight by drafted tokens where counts exist, else a plain mean;
  -- cumulative counters (vLLM V0 "Speculative metrics") already total the run: take the last one
  SELECT run_id, coalesce(any_value(i.accept_len), any_value(c.accept_len)) AS accept_len,
         coalesce(any_value(i.draft_accept_rate), any_value(c.draft_accept_rate)) AS draft_accept_rate
  FROM (SELECT DISTINCT run_id FROM spec_stats WHERE accept_len IS NOT NULL) ids
  LEFT JOIN (
    SELECT run_id,
      coalesce(sum(accept_len * drafted_tokens) / nullif(sum(drafted_tokens) FILTER (WHERE accept_len IS NOT NULL), 0),
               avg(accept_len)) AS accept_len,
      coalesce(sum(accepted_tokens)::DOUBLE / nullif(sum(drafted_tokens), 0), avg(draft_accept_rate)) AS draft_accept_rate
    FROM spec_stats WHERE NOT coalesce(cumulative, false) AND accept_len IS NOT NULL GROUP BY run_id
  ) i USING (run_id)
  LEFT JOIN (
    SELECT run_id, arg_max(accept_len, line_no) AS accept_len, arg_max(draft_accept_rate, line_no) AS draft_accept_rate
    FROM spec_stats WHERE coalesce(cumulative, false) AND accept_len IS NOT NULL GROUP BY run_id
  ) c USING (run_id)
  GROUP BY run_id
) sp USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n_errors, count(*) FILTER (WHERE fatal) AS n_fatal FROM errors GROUP BY run_id) e USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n_lines, count(*) FILTER (WHERE kind = 'unparsed') AS n_unparsed FROM lines GROUP BY run_id) l USING (run_id)
