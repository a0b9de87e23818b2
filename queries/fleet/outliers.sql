-- fleet: hosts decoding at least $min_drop below the median of their peers (same model, GPU and engine:
-- another engine is other software, not a peer).
-- A peer group needs $min_peers hosts with the figure; each host's figure is the median over its runs.
WITH per_host AS (
  SELECT s.host, r.model, coalesce(r.gpu_name, 'unknown GPU') AS gpu, r.engine,
         median(r.single_stream_tok_s) AS single_stream_tok_s, median(r.peak_gen_tok_s) AS peak_gen_tok_s
  FROM run_summary r JOIN sources s USING (source_id)
  WHERE r.model IS NOT NULL
  GROUP BY ALL
), figures AS (
  SELECT host, model, gpu, engine, 'single_stream_tok_s' AS metric, single_stream_tok_s AS value FROM per_host
  UNION ALL
  SELECT host, model, gpu, engine, 'peak_gen_tok_s', peak_gen_tok_s FROM per_host
), peers AS (
  SELECT *, median(value) OVER (PARTITION BY model, gpu, engine, metric) AS peer_median,
         count(value) OVER (PARTITION BY model, gpu, engine, metric) AS n_peers
  FROM figures WHERE value IS NOT NULL
)
SELECT host, model, gpu, engine, metric, round(value, 1) AS value, round(peer_median, 1) AS peer_median, n_peers,
       round(1 - value / peer_median, 3) AS below_by
FROM peers
WHERE n_peers >= $min_peers AND peer_median > 0 AND value <= (1 - $min_drop) * peer_median
ORDER BY model, gpu, metric, host
