-- The columns of a scan of part files ({scan}: read_parquet([...], union_by_name = true)).
DESCRIBE SELECT * FROM {scan}
