-- The scan of one table's part files ({files}: the quoted URIs, comma-separated): a fragment
-- that scan_columns.sql and part_view.sql take as their {scan}. Files written by different
-- logsleuth versions are read by column name.
read_parquet([{files}], union_by_name = true)
