-- schema_columns: every table and view of the main schema with its columns, in
-- declaration order (the descriptions come from queries/schema.toml).
SELECT t.table_name AS "table",
       CASE WHEN t.table_type = 'VIEW' THEN 'view' ELSE 'table' END AS type,
       c.column_name AS "column", c.data_type, c.ordinal_position AS position
FROM information_schema.tables t
JOIN information_schema.columns c
  ON c.table_schema = t.table_schema AND c.table_name = t.table_name
WHERE t.table_schema = 'main' AND t.table_catalog = current_database()
ORDER BY t.table_name, c.ordinal_position
