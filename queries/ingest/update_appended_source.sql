-- update_appended_source: a grown file's sources row after an append (its new name, hash and size)
UPDATE sources SET path = ?, name = ?, sha256 = ?, bytes = ?, ingested_at = ? WHERE source_id = ?
