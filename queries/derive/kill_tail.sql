-- A kill or termination notice (grammar [markers] kill: the LIKE patterns {kill}) among the
-- last 30 lines of each run of the frame derive_runs (run_id, last_line): the first such line.
-- The lines read are those numbered within 30 of the run's last line; ``n`` says how many of
-- them the run holds, so the caller knows when they are not its last 30 (a run whose lines
-- are not contiguous) and reads those runs as tail_of_run.sql does.
SELECT d.run_id, count(*) AS n, min(l.line_no) FILTER (WHERE {kill}) AS killed
FROM lines l JOIN derive_runs d ON l.run_id = d.run_id AND l.line_no > d.last_line - 30
WHERE {runs@l} AND ({near})  -- {near}: the same bounds as literals (few runs), so row groups are skipped
GROUP BY d.run_id
