-- The temporary sources view and hosts table of hosts_of_database, dropped when the block ends.
DROP VIEW IF EXISTS temp.main.sources;
DROP TABLE IF EXISTS temp.main._fleet_hosts;
