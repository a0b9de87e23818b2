-- id: vllm_max_concurrency_below_target
-- severity: warning
-- title: Run {run_id}: the KV cache holds {kv_tokens} tokens = {max_conc}x requests at {per_req} tokens, and the offered load ({demand} running+waiting) did not fit: about {cap_est} requests of this traffic fit ({evidence})
-- advice: max_model_len=lower
-- fix: Shrink --max-model-len to what requests need, use an FP8 KV cache, give vLLM more memory (--gpu-memory-utilization) or more GPUs (TP), or lower the target concurrency; expect preemption (vllm_preemption) and queueing otherwise.
-- params: kv_full=0.9
-- source: docs/knowledge-base.md R12 — vllm PR #12569, PR #13596, issues #8031, #54662. `Maximum concurrency for L tokens per request: X.XXx` is the worst case (every request at max_model_len); real capacity ~ KV tokens / tokens per request, estimated from the stats lines as Running / GPU KV cache usage. Fires only when demand (peak Running + Waiting) exceeds X and the KV cache really limited it: estimated capacity below demand, preemptions, or usage >= 90 % with requests waiting. Silent for idle servers and worst-case-only gaps.
-- requires: decode_stats.running_reqs
-- engine: vllm
WITH mc AS (
  SELECT run_id, min(line_no) AS line_no, max(value) AS max_conc,
         max(TRY_CAST(json_extract_string(attrs, '$.tokens_per_request') AS BIGINT)) AS per_req
  FROM (  -- one equality filter per kind: DuckDB pushes it into the scan (an IN list made it
          -- read attrs of every event, HTTP access lines included)
    SELECT run_id, line_no, value, attrs FROM events_other WHERE kind = 'max_concurrency'
    UNION ALL
    SELECT run_id, line_no, value, attrs FROM events_other
    WHERE kind = 'kv_cache_tokens' AND json_extract_string(attrs, '$.max_concurrency') IS NOT NULL)
  GROUP BY run_id
),
st AS (
  SELECT run_id, max(running_reqs + coalesce(queued_reqs, 0)) AS demand,
         -- on a tie (many lines at the peak) the first line: arg_max alone picked any of them, so
         -- that two diagnoses of one database could differ (2 GB vLLM: 170 or 184)
         arg_max(running_reqs / kv_usage, (kv_usage, -line_no)) FILTER (WHERE kv_usage >= 0.05 AND running_reqs > 0) AS cap_est,
         count(*) FILTER (WHERE kv_usage >= $kv_full AND queued_reqs > 0) AS n_full,
         coalesce(sum(preemptions), 0) AS n_pre,
         arg_max(line_no, (running_reqs + coalesce(queued_reqs, 0), -line_no)) AS peak_line
  FROM decode_primary WHERE primary_rank AND run_id IN (SELECT run_id FROM mc) GROUP BY run_id
)
SELECT m.run_id, m.line_no,
       r.kv_cache_tokens AS kv_tokens, m.max_conc, coalesce(m.per_req, r.context_len) AS per_req,
       s.demand, CAST(floor(s.cap_est) AS INTEGER) AS cap_est,
       concat_ws(', ',
         CASE WHEN s.n_full > 0 THEN s.n_full || ' stats lines at >= ' || CAST(100 * $kv_full AS INTEGER) || ' % KV usage with requests waiting' END,
         CASE WHEN s.n_pre > 0 THEN s.n_pre || ' preemptions' END,
         CASE WHEN s.cap_est < s.demand THEN 'Running / KV usage at the fullest line ~ ' || CAST(floor(s.cap_est) AS INTEGER) END) AS evidence,
       [s.peak_line] AS evidence_lines
FROM mc m JOIN st s USING (run_id) JOIN runs r USING (run_id)
WHERE r.engine = 'vllm' AND s.demand > m.max_conc
  AND (s.cap_est < s.demand OR s.n_pre > 0 OR s.n_full > 0)
