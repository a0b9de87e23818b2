-- fleet: every server run (no benchmark client) with its host and what decides its peers, its
-- load and what is unknown about it: the runs row (fleet/peers.py reads the canonical settings
-- of queries/reports/config_equivalents.toml from it and the config table, as compare does),
-- the peak running requests its stats lines show and where, and how its date was known.
WITH peak AS (
  SELECT run_id, arg_max(line_no, (running_reqs, -line_no)) AS peak_line
  FROM decode_primary WHERE primary_rank AND running_reqs IS NOT NULL GROUP BY run_id
)
SELECT s.host, s.date, s.name AS source_name, s.year_basis, r.*,
       coalesce(r.model_key, r.model) AS model_id,
       coalesce(r.engine_version, r.format_era) AS version,
       coalesce(ro.busy_decode_lines, 0) AS busy_lines, coalesce(ro.decode_samples, 0) AS stats_lines,
       ro.max_running_reqs AS peak_running, peak.peak_line
FROM runs r JOIN sources s USING (source_id)
LEFT JOIN run_rollup ro USING (run_id)
LEFT JOIN peak USING (run_id)
WHERE r.engine IS DISTINCT FROM 'bench' AND s.kind IS DISTINCT FROM 'bench'
ORDER BY s.host, r.run_id
