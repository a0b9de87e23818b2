-- A database's sources with the host and date columns a dataset's sources carry, as a temporary
-- view shadowing the table while the fleet queries run (fleet/summary.py hosts_of_database):
-- the host its log names (temp table _fleet_hosts), else 'unknown'; the date of its first run.
CREATE OR REPLACE TEMP VIEW sources AS
SELECT s.*, coalesce(h.host, 'unknown') AS host,
       strftime((SELECT min(r.started_at) FROM {catalog}.main.runs r WHERE r.source_id = s.source_id),
                '%Y-%m-%d') AS date
FROM {catalog}.main.sources s LEFT JOIN temp.main._fleet_hosts h USING (source_id)
