-- The part files of a local dataset the manifest lists: the only files the read-only sandbox of
-- `sql` and `diagnose` (db/sandbox.py) lets DuckDB read.
SET VARIABLE logsleuth_dataset_files = $files::VARCHAR[]
