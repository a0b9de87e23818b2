-- unparsed_templates: the most frequent templates of lines no grammar pattern claimed,
-- across all sources, with one example location (file:line).
SELECT t.template, sum(t.n_lines) AS n_lines, count(DISTINCT t.source_id) AS sources,
       min(s.name || ':' || t.example_line_no) AS example
FROM templates t JOIN sources s USING (source_id)
GROUP BY t.template
ORDER BY n_lines DESC, t.template
LIMIT $limit
