-- run_config: the settings of one run that carry a value (unset, False and empty
-- values left out), in the order the log printed them.
SELECT key, value, origin
FROM config
WHERE run_id = $run_id AND value IS NOT NULL AND value NOT IN ('None', 'False', '[]', '{}', '')
ORDER BY line_no, key
LIMIT $limit
