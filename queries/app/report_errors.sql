-- report_errors: up to $limit errors per run, fatal ones first, then in log order, with the
-- source file name. $run_ids: the runs.
SELECT run_id, line_no, kind, fatal, message, source
FROM (
  SELECT e.run_id, e.line_no, e.kind, e.fatal, e.message, s.name AS source,
         row_number() OVER (PARTITION BY e.run_id ORDER BY e.fatal DESC, e.line_no) AS n
  FROM errors e JOIN sources s USING (source_id)
  WHERE list_contains($run_ids, e.run_id)
)
WHERE n <= $limit
ORDER BY run_id, fatal DESC, line_no
