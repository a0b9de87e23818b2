-- id: vllm_enforce_eager
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: vLLM runs in eager mode ({how}) — no CUDA graphs and no torch.compile fusion for decode
-- fix: Remove --enforce-eager. If it was added because graph capture ran out of memory, lower --gpu-memory-utilization or restrict cudagraph_capture_sizes / --max-cudagraph-capture-size instead.
-- source: docs/knowledge-base.md R03 — Project-MONAI/VLM-Surgical-Agent-Framework#5 (A6000 11.2 -> 45.9 tok/s once removed), flagos-ai/vllm-plugin-FL#396 (Phi-4-mini 6-10x slower), vllm issue #56892, ai-dynamo/dynamo PR #2109. Evidence: `Enforce eager set, disabling torch.compile and CUDAGraphs`, `Cudagraph is disabled under eager mode`, V0 `... enable CUDA graph. Since, enforce-eager is enabled`, or enforce_eager=True in the args. Pooling (embedding/classify) servers are skipped: they only prefill, where graphs matter little.
-- engine: vllm
WITH ev AS (
  SELECT run_id, line_no, text AS how, CASE WHEN text LIKE 'Data Parallel:%' THEN 0 ELSE 2 END AS prio
  FROM events_other WHERE kind = 'enforce_eager'
  UNION ALL
  SELECT run_id, line_no, 'Cudagraph is disabled under eager mode', 3 FROM events_other WHERE kind = 'cuda_graph_disabled_eager'
  UNION ALL
  SELECT run_id, line_no, 'enforce_eager=True in the ' || replace(origin, '_', ' '),
         CASE WHEN origin = 'cli_args' THEN 1 ELSE 4 END
  FROM config WHERE key = 'enforce_eager' AND lower(value) = 'true'
),
pooling AS (
  SELECT DISTINCT run_id FROM config
  WHERE (key = 'runner' AND value = 'pooling')
     OR (key IN ('task', 'convert') AND value IN ('embed', 'embedding', 'classify', 'score', 'reward', 'pooling'))
)
SELECT e.run_id, e.line_no,
       CASE WHEN e.how LIKE 'Data Parallel:%' THEN 'forced by data parallelism: ' || e.how ELSE e.how END AS how,
       list(e.line_no) OVER (PARTITION BY e.run_id ORDER BY e.prio, e.line_no
                             ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS evidence_lines
FROM ev e JOIN runs r USING (run_id)
WHERE r.engine = 'vllm' AND e.run_id NOT IN (SELECT run_id FROM pooling)
QUALIFY row_number() OVER (PARTITION BY e.run_id ORDER BY e.prio, e.line_no) = 1
