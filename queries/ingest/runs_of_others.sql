-- runs_of_others: the first run id after those of every other source (an append's new runs
-- take ids after the runs of sources ingested since the first ingest of its file)
SELECT coalesce(max(run_id), 0) + 1 FROM runs WHERE source_id <> ?
