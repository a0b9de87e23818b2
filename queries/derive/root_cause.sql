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
-- One row per run of the frame derive_runs (run_id, shutdown_line: the first planned-shutdown
-- line, NULL: none) that has a fatal record; {runs} filters the same runs.
WITH e0 AS (
  SELECT errors.run_id, line_no, last_line, ts, kind, exc_type, fatal, message,
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
  FROM errors JOIN derive_runs w USING (run_id)
  WHERE {runs} AND (w.shutdown_line IS NULL OR line_no < w.shutdown_line)
    AND coalesce(kind, '') NOT IN ('request_error', 'request_too_long', 'asgi_exception', 'exception_ignored',
                                   'health_check_failed', 'memory_leak')
),
unstamped AS (  -- the last record printed without a time, per run
  SELECT run_id, max(line_no) AS upto FROM e0 WHERE ts IS NULL GROUP BY run_id
),
stamped AS (  -- the run's stamped lines up to its last unstamped record
  SELECT u.run_id, u.line_no, u.ts FROM (
    SELECT run_id, line_no, ts FROM errors WHERE {runs}
    UNION ALL SELECT run_id, line_no, ts FROM events WHERE {runs}
    UNION ALL SELECT run_id, line_no, ts FROM decode_stats WHERE {runs}
    UNION ALL SELECT run_id, line_no, ts FROM prefill_stats WHERE {runs}) u
  JOIN unstamped x USING (run_id)
  WHERE u.ts IS NOT NULL AND u.line_no <= x.upto
),
e AS (
  SELECT e0.* REPLACE (coalesce(e0.ts, s.ts) AS ts)
  FROM e0 ASOF LEFT JOIN stamped s ON e0.run_id = s.run_id AND e0.line_no >= s.line_no
),
first_fatal AS (
  SELECT run_id, min(ts) AS ts, min(line_no) AS line_no, count(*) AS n_fatal FROM e WHERE fatal GROUP BY run_id
),
cand AS (
  SELECT e.*, f.n_fatal FROM e JOIN first_fatal f USING (run_id)
  WHERE e.fatal OR (
      (e.exc_type IS NOT NULL OR regexp_matches(e.message, '^[A-Za-z_][\w.]*(?:Error|Exception)\b'))
      AND CASE WHEN e.ts IS NOT NULL AND f.ts IS NOT NULL
               THEN e.ts BETWEEN f.ts - INTERVAL 120 SECOND AND f.ts + INTERVAL 60 SECOND
               ELSE e.line_no BETWEEN f.line_no - 400 AND f.line_no + 400 END)
)
SELECT run_id, line_no, kind, exc_type, message, wrapper OR consequence AS secondary, n_fatal
FROM cand
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY (wrapper OR consequence), wrapper, ts NULLS LAST, line_no) = 1
