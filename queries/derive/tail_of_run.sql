-- The first kill or termination notice ({kill}) among the last 30 lines of one run ($1).
SELECT min(line_no) FROM (SELECT line_no, raw FROM lines WHERE run_id = $1 ORDER BY line_no DESC LIMIT 30)
WHERE {kill}
