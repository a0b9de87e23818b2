-- The lines no pattern claimed, of the sources {sources}, in file order: template mining's input.
SELECT source_id, line_no, raw FROM lines_other WHERE {sources} AND kind = 'unparsed' ORDER BY source_id, line_no
