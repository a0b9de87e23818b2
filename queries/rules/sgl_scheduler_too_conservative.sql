-- id: sgl_scheduler_too_conservative
-- severity: info
-- title: Run {run_id}: requests wait (#queue-req up to {max_queue}) on {n_lines} decode lines over {span_s} s while token usage stays at {median_usage} (< {kv_full}) and #running-req ({median_running}) is below the cap — admission reserves KV that requests never use
-- advice: schedule_conservativeness=lower
-- fix: Lower --schedule-conservativeness (e.g. 0.3) so the scheduler admits more requests, or send realistic max_tokens (admission reserves max_new_tokens per request).
-- params: kv_full=0.9, min_lines=5, min_span_s=30, min_share=0.8
-- source: docs/knowledge-base.md R07 — SGLang hyperparameter tuning docs (token usage < 0.9 with a waiting queue means the scheduler is too conservative). Busy decode lines of the primary rank with #queue-req > 0 and #running-req below max_running_requests; >=80 % of them below 0.9 token usage, sustained >=30 s, and no retraction in the run (retraction means the opposite problem).
-- requires: decode_stats.queued_reqs
-- engine: sglang
WITH calm AS (  -- runs that never retracted (a retraction means the pool was full): first, so
               -- the decode lines of the others are never aggregated
  SELECT r.run_id, r.max_running_requests FROM runs r
  WHERE r.engine = 'sglang' AND NOT EXISTS (SELECT 1 FROM events_other e WHERE e.run_id = r.run_id AND e.kind = 'kv_retract')
),
q AS (
  SELECT d.run_id, d.line_no, d.ts, d.queued_reqs, d.running_reqs, d.kv_usage
  FROM decode_primary d JOIN calm r USING (run_id)
  WHERE d.primary_rank AND d.running_reqs > 0 AND d.queued_reqs > 0
    AND d.kv_usage IS NOT NULL
    AND d.running_reqs < coalesce(r.max_running_requests, 2147483647)
),
agg AS (
  SELECT run_id, count(*) AS n_lines, min(line_no) AS line_no, max(queued_reqs) AS max_queue,
         round(median(kv_usage), 2) AS median_usage, CAST(median(running_reqs) AS INTEGER) AS median_running,
         count(*) FILTER (WHERE kv_usage < $kv_full)::DOUBLE / count(*) AS low_share,
         coalesce(CAST(epoch(max(ts)) - epoch(min(ts)) AS INTEGER), 0) AS span_s,
         arg_max(line_no, queued_reqs, 3) AS evidence_lines
  FROM q GROUP BY run_id
)
SELECT a.run_id, a.line_no, a.n_lines, a.max_queue, a.median_usage, a.median_running, a.span_s,
       $kv_full AS kv_full, a.evidence_lines
FROM agg a
WHERE a.n_lines >= $min_lines AND a.span_s >= $min_span_s AND a.low_share >= $min_share
