-- watch_source_by_path: the sources stored from one path, newest first (the watcher
-- replaces its own earlier copy of a file that grew when the ingest cannot append).
SELECT source_id, sha256, bytes, n_lines
FROM sources
WHERE path = $path
ORDER BY source_id DESC
