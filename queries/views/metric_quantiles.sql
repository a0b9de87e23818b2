-- metric_quantiles: Prometheus histograms as p50/p90/p99 over time, one row per series,
-- snapshot, window and quantile. `window` = 'interval': requests observed since the
-- previous snapshot of the series (the first snapshot: since the server started);
-- 'cumulative': everything since the server started. Interpolation is Prometheus'
-- histogram_quantile(): linear inside the bucket that holds the rank; a rank in the +Inf
-- bucket returns the highest finite bound. `series` is the label set without `le`.
WITH b AS (
  SELECT source_id, snapshot, any_value(ts) AS ts, any_value(host) AS host, any_value(model) AS model, family,
         regexp_replace(CAST(labels AS VARCHAR), '"le": "[^"]*"(, )?', '') AS series, le,
         sum(value) AS cum, min(line_no) AS line_no
  FROM metrics
  WHERE type = 'histogram' AND ends_with(name, '_bucket') AND le IS NOT NULL
  GROUP BY ALL
),
d AS (
  SELECT *, cum - coalesce(lag(cum) OVER (PARTITION BY source_id, family, series, le ORDER BY snapshot), 0) AS n_int
  FROM b
),
u AS (
  SELECT source_id, snapshot, ts, host, model, family, series, le, line_no, 'interval' AS "window", n_int AS n FROM d
  UNION ALL
  SELECT source_id, snapshot, ts, host, model, family, series, le, line_no, 'cumulative', cum FROM d
),
r AS (
  SELECT *, lag(le) OVER s AS lo_le, lag(n) OVER s AS lo_n,
         max(n) FILTER (WHERE le = 'inf'::DOUBLE) OVER (PARTITION BY source_id, family, series, snapshot, "window") AS total
  FROM u
  WINDOW s AS (PARTITION BY source_id, family, series, snapshot, "window" ORDER BY le)
),
hit AS (
  SELECT r.*, q.q
  FROM r, (SELECT unnest([0.5, 0.9, 0.99]) AS q) q
  WHERE r.total > 0 AND r.n >= q.q * r.total
  QUALIFY row_number() OVER (PARTITION BY source_id, family, series, snapshot, "window", q.q ORDER BY le) = 1
)
SELECT source_id, line_no, snapshot, ts, host, model, family, series, "window", q AS quantile,
       CASE WHEN le = 'inf'::DOUBLE THEN lo_le
            ELSE coalesce(lo_le, 0) + (le - coalesce(lo_le, 0)) * (q * total - coalesce(lo_n, 0))
                 / nullif(n - coalesce(lo_n, 0), 0) END AS value,
       total AS observations
FROM hit
