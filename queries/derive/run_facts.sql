-- Aggregates each runs row needs, per run of {runs}: vLLM V0 (swapped requests) or V1
-- (engine index) stats lines, the year of the first event (for lines stamped without one),
-- SGLang's CUDA-graph capture time (the sum of the target model's capture phases on the lowest
-- rank that reports one; a draft model's captures follow) and the engine banner line
-- ({banners}: the patterns of the grammar role "engine_banner").
WITH d AS (
  SELECT run_id, count(*) FILTER (WHERE swapped_reqs IS NOT NULL) AS swapped,
         count(*) FILTER (WHERE engine_idx IS NOT NULL) AS v1stats
  FROM decode_stats WHERE {runs} GROUP BY run_id
),
ev AS (
  SELECT run_id, year(min(ts)) AS year,
         min(coalesce(tp_rank, -1)) FILTER (WHERE kind = 'cuda_graph_end') AS graph_rank
  FROM events WHERE {runs} GROUP BY run_id
),
capture AS (
  SELECT e.run_id, round(sum(e.value), 3) AS capture_s FROM events e JOIN ev USING (run_id)
  WHERE {runs@e} AND e.kind IN ('cuda_graph_end', 'cuda_graph_piecewise_end')
    AND coalesce(json_extract_string(e.attrs, '$.role'), 'target') <> 'draft'
    AND coalesce(e.tp_rank, -1) = ev.graph_rank
  GROUP BY e.run_id
),
banner AS (
  SELECT run_id, arg_min(raw, line_no) AS text FROM lines WHERE {runs} AND pattern IN ({banners})
  GROUP BY run_id
)
SELECT r.run_id, coalesce(d.swapped, 0), coalesce(d.v1stats, 0), ev.year, capture.capture_s, banner.text
FROM (SELECT unnest([{run_list}]) AS run_id) r
  LEFT JOIN d USING (run_id) LEFT JOIN ev USING (run_id) LEFT JOIN capture USING (run_id)
  LEFT JOIN banner USING (run_id)
