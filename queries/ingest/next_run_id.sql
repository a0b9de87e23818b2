-- next_run_id: the first run id no stored run holds (a new source's runs start here; a batch
-- that derives its sources later also counts the ids their lines took: ingest/deferred.py)
SELECT coalesce(max(run_id), 0) + 1 FROM runs
