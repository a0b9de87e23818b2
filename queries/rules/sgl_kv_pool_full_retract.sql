-- id: sgl_kv_pool_full_retract
-- severity: warning
-- title: Run {run_id}: KV cache pool full — {n_rounds} retraction round(s) ({n_reqs} requests retracted) over {span_s} s, up to {max_per_min} in one minute{pressure}
-- advice: schedule_conservativeness=raise, max_running_requests=lower
-- fix: Retracted requests are re-prefilled later. Make admission more conservative (--schedule-conservativeness 1.3), lower --max-running-requests, raise --mem-fraction-static if available_gpu_mem allows, use an FP8 KV cache or more TP.
-- params: max_per_minute=1, critical_rounds=10, critical_span_s=30
-- source: docs/knowledge-base.md R06 — SGLang hyperparameter tuning docs (an occasional retraction, about once a minute, is acceptable), sglang issue #26248 (decode throughput ~429 -> 20-38 tok/s after retraction, never recovered), issue #4184. Counts one round per retraction on the lowest TP rank of each DP rank (every rank prints it). Silent when at most one round in any minute; critical when sustained (>=10 rounds spread over >=30 s).
-- engine: sglang
WITH ev AS (
  SELECT e.run_id, e.line_no, e.ts, e.value AS n_reqs, coalesce(e.dp_rank, -1) AS dp, coalesce(e.tp_rank, -1) AS tp
  FROM events_other e JOIN runs r USING (run_id)
  WHERE e.kind = 'kv_retract' AND r.engine = 'sglang'
),
rounds AS (  -- one round = the lowest TP rank of each DP group
  SELECT * FROM ev
  QUALIFY tp = min(tp) OVER (PARTITION BY run_id, dp)
),
per_min AS (  -- the rounds in the minute from each one on (ts to ts + 60 s, exclusive; a window
  -- frame, not a count per round over every round of the run: 18k retraction lines at 2 GB)
  SELECT run_id, line_no,
         CASE WHEN ts IS NULL THEN 0 ELSE count(*) OVER (PARTITION BY run_id ORDER BY ts
           RANGE BETWEEN CURRENT ROW AND INTERVAL 59999999 MICROSECOND FOLLOWING) END AS in_minute
  FROM rounds
),
agg AS (
  SELECT r.run_id, count(*) AS n_rounds, CAST(sum(r.n_reqs) AS BIGINT) AS n_reqs,
         min(r.line_no) AS line_no,
         coalesce(CAST(epoch(max(r.ts)) - epoch(min(r.ts)) AS INTEGER), 0) AS span_s,
         coalesce(max(p.in_minute), count(*)) AS max_per_min,
         list(r.line_no ORDER BY r.line_no)[2:5] AS evidence_lines
  FROM rounds r LEFT JOIN per_min p USING (run_id, line_no)
  GROUP BY r.run_id
),
usage AS (
  SELECT run_id, max(kv_usage) AS peak_usage FROM decode_primary WHERE primary_rank GROUP BY run_id
)
SELECT a.run_id, a.line_no, a.n_rounds, a.n_reqs, a.span_s, a.max_per_min,
       CASE WHEN u.peak_usage IS NOT NULL THEN ', token usage peaked at ' || round(u.peak_usage, 2) ELSE '' END AS pressure,
       CASE WHEN a.n_rounds >= $critical_rounds AND a.span_s >= $critical_span_s THEN 'critical' ELSE 'warning' END AS severity,
       a.evidence_lines
FROM agg a LEFT JOIN usage u USING (run_id)
WHERE a.max_per_min > $max_per_minute
