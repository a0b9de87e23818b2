-- A table of the dataset as a view over the part files the manifest lists, in place of the
-- empty table of the schema ({table}: quoted name; {columns}: the select list; {scan}: the scan).
DROP TABLE IF EXISTS {table};
CREATE VIEW {table} AS SELECT {columns} FROM {scan};
