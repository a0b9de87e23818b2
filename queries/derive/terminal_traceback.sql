-- A run that never became ready and whose last word is an exception (a kernel AssertionError
-- during warm-up, a RuntimeError in a worker) died of it even when no pattern marked the record
-- fatal: nothing progressed after it (no stats line, no milestone event after its last line).
-- $1 run_id
WITH t AS (
  SELECT line_no, last_line, kind, exc_type, message FROM errors
  WHERE run_id = $1 AND NOT fatal
    AND coalesce(kind, '') NOT IN ('request_error', 'request_too_long', 'asgi_exception', 'exception_ignored',
                                   'health_check_failed', 'memory_leak')
    AND (exc_type IS NOT NULL OR regexp_matches(message, '^[A-Za-z_][\w.]*(?:Error|Exception)\b'))
  ORDER BY line_no DESC LIMIT 1
)
SELECT t.line_no, t.kind, t.exc_type, t.message FROM t
WHERE NOT EXISTS (SELECT 1 FROM events v WHERE v.run_id = $1 AND v.line_no > coalesce(t.last_line, t.line_no)
                  AND v.kind NOT IN ('shutdown', 'http_access'))
  AND NOT EXISTS (SELECT 1 FROM decode_stats d WHERE d.run_id = $1 AND d.line_no > coalesce(t.last_line, t.line_no))
  AND NOT EXISTS (SELECT 1 FROM prefill_stats p WHERE p.run_id = $1 AND p.line_no > coalesce(t.last_line, t.line_no))
