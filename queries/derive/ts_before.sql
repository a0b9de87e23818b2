-- The last timestamp of a typed record before each run's ready line (frame derive_ready:
-- run_id, ready_line), when none of the lines before it shows one.
SELECT d.run_id, max(u.ts)
FROM (SELECT run_id, ts, line_no FROM events WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM decode_stats WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM prefill_stats WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM errors WHERE {runs}
      UNION ALL SELECT run_id, ts, line_no FROM spec_stats WHERE {runs}) u
JOIN derive_ready d ON u.run_id = d.run_id AND u.line_no < d.ready_line
GROUP BY d.run_id
