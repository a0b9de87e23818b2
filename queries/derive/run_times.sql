-- First and last timestamp of each run of the frame derive_runs (run_id, first_line): of its
-- typed records from the line where the server process starts.
SELECT d.run_id, min(u.ts) AS started_at, max(u.ts) AS ended_at
FROM (SELECT run_id, ts, line_no FROM events WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM decode_stats WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM prefill_stats WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM errors WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM spec_stats WHERE {runs}) u
JOIN derive_runs d ON u.run_id = d.run_id AND u.line_no >= d.first_line
GROUP BY d.run_id
