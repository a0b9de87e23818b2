-- run_telemetry: which telemetry source belongs to which run, and why (`how`), one row per
-- (run, telemetry source). Evidence, strongest first:
--   'attached by hand (ingest --run)'            the user said so; no other run gets that source
--   'time overlap + model name [+ port] [+ host]'  spans overlap (2 min of slack: scrapes and samplers
--                                                 start before the server is ready) and the served
--                                                 model agrees (Prometheus model_name, bench model_id)
--   'time overlap + port [+ host]'               the scraped port is the run's --port
--   'time overlap [+ host]'                      nothing contradicts: no model, port or host differs
--   'same folder + model name' / 'same folder'  the file has no timestamps (dmon without -o T,
--                                                 sglang bench JSONL, NCCL output): it sits beside the
--                                                 run's log, and for 'same folder' that log has one run
-- A differing model, port or host excludes the pair. Hosts come from DCGM's Hostname label
-- or the scrape URL, and on the log side from its NCCL lines.
WITH t AS (
  SELECT ts.source_id, ts.tool, ts.model, ts.host, ts.port, ts.first_ts, ts.last_ts, ts.run_id AS manual_run,
         regexp_replace(s.path, '[^/\\]*$', '') AS folder
  FROM telemetry_sources ts JOIN sources s USING (source_id)
),
run_port AS (
  SELECT run_id, TRY_CAST(any_value(value) AS INTEGER) AS port FROM config WHERE key = 'port' GROUP BY run_id
),
run_name AS (
  SELECT run_id, list(DISTINCT trim(value, '''"[] ')) AS names FROM config
  WHERE key IN ('served_model_name', 'model', 'model_path') GROUP BY run_id
),
run_host AS (
  SELECT run_id, any_value(host) AS host FROM nccl_config WHERE host IS NOT NULL AND run_id IS NOT NULL GROUP BY run_id
),
r AS (
  SELECT r.run_id, r.started_at, coalesce(r.ended_at, r.started_at + INTERVAL 1 DAY) AS ended_at,
         list_distinct(list_append(coalesce(n.names, []), r.model)) AS names, p.port, h.host,
         regexp_replace(s.path, '[^/\\]*$', '') AS folder,
         count(*) OVER (PARTITION BY r.source_id) AS runs_in_log
  FROM runs r JOIN sources s ON s.source_id = r.source_id
  LEFT JOIN run_port p USING (run_id) LEFT JOIN run_name n USING (run_id) LEFT JOIN run_host h USING (run_id)
  WHERE r.started_at IS NOT NULL OR r.model IS NOT NULL
),
pair AS (
  SELECT r.run_id, t.source_id, t.manual_run,
         t.first_ts IS NOT NULL AND r.started_at IS NOT NULL
           AND t.first_ts <= r.ended_at + INTERVAL 2 MINUTE AND t.last_ts >= r.started_at - INTERVAL 2 MINUTE AS overlap,
         t.model IS NOT NULL AND EXISTS (SELECT 1 FROM (SELECT unnest(r.names) AS x) u
           WHERE u.x = t.model OR ends_with(u.x, '/' || t.model) OR ends_with(t.model, '/' || u.x)) AS same_model,
         t.model IS NOT NULL AND len(r.names) > 0 AS model_known,
         t.port IS NOT NULL AND r.port IS NOT NULL AS port_known, t.port = r.port AS same_port,
         t.host IS NOT NULL AND r.host IS NOT NULL AS host_known, t.host = r.host AS same_host,
         t.first_ts IS NULL AND t.folder = r.folder AS same_folder, r.runs_in_log
  FROM t CROSS JOIN r
),
linked AS (
  SELECT run_id, source_id,
         CASE
           WHEN manual_run = run_id THEN 'attached by hand (ingest --run)'
           WHEN manual_run IS NOT NULL THEN NULL
           WHEN (model_known AND NOT same_model) OR (port_known AND NOT same_port) OR (host_known AND NOT same_host) THEN NULL
           WHEN overlap THEN 'time overlap' || CASE WHEN same_model THEN ' + model name' ELSE '' END
                || CASE WHEN same_port THEN ' + port' ELSE '' END || CASE WHEN same_host THEN ' + host' ELSE '' END
           WHEN same_folder AND same_model THEN 'same folder + model name'
           WHEN same_folder AND runs_in_log = 1 THEN 'same folder'
         END AS how
  FROM pair
)
SELECT run_id, source_id, how FROM linked WHERE how IS NOT NULL
