-- id: running_pinned_at_cap
-- severity: warning
-- title: Run {run_id}: running requests sat at the admission cap {cap} ({cap_name}) on {n_pinned} stats lines over {span_s} s while up to {max_queue} requests waited and KV usage was only ~{kv_pct} % — the cap, not memory, limits the batch
-- advice: max_running_requests=raise, max_num_seqs=raise
-- fix: Raise the cap on running requests, keeping it within the CUDA-graph ceiling.
-- fix.sglang: Raise --max-running-requests within --cuda-graph-max-bs (see sgl_decode_above_cuda_graph_bs).
-- fix.vllm: Raise --max-num-seqs within the max capture size (see vllm_decode_not_graph_covered).
-- params: kv_low=0.7, min_lines=5, min_span_s=30
-- source: docs/knowledge-base.md R16 — SGLang hyperparameter tuning docs; sglang PR #34290 (running batch pinned at the admission cap while the queue grows). Busy stats lines (primary rank) with Running == max_running_requests / max_num_seqs, a waiting queue and KV usage < 0.7; >=5 such lines spanning >=30 s.
-- requires: decode_stats.queued_reqs, runs.max_running_requests
WITH p AS (
  SELECT d.run_id, d.line_no, d.ts, d.queued_reqs, d.kv_usage, r.max_running_requests AS cap,
         CASE WHEN r.engine = 'vllm' THEN 'max_num_seqs' ELSE 'max_running_requests' END AS cap_name
  FROM decode_primary d JOIN runs r USING (run_id)
  WHERE d.primary_rank AND r.max_running_requests IS NOT NULL
    AND d.running_reqs = r.max_running_requests AND d.queued_reqs > 0
    AND d.kv_usage < $kv_low
)
SELECT run_id, min(line_no) AS line_no, any_value(cap) AS cap, any_value(cap_name) AS cap_name,
       count(*) AS n_pinned, max(queued_reqs) AS max_queue, round(100 * median(kv_usage), 1) AS kv_pct,
       coalesce(CAST(epoch(max(ts)) - epoch(min(ts)) AS INTEGER), 0) AS span_s,
       [arg_max(line_no, queued_reqs)] AS evidence_lines
FROM p GROUP BY run_id
HAVING count(*) >= $min_lines AND coalesce(epoch(max(ts)) - epoch(min(ts)), 0) >= $min_span_s
