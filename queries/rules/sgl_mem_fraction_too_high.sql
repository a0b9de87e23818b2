-- id: sgl_mem_fraction_too_high
-- severity: warning
-- title: Run {run_id}: {what}
-- fix: Lower --mem-fraction-static (e.g. 0.8 or 0.7) to leave activation / graph headroom; if the OOM is in prefill, lower --chunked-prefill-size to 4096 or 2048; if in decode, lower --max-running-requests. A forward OOM on a server that started fine can also mean another process grew on the GPU — check nvidia-smi.
-- params: min_headroom_gb=3
-- source: docs/knowledge-base.md R09 — SGLang hyperparameter tuning docs (mem-fraction-static too high leaves no room for activations and CUDA graph buffers), sglang PR #23181. Warning when the start-up summary reports available_gpu_mem < 3 GB; critical when a CUDA out-of-memory error follows after the server was ready.
-- engine: sglang
-- advice: mem_fraction_static=lower
WITH avail AS (
  SELECT run_id, min(line_no) AS line_no,
         min(TRY_CAST(json_extract_string(attrs, '$.available_gpu_mem_gb') AS DOUBLE)) AS avail_gb
  FROM events_other WHERE kind = 'limits' GROUP BY run_id
),
oom0 AS (
  SELECT e.run_id, e.line_no, e.last_line, e.traceback, e.message,
         coalesce(e.message, '') || ' ' || coalesce(e.traceback, '') AS text
  FROM errors e JOIN runs r USING (run_id)
  WHERE r.engine = 'sglang' AND r.ready_line IS NOT NULL AND e.line_no > r.ready_line
    AND (e.message ILIKE '%CUDA out of memory%' OR e.exc_type ILIKE '%OutOfMemory%' OR e.traceback ILIKE '%CUDA out of memory%')
),
oom AS (  -- the OOM line itself (the record starts at "Scheduler hit an exception"): the record's
          -- traceback holds one line of text per physical line (no line text scanned)
  SELECT o.run_id,
         min(coalesce(o.line_no - 1 + list_position(list_transform(
                        string_split(coalesce(o.traceback, o.message, ''), chr(10)),
                        lambda x: x ILIKE '%CUDA out of memory%'), true), o.line_no)) AS line_no,
         count(*) AS n_oom,
         any_value(coalesce(nullif(regexp_extract(o.text, '(Tried to allocate [\d.]+ [KMG]i?B)', 1), ''), 'CUDA out of memory')) AS detail
  FROM oom0 o GROUP BY o.run_id
)
SELECT coalesce(o.run_id, a.run_id) AS run_id,
       coalesce(o.line_no, a.line_no) AS line_no,
       CASE WHEN o.run_id IS NOT NULL THEN
              'CUDA out of memory while serving (' || o.detail || ')'
              || CASE WHEN a.avail_gb IS NOT NULL THEN ' — only ' || a.avail_gb || ' GB was left outside the static pool at start-up'
                      ELSE '' END
            ELSE 'only ' || a.avail_gb || ' GB of GPU memory left outside the static pool at start-up (available_gpu_mem) — no headroom for activations; expect OOM under long prompts or big batches'
       END AS what,
       CASE WHEN o.run_id IS NOT NULL THEN 'critical' ELSE 'warning' END AS severity,
       CASE WHEN o.run_id IS NOT NULL AND a.line_no IS NOT NULL THEN [a.line_no] END AS evidence_lines
FROM avail a FULL OUTER JOIN oom o USING (run_id)
WHERE o.run_id IS NOT NULL OR a.avail_gb < $min_headroom_gb
