-- run_rollup: per-run aggregates that run_summary, compare, the report and several rules
-- would otherwise recompute from the large tables on every read (decode_primary, spec_stats,
-- the lines behind the `lines` view), computed once when the runs are derived
-- (derive/rollup.py build_rollup) and again when an append grows them.
-- $run_ids: the runs to (re)compute. The formulas are the ones run_summary used to compute
-- live (same filters, same weights), so every figure it shows stays the same.
WITH ids AS (SELECT unnest($run_ids) AS run_id),
src AS (SELECT DISTINCT source_id FROM runs WHERE run_id IN (SELECT run_id FROM ids)),
-- per run: decode/stat lines of the primary rank(s) (one row per scheduler report)
d AS (
  SELECT run_id, line_no, running_reqs, queued_reqs, kv_usage, cuda_graph, gen_tok_s
  FROM decode_primary
  WHERE primary_rank AND source_id IN (SELECT source_id FROM src) AND run_id IN (SELECT run_id FROM ids)
),
dec AS (
  SELECT run_id, count(*) AS decode_samples,
    median(gen_tok_s) FILTER (WHERE running_reqs = 1 AND gen_tok_s > 0) AS single_stream_tok_s,
    count(*) FILTER (WHERE running_reqs = 1 AND gen_tok_s > 0) AS n_single_stream,
    max(gen_tok_s) AS peak_gen_tok_s,
    avg(CASE WHEN cuda_graph IS NULL THEN NULL WHEN cuda_graph THEN 0 ELSE 1 END)
      FILTER (WHERE running_reqs > 0) AS no_graph_share,
    count(*) FILTER (WHERE running_reqs > 0) AS busy_decode_lines,
    max(running_reqs) AS max_running_reqs, max(queued_reqs) AS max_queued_reqs, max(kv_usage) AS max_kv_usage
  FROM d GROUP BY run_id
),
-- the single-stream line closest to the run's median: a representative evidence line (the
-- first such line on a tie, so that it does not depend on the scan order)
ss AS (
  SELECT d.run_id, arg_min(d.line_no, (abs(d.gen_tok_s - dec.single_stream_tok_s), d.line_no)) AS single_stream_line
  FROM d JOIN dec USING (run_id) WHERE d.running_reqs = 1 AND d.gen_tok_s > 0 GROUP BY d.run_id
),
-- speculative acceptance in one vocabulary (README "One meaning per number"): weighted by
-- verify steps (drafted tokens where steps are unknown); idle intervals (0 drafts) skipped;
-- vLLM V0 counters are cumulative: the last one totals the run
s AS (
  SELECT run_id, line_no, accept_len, accepted_tokens, drafted_tokens, draft_accept_rate, per_position,
         num_drafts, cumulative
  FROM spec_stats WHERE source_id IN (SELECT source_id FROM src) AND run_id IN (SELECT run_id FROM ids)
),
sp_rows AS (
  SELECT run_id, accept_len, accepted_tokens, drafted_tokens, draft_accept_rate,
         coalesce(num_drafts, drafted_tokens)::DOUBLE AS w
  FROM s
  WHERE accept_len IS NOT NULL AND NOT coalesce(cumulative, false) AND coalesce(drafted_tokens, 1) > 0
  UNION ALL
  SELECT run_id, accept_len, accepted_tokens, drafted_tokens, draft_accept_rate, NULL
  FROM s WHERE coalesce(cumulative, false) AND accept_len IS NOT NULL
  QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
),
sp AS (
  SELECT run_id,
    coalesce(sum(accept_len * w) / nullif(sum(w) FILTER (WHERE w IS NOT NULL), 0), avg(accept_len)) AS mean_accept_len,
    coalesce(sum(accepted_tokens)::DOUBLE / nullif(sum(drafted_tokens), 0), avg(draft_accept_rate)) AS proposed_rate,
    count(*) AS n_spec_obs
  FROM sp_rows GROUP BY run_id
),
pos AS (
  SELECT run_id, list(pv ORDER BY pos) AS per_position FROM (
    SELECT run_id, pos, round(sum(p * coalesce(w2, 1)) / sum(coalesce(w2, 1)), 3) AS pv
    FROM (SELECT run_id, unnest(per_position) AS p, generate_subscripts(per_position, 1) AS pos, num_drafts AS w2
          FROM s WHERE per_position IS NOT NULL AND coalesce(drafted_tokens, 1) > 0)
    GROUP BY run_id, pos)
  GROUP BY run_id
),
first_spec AS (
  SELECT run_id, min(line_no) AS first_spec_line FROM s WHERE accept_len IS NOT NULL GROUP BY run_id
),
err AS (
  SELECT run_id, count(*) AS n_errors, count(*) FILTER (WHERE fatal) AS n_fatal
  FROM errors WHERE source_id IN (SELECT source_id FROM src) AND run_id IN (SELECT run_id FROM ids)
  GROUP BY run_id
),
ln AS (  -- the two line stores behind the `lines` view, read by their (run_id, kind) columns only
  SELECT run_id, count(*) AS n_lines, count(*) FILTER (WHERE kind = 'unparsed') AS n_unparsed FROM (
    SELECT run_id, kind FROM lines_other
    WHERE source_id IN (SELECT source_id FROM src) AND run_id IN (SELECT run_id FROM ids)
    UNION ALL
    SELECT run_id, kind FROM lines_bulk
    WHERE source_id IN (SELECT source_id FROM src) AND run_id IN (SELECT run_id FROM ids))
  GROUP BY run_id
)
SELECT r.source_id, r.run_id,
       ln.n_lines, ln.n_unparsed,
       dec.decode_samples, dec.single_stream_tok_s, dec.n_single_stream, ss.single_stream_line,
       dec.peak_gen_tok_s, dec.no_graph_share, dec.busy_decode_lines,
       dec.max_running_reqs, dec.max_queued_reqs, dec.max_kv_usage,
       sp.mean_accept_len, sp.proposed_rate, pos.per_position, sp.n_spec_obs, first_spec.first_spec_line,
       err.n_errors, err.n_fatal
FROM runs r
LEFT JOIN ln USING (run_id) LEFT JOIN dec USING (run_id) LEFT JOIN ss USING (run_id)
LEFT JOIN sp USING (run_id) LEFT JOIN pos ON pos.run_id = sp.run_id  -- only beside an acceptance figure
LEFT JOIN first_spec USING (run_id)
LEFT JOIN err USING (run_id)
WHERE r.run_id IN (SELECT run_id FROM ids)
