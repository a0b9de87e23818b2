-- metric_rates: Prometheus counters as per-second rates between consecutive snapshots of
-- each series (source, sample name, labels). A counter that went down (process restart)
-- starts over: its rate at that snapshot is NULL, as Prometheus' rate() treats a reset.
-- `_created` samples (the series' start time) are not counters and are left out.
SELECT source_id, line_no, snapshot, ts, host, model, family, name, labels, value,
       value - lag(value) OVER w AS delta,
       epoch(ts) - epoch(lag(ts) OVER w) AS interval_s,
       CASE WHEN value >= lag(value) OVER w AND epoch(ts) > epoch(lag(ts) OVER w)
            THEN (value - lag(value) OVER w) / (epoch(ts) - epoch(lag(ts) OVER w)) END AS rate_per_s
FROM metrics
WHERE type = 'counter' AND NOT ends_with(name, '_created')
WINDOW w AS (PARTITION BY source_id, name, CAST(labels AS VARCHAR) ORDER BY snapshot)
