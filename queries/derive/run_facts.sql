-- Aggregates each runs row needs, per run of {runs}: vLLM V0 (swapped requests) or V1
-- (engine index) stats lines, the year of the first event (for lines stamped without one),
-- SGLang's CUDA-graph capture time (the sum of the target model's capture phases on the lowest
-- rank that reports one; a draft model's captures follow) and the engine banner line
-- ({banners}: the patterns of the grammar role "engine_banner"), and whether it has speculative
-- metrics to normalise (SGLang decode lines with an accept length, spec_stats rows).
WITH d AS (
  SELECT run_id, count(*) FILTER (WHERE swapped_reqs IS NOT NULL) AS swapped,
         count(*) FILTER (WHERE engine_idx IS NOT NULL) AS v1stats,
         count(*) FILTER (WHERE accept_len IS NOT NULL) AS accepts
  FROM decode_stats WHERE {runs} GROUP BY run_id
),
spec AS (SELECT run_id, count(*) AS n FROM spec_stats WHERE {runs} GROUP BY run_id),
ev AS (
  SELECT run_id, year(min(ts)) AS year,
         min(coalesce(tp_rank, -1)) FILTER (WHERE kind = 'cuda_graph_end') AS graph_rank
  FROM events WHERE {runs} GROUP BY run_id
),
capture AS (
  SELECT e.run_id, round(sum(e.value), 3) AS capture_s FROM events_other e JOIN ev USING (run_id)
  WHERE {runs@e} AND e.kind IN ('cuda_graph_end', 'cuda_graph_piecewise_end')
    AND coalesce(json_extract_string(e.attrs, '$.role'), 'target') <> 'draft'
    AND coalesce(e.tp_rank, -1) = ev.graph_rank
  GROUP BY e.run_id
),
banner AS (
  SELECT run_id, arg_min(raw, line_no) AS text FROM lines WHERE {runs} AND pattern IN ({banners})
  GROUP BY run_id
)
SELECT r.run_id, coalesce(d.swapped, 0) AS swapped, coalesce(d.v1stats, 0) AS v1stats, ev.year,
       capture.capture_s, banner.text AS banner, coalesce(d.accepts, 0) AS accepts, coalesce(spec.n, 0) AS spec_rows
FROM (SELECT unnest([{run_list}]) AS run_id) r
  LEFT JOIN d USING (run_id) LEFT JOIN ev USING (run_id) LEFT JOIN capture USING (run_id)
  LEFT JOIN banner USING (run_id) LEFT JOIN spec USING (run_id)
