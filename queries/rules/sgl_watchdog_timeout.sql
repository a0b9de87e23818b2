-- id: sgl_watchdog_timeout
-- severity: critical
-- title: Run {run_id}: SGLang {who} watchdog fired after {timeout_s} s without a finished batch {phase}{last_note}
-- fix: If a first-time compile/JIT was running (torch.compile, DeepGEMM, FlashInfer), precompile or persist its cache (see torch_compile_cold_start / jit_kernel_compile_stall) and raise --watchdog-timeout only for that known-slow work; otherwise debug the hang: py-spy dump of the scheduler, the rank that stopped logging first, NCCL/Gloo errors right after.
-- source: docs/knowledge-base.md R31 (sgl-project/sglang#7553, #3752, #8232). "Watchdog timeout (self.watchdog_timeout=300)" / "Scheduler watchdog timeout (...)": a forward batch exceeded --watchdog-timeout (default 300 s) and the scheduler was killed.
-- requires: errors.kind=watchdog_timeout
-- Reads line text (issue 11: rules read events and the rollup, not lines): which watchdog fired and its timeout, from the error's own line (errors.message holds the record's final exception), joined on its line number.
WITH wd AS (
  SELECT e.run_id, min(e.line_no) AS line_no, arg_min(l.raw, e.line_no) AS raw, arg_min(e.ts, e.line_no) AS ts
  FROM errors e JOIN lines_other l ON l.source_id = e.source_id AND l.line_no = e.line_no
  WHERE e.kind = 'watchdog_timeout' AND e.run_id IS NOT NULL
  GROUP BY e.run_id
),
last_batch AS (
  SELECT w.run_id, max(x.line_no) AS line_no, max(x.ts) AS ts
  FROM wd w JOIN (SELECT run_id, line_no, ts FROM decode_stats UNION ALL
                  SELECT run_id, line_no, ts FROM prefill_stats) x
    ON x.run_id = w.run_id AND x.line_no < w.line_no
  GROUP BY w.run_id
)
SELECT w.run_id, w.line_no,
       coalesce(nullif(regexp_extract(w.raw, '(Scheduler|TokenizerManager|DetokenizerManager|DataParallelController) [Ww]atchdog', 1), ''), 'scheduler') AS who,
       try_cast(nullif(regexp_extract(w.raw, 'watchdog_timeout=(\d+(?:\.\d+)?)', 1), '') AS DOUBLE) AS timeout_s,
       CASE WHEN r.ready_line IS NOT NULL AND w.line_no > r.ready_line THEN 'while serving'
            ELSE 'during start-up (before the server was ready)' END AS phase,
       CASE WHEN lb.line_no IS NOT NULL
            THEN ' (last batch logged at line ' || lb.line_no
                 || coalesce(', ' || CAST(round(epoch(w.ts) - epoch(lb.ts)) AS BIGINT) || ' s before', '') || ')'
            ELSE '' END AS last_note,
       CASE WHEN lb.line_no IS NOT NULL THEN [lb.line_no] END AS evidence_lines
FROM wd w JOIN runs r USING (run_id) LEFT JOIN last_batch lb USING (run_id)
