-- id: sgl_cuda_graph_disabled
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: SGLang decodes without CUDA graphs ({how}); {n_eager} of {n_busy} busy decode lines show cuda graph: False
-- fix: Drop --disable-cuda-graph. If it was added to dodge a capture OOM or crash, lower --cuda-graph-max-bs and/or --mem-fraction-static instead; if a backend forced it (torch_native attention), pick a graph-capable --attention-backend.
-- params: min_eager_share=0.90
-- source: docs/knowledge-base.md R02 — sglang PR #1401 (Llama-3-8B BS1 141.6 vs 107.8 tok/s, ~4x on DeepSeek-Coder-V2-Lite), PR #24047 (DeepSeek-V4 on SM120 4.36 -> 10.26 tok/s), PR #6201 (added the `cuda graph` log field). Fires on disable_cuda_graph=True, a "Cuda graph is disabled because ..." notice, or >=90 % of busy decode lines (primary rank) with cuda graph: False while #running-req <= the captured ceiling.
-- engine: sglang
WITH flag AS (
  SELECT run_id, min(line_no) AS line_no, 'disable_cuda_graph=True' AS how
  FROM config WHERE origin = 'server_args' AND key = 'disable_cuda_graph' AND lower(value) = 'true'
  GROUP BY run_id
  UNION ALL
  SELECT run_id, min(line_no), 'Cuda graph is disabled because ' || any_value(text)
  FROM events_other WHERE kind = 'cuda_graph_disabled_notice' GROUP BY run_id
),
busy AS (
  SELECT d.run_id, count(*) AS n_busy,
         count(*) FILTER (WHERE d.cuda_graph = false
                          AND (r.cuda_graph_max_bs IS NULL OR d.running_reqs <= r.cuda_graph_max_bs
                               OR NOT coalesce(r.cuda_graph, true))) AS n_eager,
         min(d.line_no) FILTER (WHERE d.cuda_graph = false) AS first_eager,
         count(*) FILTER (WHERE d.cuda_graph IS NOT NULL) AS n_known
  FROM decode_primary d JOIN runs r USING (run_id)
  WHERE r.engine = 'sglang' AND d.primary_rank AND d.running_reqs > 0
  GROUP BY d.run_id
),
cand AS (
  SELECT f.run_id, f.line_no, f.how FROM flag f
  UNION ALL
  SELECT b.run_id, b.first_eager, 'cuda graph: False on most decode lines although the batch fits the captured sizes'
  FROM busy b
  WHERE b.n_known > 0 AND b.n_eager >= $min_eager_share * b.n_busy AND b.n_eager > 0
)
SELECT c.run_id, c.line_no, c.how, coalesce(b.n_eager, 0) AS n_eager, coalesce(b.n_busy, 0) AS n_busy,
       CASE WHEN b.first_eager IS NOT NULL AND b.first_eager <> c.line_no THEN [b.first_eager] END AS evidence_lines
FROM cand c JOIN runs r USING (run_id) LEFT JOIN busy b USING (run_id)
WHERE r.engine = 'sglang'
QUALIFY row_number() OVER (PARTITION BY c.run_id ORDER BY c.line_no) = 1
