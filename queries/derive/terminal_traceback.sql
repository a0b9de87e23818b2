-- A run that never became ready and whose last word is an exception (a kernel AssertionError
-- during warm-up, a RuntimeError in a worker) died of it even when no pattern marked the record
-- fatal: nothing progressed after it (no stats line, no milestone event after its last line).
-- One row per run of {runs} that ended so
WITH t AS (
  SELECT run_id, line_no, last_line, kind, exc_type, message FROM errors
  WHERE {runs} AND NOT fatal
    AND coalesce(kind, '') NOT IN ('request_error', 'request_too_long', 'asgi_exception', 'exception_ignored',
                                   'health_check_failed', 'memory_leak')
    AND (exc_type IS NOT NULL OR regexp_matches(message, '^[A-Za-z_][\w.]*(?:Error|Exception)\b'))
    -- an interrupt (SIGTERM, Ctrl-C) stopped the process: it did not die of it (derive/end_state.py)
    AND regexp_replace(coalesce(exc_type, ''), '^.*\.', '') NOT IN ('KeyboardInterrupt', 'SystemExit', 'CancelledError')
  QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
),
progress AS (  -- the last line that shows the run went on
  SELECT run_id, max(line_no) AS line_no FROM (
    -- (a benchmark client's arguments and rows are not the server's progress)
    SELECT run_id, line_no FROM events_other WHERE {runs} AND kind NOT IN ('shutdown', 'bench_args', 'bench_failed_requests')
    UNION ALL SELECT run_id, line_no FROM events_bulk WHERE {runs} AND kind <> 'http_access'
    UNION ALL SELECT run_id, line_no FROM decode_stats WHERE {runs}
    UNION ALL SELECT run_id, line_no FROM prefill_stats WHERE {runs}) GROUP BY run_id
)
SELECT t.run_id, t.line_no, t.kind, t.exc_type, t.message FROM t LEFT JOIN progress p USING (run_id)
WHERE p.line_no IS NULL OR p.line_no <= coalesce(t.last_line, t.line_no)
