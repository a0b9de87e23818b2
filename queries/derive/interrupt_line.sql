-- The first line of each run of {runs} saying the process was told to stop (SIGTERM, Ctrl-C:
-- the grammar [markers] interrupt, LIKE patterns {interrupt}): a KeyboardInterrupt traceback,
-- "SIGTERM received". Tracebacks and notices are in lines_other (lines_bulk holds stats and
-- request lines only).
SELECT run_id, min(line_no) FROM lines_other WHERE {runs} AND ({interrupt}) GROUP BY run_id
