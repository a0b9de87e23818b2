-- id: telemetry_ttft_queueing
-- severity: warning
-- title: Run {run_id}: TTFT p99 {ttft_p99_s} s, of which queueing p99 {queue_p99_s} s ({share_pct} %): requests wait before they are scheduled
-- fix: Arrivals outpace the server: scale out (more replicas / DP with a router), rate-limit clients, or raise capacity (more KV cache, a higher running-request cap, a larger prefill batch). Prefill cost itself is not the problem here.
-- fix.sglang: Capacity knobs: --max-running-requests, --chunked-prefill-size.
-- fix.vllm: Capacity knobs: --max-num-seqs, --max-num-batched-tokens.
-- params: min_ttft_s=1.0, min_share=0.5
-- source: Prometheus histograms at the last snapshot of the scrape (cumulative since the server started; view metric_quantiles, histogram_quantile interpolation): vLLM vllm:time_to_first_token_seconds and vllm:request_queue_time_seconds (WAITING phase; V0 vllm:time_in_queue_requests), SGLang sglang:time_to_first_token_seconds and sglang:queue_time_seconds (README.md (Telemetry) 1.1, 2.1). When queueing makes up half or more of a p99 TTFT over 1 s, TTFT grows with the queue (docs/knowledge-base.md R15 queue_saturation: arrival > service rate). The 0.5 share and 1 s floor are logsleuth's thresholds.
-- requires: metrics
WITH last AS (
  SELECT source_id, max(snapshot) AS snapshot FROM metrics WHERE type = 'histogram' GROUP BY source_id
),
q AS (
  SELECT m.source_id, m.family, max(m.value) AS p99, min(m.line_no) AS line_no
  FROM metric_quantiles m JOIN last USING (source_id, snapshot)
  WHERE m."window" = 'cumulative' AND m.quantile = 0.99
    AND m.family IN ('vllm:time_to_first_token_seconds', 'sglang:time_to_first_token_seconds',
                     'vllm:request_queue_time_seconds', 'vllm:time_in_queue_requests', 'sglang:queue_time_seconds')
  GROUP BY m.source_id, m.family
),
per_source AS (
  SELECT source_id,
         max(p99) FILTER (WHERE family LIKE '%time_to_first_token%') AS ttft,
         max(p99) FILTER (WHERE family NOT LIKE '%time_to_first_token%') AS queue,
         min(line_no) FILTER (WHERE family NOT LIKE '%time_to_first_token%') AS line_no,
         min(line_no) FILTER (WHERE family LIKE '%time_to_first_token%') AS ttft_line
  FROM q GROUP BY source_id
)
SELECT rt.run_id, p.source_id, p.line_no, round(p.ttft, 2) AS ttft_p99_s, round(p.queue, 2) AS queue_p99_s,
       round(100 * p.queue / p.ttft, 0) AS share_pct, [p.ttft_line] AS evidence_lines
FROM per_source p JOIN run_telemetry rt USING (source_id)
WHERE p.ttft >= $min_ttft_s AND p.queue >= $min_share * p.ttft
