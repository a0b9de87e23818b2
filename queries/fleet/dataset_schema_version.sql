-- A dataset's connection reads its part files with this schema version ($version).
INSERT OR REPLACE INTO meta VALUES ('schema_version', $version)
