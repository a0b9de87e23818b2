-- telemetry_overlay: the time series the report overlays per run, long format
-- (run_id, series, ts, value): gpu_util (mean over the run's GPUs, 0..1), sm_clock_mhz (mean),
-- power_w (sum over GPUs), decode_tok_s (the log's primary-rank generation throughput or the
-- rate of the Prometheus generation-token counter, whichever has more points for the run).
-- $run_ids: the runs. GPU samples and metrics come from the telemetry linked in run_telemetry.
WITH g AS (
  SELECT rt.run_id, s.ts, avg(s.gpu_util) AS gpu_util, avg(s.sm_clock_mhz) AS sm_clock_mhz, sum(s.power_w) AS power_w
  FROM gpu_samples s JOIN run_telemetry rt USING (source_id)
  WHERE list_contains($run_ids, rt.run_id) AND s.ts IS NOT NULL
  GROUP BY rt.run_id, s.ts
),
log_tok AS (
  SELECT run_id, ts, gen_tok_s AS value FROM decode_primary
  WHERE list_contains($run_ids, run_id) AND ts IS NOT NULL AND gen_tok_s IS NOT NULL
),
prom_tok AS (
  SELECT rt.run_id, m.ts, sum(m.rate_per_s) AS value
  FROM metric_rates m JOIN run_telemetry rt USING (source_id)
  WHERE list_contains($run_ids, rt.run_id) AND m.rate_per_s IS NOT NULL
    AND m.name IN ('vllm:generation_tokens_total', 'sglang:generation_tokens_total')
  GROUP BY rt.run_id, m.ts
),
n AS (
  SELECT run_id, count(*) FILTER (WHERE src = 'log') AS n_log, count(*) FILTER (WHERE src = 'prom') AS n_prom
  FROM (SELECT run_id, 'log' AS src FROM log_tok UNION ALL SELECT run_id, 'prom' FROM prom_tok) GROUP BY run_id
)
SELECT run_id, 'gpu_util' AS series, ts, gpu_util AS value FROM g WHERE gpu_util IS NOT NULL
UNION ALL SELECT run_id, 'sm_clock_mhz', ts, sm_clock_mhz FROM g WHERE sm_clock_mhz IS NOT NULL
UNION ALL SELECT run_id, 'power_w', ts, power_w FROM g WHERE power_w IS NOT NULL
UNION ALL SELECT run_id, 'decode_tok_s', ts, value FROM log_tok JOIN n USING (run_id) WHERE n_log >= n_prom
UNION ALL SELECT run_id, 'decode_tok_s', ts, value FROM prom_tok JOIN n USING (run_id) WHERE n_prom > n_log
ORDER BY run_id, series, ts
