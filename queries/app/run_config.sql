-- run_config: the settings of one run that carry a value (unset, False and empty
-- values left out), in the order the log printed them. Unless $all: without the values
-- equal to the engine's defaults ($defaults: 'key=value' texts from parsers/config_defaults.toml),
-- and without vLLM's full engine config dump when the run has vLLM's own non-default list.
-- A setting printed again with the same value (an env var on every rank) is listed once.
SELECT key, value, origin
FROM config
WHERE run_id = $run_id AND value IS NOT NULL AND value NOT IN ('None', 'False', '[]', '{}', '')
  AND ($all OR (
        NOT list_contains($defaults, key || '=' || value)
        AND (origin <> 'engine_config'
             OR NOT EXISTS (SELECT 1 FROM config c WHERE c.run_id = $run_id AND c.origin = 'cli_args'))))
QUALIFY row_number() OVER (PARTITION BY key, value, origin ORDER BY line_no) = 1
ORDER BY line_no, key
LIMIT $limit
