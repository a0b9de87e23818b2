-- id: sgl_mem_fraction_too_low
-- severity: warning
-- title: Run {run_id}: {what}
-- fix: Raise --mem-fraction-static in 0.01-0.02 steps until available_gpu_mem at startup is about 5-8 GB (SGLang's guidance); the extra memory becomes KV cache. If the start-up failed with "Not enough memory", the static pool could not even hold the weights: raise it or use more GPUs / a quantized checkpoint.
-- params: idle_gb=10, kv_full=0.9, min_pressure_lines=3
-- source: docs/knowledge-base.md R08 — SGLang hyperparameter tuning docs (available_gpu_mem of 5-8 GB is right); sglang source (`Not enough memory. Please try to increase --mem-fraction-static` check, the critical start-up form). Warning needs available_gpu_mem > 10 GB together with KV pressure: >=2 retraction rounds (one is acceptable, R06) or >=3 busy decode lines at token usage >= 0.9 with a queue.
-- engine: sglang
-- advice: mem_fraction_static=raise
-- One answer per run: the headroom is the smallest available_gpu_mem of any rank (the one that runs out
-- first, as in sgl_mem_fraction_too_high), and a run that ran out of memory while serving gets the
-- opposite advice from sgl_mem_fraction_too_high, never this one: raising the pool would repeat the OOM.
WITH fail AS (
  SELECT e.run_id, e.line_no,
         'start-up failed: Not enough memory for the static pool (' ||
         coalesce(nullif(regexp_extract(e.message, '(mem_fraction_static=[\d.]+)', 1), ''), 'mem_fraction_static too low') ||
         ') — raise --mem-fraction-static' AS what,
         'critical' AS severity
  FROM errors e WHERE e.kind = 'not_enough_memory' OR e.message LIKE '%Not enough memory. Please try to increase --mem-fraction-static%'
  QUALIFY row_number() OVER (PARTITION BY e.run_id ORDER BY e.line_no) = 1
),
avail AS (
  SELECT run_id, min(line_no) AS line_no,
         min(TRY_CAST(json_extract_string(attrs, '$.available_gpu_mem_gb') AS DOUBLE)) AS avail_gb,
         max(value) AS kv_tokens
  FROM events_other WHERE kind = 'limits' GROUP BY run_id
),
retract AS (  -- one round per retraction on the lowest TP rank of each DP group (every rank prints it)
  SELECT run_id, count(*) AS n_retract FROM (
    SELECT run_id, coalesce(tp_rank, -1) AS tp, coalesce(dp_rank, -1) AS dp FROM events_other WHERE kind = 'kv_retract'
    QUALIFY tp = min(tp) OVER (PARTITION BY run_id, dp))
  GROUP BY run_id
),
pressure AS (
  SELECT r.run_id, coalesce(x.n_retract, 0) AS n_retract,
         (SELECT count(*) FROM decode_primary d WHERE d.run_id = r.run_id AND d.primary_rank
            AND d.kv_usage >= $kv_full AND d.queued_reqs > 0) AS n_full
  FROM runs r LEFT JOIN retract x USING (run_id) WHERE r.engine = 'sglang'
),
serving_oom AS (  -- the condition of sgl_mem_fraction_too_high's critical form
  SELECT DISTINCT e.run_id FROM errors e JOIN runs r USING (run_id)
  WHERE r.engine = 'sglang' AND r.ready_line IS NOT NULL AND e.line_no > r.ready_line
    AND (e.message ILIKE '%CUDA out of memory%' OR e.exc_type ILIKE '%OutOfMemory%' OR e.traceback ILIKE '%CUDA out of memory%')
),
idle AS (
  SELECT a.run_id, a.line_no,
         'available_gpu_mem=' || a.avail_gb || ' GB left idle at start-up while the KV pool (' || CAST(a.kv_tokens AS BIGINT)
         || ' tokens) ran out: ' ||
         CASE WHEN p.n_retract > 0 THEN p.n_retract || ' retraction round(s)' ELSE '' END ||
         CASE WHEN p.n_retract > 0 AND p.n_full >= $min_pressure_lines THEN ', ' ELSE '' END ||
         CASE WHEN p.n_full >= $min_pressure_lines THEN p.n_full || ' decode lines at token usage >= ' || $kv_full || ' with a queue' ELSE '' END
         AS what,
         'warning' AS severity
  FROM avail a JOIN pressure p USING (run_id)
  WHERE a.avail_gb > $idle_gb AND (p.n_retract >= 2 OR p.n_full >= $min_pressure_lines)
    AND a.run_id NOT IN (SELECT run_id FROM serving_oom)
)
SELECT run_id, line_no, what, severity FROM fail
UNION ALL
SELECT run_id, line_no, what, severity FROM idle WHERE run_id NOT IN (SELECT run_id FROM fail)
