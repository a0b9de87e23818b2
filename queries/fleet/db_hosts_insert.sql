-- One source's host (fleet/summary.py hosts_of_database).
INSERT INTO temp.main._fleet_hosts VALUES (?, ?)
