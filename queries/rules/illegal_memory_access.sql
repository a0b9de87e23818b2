-- id: illegal_memory_access
-- severity: critical
-- title: Run {run_id}: CUDA illegal memory access {when} — the engine died ({n_errors} error record(s) name it)
-- fix: A kernel read or wrote out of bounds (kernel bug, a backend that does not support this GPU/dtype/shape, or state corrupted by an earlier error). Re-run with CUDA_LAUNCH_BLOCKING=1 to find the kernel, try another attention / MoE backend or disable CUDA graphs / custom all-reduce to isolate it, upgrade the engine, and report it upstream with the traceback.
-- source: docs/knowledge-base.md §2 failure causes; torch `RuntimeError: CUDA error: an illegal memory access was encountered` (common.toml cuda_illegal_access). Reported once per run at the first occurrence; later EngineDeadError / worker-died records are consequences.
WITH err AS (
  SELECT e.run_id, e.line_no FROM errors e
  WHERE e.kind = 'illegal_memory_access' OR e.message ILIKE '%illegal memory access was encountered%'
),
exact AS (  -- every line of the run's error records saying so: a record's traceback holds one line
            -- of text per physical line (line_no..last_line), so no line text is scanned
  SELECT run_id, list(DISTINCT line_no - 1 + i ORDER BY line_no - 1 + i) AS hits FROM (
    SELECT run_id, line_no, unnest(t) AS txt, generate_subscripts(t, 1) AS i
    FROM (SELECT run_id, line_no, string_split(coalesce(traceback, message, ''), chr(10)) AS t
          FROM errors WHERE run_id IN (SELECT run_id FROM err)))
  WHERE txt LIKE '%illegal memory access was encountered%'
  GROUP BY run_id
)
SELECT e.run_id, coalesce(x.hits[1], min(e.line_no)) AS line_no, count(*) AS n_errors,
       CASE WHEN any_value(r.ready_line) IS NOT NULL AND min(e.line_no) > any_value(r.ready_line)
            THEN 'while serving (the server was ready at line ' || any_value(r.ready_line) || ')'
            ELSE 'during start-up' END AS when,
       x.hits[2:4] AS evidence_lines
FROM err e JOIN runs r USING (run_id) LEFT JOIN exact x USING (run_id)
GROUP BY e.run_id, x.hits
