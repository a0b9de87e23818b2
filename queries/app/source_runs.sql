-- source_runs: the runs of the given sources (files), e.g. of files an ingest skipped
-- because they were already in the database.
SELECT run_id
FROM runs
WHERE list_contains($source_ids, source_id)
ORDER BY run_id
