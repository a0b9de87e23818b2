-- compare_bands: per run and band of running requests, the decode samples (primary rank) and
-- their median generation throughput. $run_ids: the runs; $band_labels, $band_lows,
-- $band_highs: the bands (analysis/compare.py BANDS; a NULL high is open-ended).
WITH bands AS (
  SELECT unnest($band_labels) AS band, unnest($band_lows) AS lo, unnest($band_highs) AS hi
)
SELECT d.run_id, b.band, count(*) AS n, median(d.gen_tok_s) AS med
FROM decode_stats d JOIN bands b ON d.running_reqs >= b.lo AND (b.hi IS NULL OR d.running_reqs <= b.hi)
WHERE d.primary_rank AND d.running_reqs >= 1 AND d.gen_tok_s > 0 AND list_contains($run_ids, d.run_id)
GROUP BY ALL
