-- Whether each run of {runs} served over HTTP or ran offline (vLLM's LLM(...) and its offline
-- benchmarks, SGLang's Engine and offline benchmarks), and where an offline run shows it
-- finished. Server evidence: the API server's start, uvicorn's startup line, the ready line, HTTP
-- access lines. Offline evidence: the kinds offline_result (a benchmark's result) and
-- offline_progress (LLM.generate's "Processed prompts" bar), grammar data in parsers/*.toml.
-- One row per run with any of them: (run_id, server lines, offline lines, last line that shows
-- the offline job done: a result, or the bar at 100 %).
WITH ev AS (
  SELECT run_id, line_no, kind, value FROM events_other
  WHERE {runs} AND kind IN ('api_server_start', 'app_startup_complete', 'server_ready', 'offline_result',
                            'offline_progress')
  UNION ALL
  SELECT run_id, line_no, kind, value FROM (
    SELECT run_id, line_no, kind, value FROM events_bulk WHERE {runs} AND kind = 'http_access'
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no) = 1)
)
SELECT run_id,
       count(*) FILTER (WHERE kind NOT IN ('offline_result', 'offline_progress')) AS server_lines,
       count(*) FILTER (WHERE kind IN ('offline_result', 'offline_progress')) AS offline_lines,
       max(line_no) FILTER (WHERE kind = 'offline_result' OR (kind = 'offline_progress' AND value >= 100)) AS done_line
FROM ev GROUP BY run_id
