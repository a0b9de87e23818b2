-- id: engine_crashed
-- severity: critical
-- title: Run {run_id} crashed after {serving_for} of serving: {cause}{unknown}
-- fix: Start from the quoted record: it is the first failure in time across ranks and nodes (later errors on other ranks are consequences). When no record names a cause (the engine core or a worker died without a traceback) the process was killed from outside or crashed in native code: check dmesg / journalctl for Xid errors and the kernel OOM killer, the container's memory limit and restart history, and re-run with CUDA_LAUNCH_BLOCKING=1 to catch the failing kernel.
-- fix.sglang: Re-run with --log-level debug.
-- fix.vllm: Re-run with VLLM_LOGGING_LEVEL=DEBUG.
-- source: issue 12 "Crash causes" and docs/knowledge-base.md §2 failure causes. Every fatal end of a serving run gets a finding naming what is known and what is not. The cause is runs.end_line/end_reason, chosen once by derive/end_state.py (first failure in time across ranks and nodes; wrappers such as EngineDeadError, "EngineCore ... died unexpectedly", "Received sigquit" and consequences such as EOFError on a peer only when nothing names a cause), the same cause the ingest summary shows. Causes with their own rule (illegal_memory_access, sgl_mem_fraction_too_high for CUDA OOM, nccl_watchdog_timeout, sgl_watchdog_timeout) are left to it.
WITH crashed AS (SELECT * FROM runs WHERE end_state = 'crashed'),
ready AS (  -- the time of the ready line of each crashed run (every event on one line has the same)
  SELECT v.run_id, min(v.ts) AS ready_ts
  FROM events_other v JOIN crashed r ON v.run_id = r.run_id AND v.line_no = r.ready_line
  WHERE v.ts IS NOT NULL GROUP BY v.run_id
),
c AS (
  SELECT r.run_id, r.end_line, r.end_reason, r.ready_line, r.started_at,
         e.kind, e.exc_type, e.message, e.ts, rd.ready_ts,
         coalesce(e.kind, '') IN ('child_failed', 'scheduler_dead', 'worker_died', 'engine_init_failed', 'engine_dead',
                                  'engine_core_fatal_error', 'output_handler_failed', 'fatal_signal')
           AND e.exc_type IS NULL AS wrapper_only
  FROM crashed r LEFT JOIN errors e ON e.run_id = r.run_id AND e.line_no = r.end_line
  LEFT JOIN ready rd ON rd.run_id = r.run_id
),
covered AS (
  SELECT run_id FROM c
  WHERE kind IN ('illegal_memory_access', 'cuda_oom', 'nccl_watchdog_timeout', 'watchdog_timeout')
     OR message ILIKE '%illegal memory access%' OR message ILIKE '%out of memory%'
)
SELECT run_id, end_line AS line_no, left(coalesce(end_reason, 'unknown cause'), 300) AS cause,
       CASE WHEN ts IS NULL OR coalesce(ready_ts, started_at) IS NULL THEN 'an unknown time'
            WHEN epoch(ts) - epoch(coalesce(ready_ts, started_at)) >= 3600
              THEN round((epoch(ts) - epoch(coalesce(ready_ts, started_at))) / 3600, 1) || ' h'
            WHEN epoch(ts) - epoch(coalesce(ready_ts, started_at)) >= 60
              THEN round((epoch(ts) - epoch(coalesce(ready_ts, started_at))) / 60, 1) || ' min'
            ELSE CAST(round(epoch(ts) - epoch(coalesce(ready_ts, started_at))) AS BIGINT) || ' s' END AS serving_for,
       CASE WHEN wrapper_only OR end_reason LIKE '%no earlier record names a root cause%'
            THEN ' — no traceback names the root cause (what is known: the process died; what is not: why — look outside the log: dmesg Xid / OOM killer, container limits)'
            ELSE '' END AS unknown,
       CASE WHEN ready_line IS NOT NULL THEN [ready_line] END AS evidence_lines
FROM c WHERE run_id NOT IN (SELECT run_id FROM covered)
