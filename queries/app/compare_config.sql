-- compare_config: every configuration value of the runs (settings, engine config, environment),
-- in log order. $run_ids: the runs.
SELECT run_id, origin, key, value
FROM config
WHERE list_contains($run_ids, run_id) AND key IS NOT NULL
ORDER BY run_id, line_no, key
