-- fleet: one row per host — what it runs and how it did, over all its runs in the dataset.
SELECT s.host,
  min(s.date) AS first_date, max(s.date) AS last_date,
  count(*) AS runs,
  string_agg(DISTINCT r.engine || coalesce(' ' || coalesce(r.engine_version, r.format_era), ''), ', ') AS engine,
  string_agg(DISTINCT r.model, ', ') AS model,
  string_agg(DISTINCT r.gpu_name, ', ') AS gpu,
  string_agg(DISTINCT r.attention_backend, ', ') AS attention_backend,
  string_agg(DISTINCT r.spec_method, ', ') AS spec_method,
  round(avg(r.mean_accept_len), 2) AS accept_len,
  round(median(r.single_stream_tok_s), 1) AS single_stream_tok_s,
  round(max(r.peak_gen_tok_s), 1) AS peak_gen_tok_s,
  string_agg(DISTINCT r.end_state, ', ' ORDER BY r.end_state) AS end_states,
  count(*) FILTER (WHERE r.end_state IN ('crashed', 'startup_failed')) AS failed_runs
FROM run_summary r JOIN sources s USING (source_id)
GROUP BY s.host ORDER BY s.host
