-- input_paths: the files a command's output must never replace: the database files the
-- connection has open and the path of every ingested source (the dataset root, if any, is a
-- variable set when the dataset opened).
SELECT path FROM duckdb_databases() WHERE path IS NOT NULL AND path <> ''
UNION
SELECT path FROM sources WHERE path IS NOT NULL AND path NOT IN ('', '-')
UNION
SELECT getvariable('logsleuth_dataset_root') AS path WHERE getvariable('logsleuth_dataset_root') IS NOT NULL
