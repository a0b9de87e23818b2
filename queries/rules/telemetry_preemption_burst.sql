-- id: telemetry_preemption_burst
-- severity: warning
-- title: Run {run_id}: {n_preempt} {what} within {interval_s} s ({per_min} per minute) at {ts}
-- advice: mem_fraction_static=raise, gpu_memory_utilization=raise, max_running_requests=lower, max_num_seqs=lower, schedule_conservativeness=raise
-- fix: Bursts of preemption or retraction recompute requests from scratch: latency spikes mid-stream. Give the KV cache more room (FP8 KV cache, more TP) or admit fewer requests.
-- fix.sglang: Raise --mem-fraction-static, lower --max-running-requests, or set --schedule-conservativeness above 1.
-- fix.vllm: Raise --gpu-memory-utilization or lower --max-num-seqs.
-- params: min_burst=10, per_min=5, critical_burst=20
-- source: Prometheus counters vllm:num_preemptions_total and sglang:num_retracted_requests_total (README.md (Telemetry) 1.1, 2.1) as per-interval increases (view metric_rates, counter resets skipped). docs/knowledge-base.md R10 vllm_preemption (docs: about once a minute is acceptable; critical when frequent, >= 20 at >= 5 per minute) and R06 sgl_kv_pool_full_retract. A burst = >= 10 in one scrape interval at >= 5 per minute.
-- requires: metrics
WITH d AS (
  SELECT source_id, snapshot, any_value(ts) AS ts, min(line_no) AS line_no,
         CASE WHEN any_value(name) LIKE 'vllm:%' THEN 'preemptions' ELSE 'retractions' END AS what,
         sum(delta) AS n, max(interval_s) AS interval_s
  FROM metric_rates
  WHERE name IN ('vllm:num_preemptions_total', 'sglang:num_retracted_requests_total') AND delta >= 0
  GROUP BY source_id, snapshot
)
SELECT rt.run_id, d.source_id, d.line_no, CAST(d.n AS BIGINT) AS n_preempt, d.what, round(d.interval_s, 0) AS interval_s,
       round(60 * d.n / d.interval_s, 1) AS per_min, d.ts,
       CASE WHEN d.n >= $critical_burst THEN 'critical' ELSE 'warning' END AS severity
FROM d JOIN run_telemetry rt USING (source_id)
WHERE d.n >= $min_burst AND d.interval_s > 0 AND 60 * d.n / d.interval_s >= $per_min
