-- telemetry_figures: per run, GPU figures while serving: mean utilisation (0..1) and mean
-- power per GPU (W) over the GPU samples taken while requests ran (the last running-requests
-- observation at most 30 s before the sample is > 0: Prometheus running gauge or the log's
-- stats lines); samples, GPUs and tools behind them. $run_ids: the runs.
WITH g AS (
  SELECT rt.run_id, s.ts, s.gpu_index, s.gpu_util, s.power_w, s.tool
  FROM gpu_samples s JOIN run_telemetry rt USING (source_id)
  WHERE list_contains($run_ids, rt.run_id) AND s.ts IS NOT NULL
),
running AS (
  SELECT rt.run_id, m.ts, sum(m.value) AS running
  FROM metrics m JOIN run_telemetry rt USING (source_id)
  WHERE m.name IN ('vllm:num_requests_running', 'sglang:num_running_reqs') AND m.ts IS NOT NULL
  GROUP BY ALL
  UNION ALL
  SELECT run_id, ts, running_reqs FROM decode_primary WHERE ts IS NOT NULL AND running_reqs IS NOT NULL
),
serving AS (
  SELECT g.* FROM g ASOF JOIN running r ON g.run_id = r.run_id AND g.ts >= r.ts
  WHERE r.running > 0 AND epoch(g.ts) - epoch(r.ts) <= 30
)
SELECT run_id, avg(gpu_util) AS gpu_util_serving, avg(power_w) AS power_w_serving,
       count(*) AS gpu_samples_serving, count(DISTINCT gpu_index) AS gpus, string_agg(DISTINCT tool, ', ') AS gpu_tools
FROM serving GROUP BY run_id ORDER BY run_id
