-- fleet: evidence lines with their file name and text. $source_ids, $line_nos: in pairs.
WITH want AS (SELECT unnest($source_ids) AS source_id, unnest($line_nos) AS line_no)
SELECT w.source_id, w.line_no, s.name, l.raw
FROM want w JOIN sources s USING (source_id)
LEFT JOIN lines l ON l.source_id = w.source_id AND l.line_no = w.line_no
