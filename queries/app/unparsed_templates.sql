-- unparsed_templates: the most frequent templates of lines no grammar pattern claimed,
-- across all sources, with one example line: its text and where it is (file:line).
WITH top AS (
  SELECT t.template, sum(t.n_lines) AS n_lines, count(DISTINCT t.source_id) AS sources,
         arg_min(t.source_id, s.name || ':' || lpad(CAST(t.example_line_no AS VARCHAR), 12, '0')) AS source_id,
         arg_min(t.example_line_no, s.name || ':' || lpad(CAST(t.example_line_no AS VARCHAR), 12, '0')) AS line_no
  FROM templates t JOIN sources s USING (source_id)
  GROUP BY t.template
  ORDER BY n_lines DESC, t.template
  LIMIT $limit
)
SELECT top.template, top.n_lines, top.sources,
       (SELECT l.raw FROM lines_other l WHERE l.source_id = top.source_id AND l.line_no = top.line_no) AS example,
       s.name || ':' || top.line_no AS at
FROM top JOIN sources s USING (source_id)
ORDER BY top.n_lines DESC, top.template
