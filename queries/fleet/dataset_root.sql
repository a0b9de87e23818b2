-- The folder the sandbox of `sql` and `diagnose` (db/sandbox.py) keeps readable for a dataset.
SET VARIABLE logsleuth_dataset_root = $root
