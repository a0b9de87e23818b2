-- The root cause of a run's fatal end: ONE error record, used by the runs row (end_line,
-- end_reason), the ingest summary, diagnose and the report alike.
-- Rule: the first failure in TIME (timestamp, then line) across ranks, processes and nodes,
-- preferring records that name a cause over the wrappers and consequences that follow it:
--   wrappers: "Received sigquit from a child process", "Engine core initialization failed",
--   EngineDeadError, "Worker ... died", "EngineCore encountered a fatal error", fatal-signal notices;
--   consequences on other ranks: EOFError / BrokenPipeError / ConnectionResetError (a peer went away).
-- A traceback that was not marked fatal by its pattern (a kernel AssertionError, an NVSHMEM
-- RuntimeError on one rank) is a candidate when it falls inside the failure cascade: from 120 s
-- before the first fatal record to 60 s after it (400 lines either side when lines carry no time).
-- Records after a planned shutdown are excluded by the caller ($2). Request-level errors never count.
-- Time of a record printed without one (a traceback without a stamped head, NVSHMEM's own stderr
-- lines "…/nvshmem/…/p2p.cpp:…: Peer GPU 8 is not accessible, exiting"): that of the nearest
-- stamped line before it, so an unstamped first failure is not ordered after a later stamped
-- failure on another rank (a DistBackendError "remote process exited").
-- $1 run_id, $2 first planned-shutdown line (NULL: none)
WITH e0 AS (
  SELECT line_no, last_line, ts, kind, exc_type, fatal, message,
    -- a wrapper line heading a traceback whose exception names the cause ("EngineCore failed to
    -- start." + ValueError: Free memory ...) is the cause, not a wrapper
    (coalesce(kind, '') IN ('child_failed', 'scheduler_dead', 'worker_died', 'engine_init_failed', 'engine_dead',
                            'engine_core_fatal_error', 'engine_core_failed_to_start', 'output_handler_failed',
                            'fatal_signal') AND exc_type IS NULL)
      OR message LIKE '%Engine core initialization failed%' OR message LIKE '%Engine process failed to start%'
      OR message LIKE '%EngineDeadError%' OR message LIKE 'Received sigquit%' AS wrapper,
    regexp_replace(coalesce(exc_type, regexp_extract(message, '^([A-Za-z_][\w.]*(?:Error|Exception))', 1), ''), '^.*\.', '')
      IN ('EOFError', 'BrokenPipeError', 'ConnectionResetError', 'ConnectionRefusedError', 'ConnectionAbortedError',
          'EngineDeadError', 'SystemExit', 'KeyboardInterrupt', 'CancelledError') AS consequence
  FROM errors
  WHERE run_id = $1 AND ($2 IS NULL OR line_no < $2)
    AND coalesce(kind, '') NOT IN ('request_error', 'request_too_long', 'asgi_exception', 'exception_ignored',
                                   'health_check_failed', 'memory_leak')
),
stamped AS (  -- the run's stamped lines up to its last unstamped record
  SELECT line_no, ts FROM (
    SELECT line_no, ts FROM errors WHERE run_id = $1
    UNION ALL SELECT line_no, ts FROM events WHERE run_id = $1
    UNION ALL SELECT line_no, ts FROM decode_stats WHERE run_id = $1
    UNION ALL SELECT line_no, ts FROM prefill_stats WHERE run_id = $1)
  WHERE ts IS NOT NULL AND line_no <= (SELECT max(line_no) FROM e0 WHERE ts IS NULL)
),
e AS (
  SELECT e0.* REPLACE (coalesce(e0.ts, s.ts) AS ts)
  FROM e0 ASOF LEFT JOIN stamped s ON e0.line_no >= s.line_no
),
first_fatal AS (
  SELECT min(ts) AS ts, min(line_no) AS line_no FROM e WHERE fatal
),
cand AS (
  SELECT e.* FROM e, first_fatal f
  WHERE f.line_no IS NOT NULL
    AND (e.fatal OR (
      (e.exc_type IS NOT NULL OR regexp_matches(e.message, '^[A-Za-z_][\w.]*(?:Error|Exception)\b'))
      AND CASE WHEN e.ts IS NOT NULL AND f.ts IS NOT NULL
               THEN e.ts BETWEEN f.ts - INTERVAL 120 SECOND AND f.ts + INTERVAL 60 SECOND
               ELSE e.line_no BETWEEN f.line_no - 400 AND f.line_no + 400 END))
)
SELECT line_no, kind, exc_type, message, wrapper OR consequence AS secondary,
       (SELECT count(*) FROM e WHERE fatal) AS n_fatal
FROM cand
ORDER BY (wrapper OR consequence), wrapper, ts NULLS LAST, line_no
LIMIT 1
