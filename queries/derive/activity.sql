-- Whether a run holds activity of its own before a line (stats, bench results, a fatal error,
-- a milestone event): the lines before a file's first launch are its context unless they do
-- (then they are the tail of an earlier launch, a run of their own).
-- For every (source_id, run_id, before_line) of the frame derive_pairs: the rows of activity.
WITH hits AS (
  SELECT source_id, run_id, line_no FROM decode_stats WHERE {sources}
  UNION ALL SELECT source_id, run_id, line_no FROM prefill_stats WHERE {sources}
  UNION ALL SELECT source_id, run_id, line_no FROM bench_results WHERE {sources}
  UNION ALL SELECT source_id, run_id, line_no FROM errors WHERE {sources} AND fatal
  UNION ALL SELECT source_id, run_id, line_no FROM events_other WHERE {sources}
    AND kind IN ('server_ready', 'app_startup_complete', 'cuda_graph_end', 'weights_loaded')
)
SELECT p.source_id, p.run_id, count(*) AS n
FROM hits h JOIN derive_pairs p ON h.source_id = p.source_id AND h.run_id = p.run_id
  AND h.line_no < coalesce(p.before_line, 4611686018427387904)
GROUP BY ALL
