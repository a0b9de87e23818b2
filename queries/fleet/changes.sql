-- fleet: what changed on a host between consecutive days (engine version, model, attention
-- backend, speculative method, or a configuration value), and the two days compared. The last
-- run of each day stands for the day; configuration is compared only between runs of one engine.
-- A benchmark client's output is no server launch: its runs are left out (its log, often
-- without a date, would otherwise stand for a day of its own).
WITH day_runs AS (
  SELECT s.host, s.date, r.run_id, r.engine, coalesce(r.engine_version, r.format_era) AS version,
         r.model, r.attention_backend, r.spec_method,
         row_number() OVER (PARTITION BY s.host, s.date ORDER BY r.started_at DESC NULLS LAST, r.run_id DESC) AS last_of_day
  FROM runs r JOIN sources s USING (source_id)
  WHERE r.engine IS DISTINCT FROM 'bench' AND s.kind IS DISTINCT FROM 'bench'
), days AS (
  SELECT *, lag(date) OVER w AS prev_date, lag(run_id) OVER w AS prev_run,
         lag(engine) OVER w AS prev_engine, lag(version) OVER w AS prev_version, lag(model) OVER w AS prev_model,
         lag(attention_backend) OVER w AS prev_backend, lag(spec_method) OVER w AS prev_spec
  FROM day_runs WHERE last_of_day = 1
  WINDOW w AS (PARTITION BY host ORDER BY date)
), cfg AS (
  SELECT run_id, key, min(value) AS value FROM config GROUP BY run_id, key
), cfg_keys AS (
  SELECT d.host, d.prev_date, d.date, d.prev_run, d.run_id, c.key
  FROM days d JOIN cfg c ON c.run_id IN (d.prev_run, d.run_id)
  WHERE d.prev_run IS NOT NULL AND d.prev_engine = d.engine GROUP BY ALL
), facts AS (
  SELECT host, prev_date, date, 'engine' AS what, prev_engine AS before, engine AS after FROM days
  UNION ALL SELECT host, prev_date, date, 'engine_version', prev_version, version FROM days
  UNION ALL SELECT host, prev_date, date, 'model', prev_model, model FROM days
  UNION ALL SELECT host, prev_date, date, 'attention_backend', prev_backend, attention_backend FROM days
  UNION ALL SELECT host, prev_date, date, 'spec_method', prev_spec, spec_method FROM days
  UNION ALL
  SELECT k.host, k.prev_date, k.date, 'config:' || k.key, a.value, b.value
  FROM cfg_keys k
  LEFT JOIN cfg a ON a.run_id = k.prev_run AND a.key = k.key
  LEFT JOIN cfg b ON b.run_id = k.run_id AND b.key = k.key
  WHERE k.key NOT IN (SELECT unnest($volatile_keys::VARCHAR[]))
)
SELECT host, prev_date AS before_date, date AS after_date, what, before, after
FROM facts
WHERE prev_date IS NOT NULL AND before IS DISTINCT FROM after
ORDER BY host, after_date, what
