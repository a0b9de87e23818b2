-- The lines of each (source, run) of the sources {sources}: how many, the first and the last.
-- A source's line count, its runs and their order in the file all come from here.
SELECT source_id, run_id, count(*) AS n, min(line_no) AS first_line, max(line_no) AS last_line
FROM lines WHERE {sources} GROUP BY ALL ORDER BY source_id, first_line
