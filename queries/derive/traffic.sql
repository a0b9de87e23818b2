-- Evidence that a server handled requests: decode/stat lines with activity, prefill lines,
-- POST requests, for each run of the frame derive_traffic (run_id, after_line, before_line:
-- only the lines strictly between them; NULL: no bound). Runs without any are left out.
WITH w AS (
  SELECT run_id, coalesce(after_line, 0) AS a, coalesce(before_line, 9223372036854775807) AS b FROM derive_traffic
),
seen AS (
  SELECT run_id, line_no FROM decode_stats WHERE {runs}
    AND (coalesce(gen_tok_s, 0) > 0 OR coalesce(running_reqs, 0) > 0)
  UNION ALL SELECT run_id, line_no FROM prefill_stats WHERE {runs}
  UNION ALL SELECT run_id, line_no FROM events_bulk WHERE {runs} AND kind = 'http_access' AND text LIKE 'POST %'
)
SELECT w.run_id, count(*) AS n FROM seen s JOIN w ON s.run_id = w.run_id AND s.line_no > w.a AND s.line_no < w.b
GROUP BY w.run_id
