-- insert_source: the sources row of a new source, before its lines are stored (the counts
-- are filled in by run derivation: derive/runs.py)
INSERT INTO sources (source_id, path, name, sha256, bytes, kind, engine, label, ingested_at, compressed)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
