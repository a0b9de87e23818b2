-- source_by_sha: the source that holds content of this sha256 already (re-ingest is a no-op)
SELECT source_id FROM sources WHERE sha256 = ?
