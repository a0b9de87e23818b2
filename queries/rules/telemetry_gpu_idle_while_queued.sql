-- id: telemetry_gpu_idle_while_queued
-- severity: warning
-- title: Run {run_id}: GPU {gpu_index} busy only {util_pct} % on average in {n_samples} samples while {max_waiting} request(s) waited
-- advice: max_running_requests=raise, max_num_seqs=raise, schedule_conservativeness=lower
-- fix: The GPU waits for the host, not the other way round: the scheduler or an admission cap holds requests back. Look at running_pinned_at_cap / queue_saturation; check the CPU (tokenizer, detokenizer, Python GIL) and the host-to-device path.
-- fix.sglang: Raise --max-running-requests, lower --schedule-conservativeness (see sgl_scheduler_too_conservative).
-- fix.vllm: Raise --max-num-seqs or --max-num-batched-tokens.
-- params: max_util=0.3, min_waiting=1, min_samples=3
-- source: utilization.gpu is the share of the sample period in which a kernel ran (nvidia-smi --help-query-gpu; DCGM_FI_DEV_GPU_UTIL, rocm-smi GPU use, amd-smi gfx_activity alike). Requests waiting (Prometheus vllm:num_requests_waiting / sglang:num_queue_reqs, or the log's #queue-req / Waiting) while kernels run under 30 % of the time means the bottleneck is scheduling or admission, not compute (docs/knowledge-base.md R07, R15, R16). 30 % and 3 samples are logsleuth's thresholds: well below the 90-100 % a saturated decode shows.
-- requires: gpu_samples
WITH waiting AS (
  -- queue depth over time, from the scrape (summed over engines) and from the log's stats lines
  SELECT rt.run_id, m.ts, sum(m.value) AS waiting
  FROM metrics m JOIN run_telemetry rt USING (source_id)
  WHERE m.name IN ('vllm:num_requests_waiting', 'sglang:num_queue_reqs') AND m.ts IS NOT NULL
  GROUP BY ALL
  UNION ALL
  SELECT run_id, ts, queued_reqs FROM decode_primary WHERE ts IS NOT NULL AND queued_reqs IS NOT NULL
),
g AS (
  SELECT rt.run_id, s.source_id, s.line_no, s.ts, s.gpu_index, s.gpu_util
  FROM gpu_samples s JOIN run_telemetry rt USING (source_id)
  WHERE s.ts IS NOT NULL AND s.gpu_util IS NOT NULL
),
paired AS (
  -- the last queue observation at or before each GPU sample, if at most 30 s old
  SELECT g.*, w.waiting
  FROM g ASOF JOIN waiting w ON g.run_id = w.run_id AND g.ts >= w.ts
  WHERE epoch(g.ts) - epoch(w.ts) <= 30
)
SELECT run_id, source_id, gpu_index, min(line_no) AS line_no, count(*) AS n_samples,
       round(100 * avg(gpu_util), 1) AS util_pct, CAST(max(waiting) AS BIGINT) AS max_waiting,
       list(line_no ORDER BY line_no)[2:4] AS evidence_lines
FROM paired
WHERE waiting >= $min_waiting AND gpu_util <= $max_util
GROUP BY run_id, source_id, gpu_index
HAVING count(*) >= $min_samples
