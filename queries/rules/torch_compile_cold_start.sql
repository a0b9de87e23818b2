-- id: torch_compile_cold_start
-- severity: info
-- title: Run {run_id}: torch.compile ran cold for {compile_s} s{graph_note} — no compiled graph was loaded from the cache, so every fresh container pays this again
-- fix.sglang: With --enable-torch-compile keep --torch-compile-max-bs small and persist the inductor cache across restarts.
-- fix.vllm: Persist the compile cache across restarts (mount ~/.cache/vllm/torch_compile_cache or set VLLM_CACHE_ROOT to a volume; same model, flags and vLLM version hit it); use -O0/-O1 (or --enforce-eager only for debugging) in development.
-- params: min_compile_s=30
-- source: docs/knowledge-base.md R33 (vllm-project/vllm#11005, #16848, #34399: Llama-3-8B ~19 s cold, one Nemotron-3 run 2222 s). Evidence: vLLM "torch.compile takes|took X s in total" with no "Directly load the compiled graph(s) ... from the cache" in the same run; "Compiling a graph for ... takes X s" as detail. min_compile_s=30 keeps the sub-30-s compiles of small models quiet.
-- requires: events_other.kind=torch_compile
WITH tc AS (
  SELECT run_id, max(value) AS compile_s, arg_max(line_no, value) AS line_no
  FROM events_other WHERE kind = 'torch_compile' AND value IS NOT NULL AND run_id IS NOT NULL GROUP BY run_id
),
cg AS (
  SELECT run_id, max(value) AS graph_s, arg_max(line_no, value) AS line_no
  FROM events_other WHERE kind = 'compile_graph' GROUP BY run_id
)
SELECT tc.run_id, tc.line_no, round(tc.compile_s, 1) AS compile_s,
       CASE WHEN cg.graph_s IS NOT NULL THEN ' (compiling the graph alone took ' || round(cg.graph_s, 1) || ' s)' ELSE '' END AS graph_note,
       CASE WHEN cg.line_no IS NOT NULL THEN [cg.line_no] END AS evidence_lines
FROM tc LEFT JOIN cg USING (run_id)
WHERE tc.compile_s >= $min_compile_s
  AND NOT EXISTS (SELECT 1 FROM events_other h WHERE h.run_id = tc.run_id AND h.kind = 'compile_cache_hit')
