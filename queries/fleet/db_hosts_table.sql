-- The host of each source of a database, while the fleet queries run (fleet/summary.py
-- hosts_of_database); filled with the hosts the probes of parsers/hosts.toml found.
CREATE OR REPLACE TEMP TABLE _fleet_hosts (source_id INTEGER, host VARCHAR)
