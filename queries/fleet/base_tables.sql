-- Every base table of a single-source database with its columns in order: what a source
-- contributes to a dataset. Database bookkeeping is left out: meta and migrations are not per
-- source, and source_state (where an append resumes, with database-local ids) is replaced by
-- the manifest's own record of each file (sha256 and bytes read).
SELECT table_name, list(column_name ORDER BY ordinal_position) AS columns,
       list(data_type ORDER BY ordinal_position) AS types
FROM information_schema.columns
WHERE table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')
  AND table_name NOT IN ('meta', 'source_state') AND table_name NOT LIKE '%migration%'
GROUP BY table_name ORDER BY table_name
