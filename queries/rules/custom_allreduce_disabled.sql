-- id: custom_allreduce_disabled
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: custom all-reduce is off on TP{tp_size} ({reason}, {n_ranks} rank(s) warned) — every tensor-parallel all-reduce goes through NCCL
-- fix: Tune NCCL for small latency-bound all-reduces (see nccl_untuned_pcie_tp: NCCL_PROTO=LL, NCCL_ALGO=Ring, NCCL_P2P_LEVEL=SYS, verified with nccl-tests all_reduce_perf at 4-64 KB); consider TP=2 with DP/PP instead of TP>2 on PCIe. If P2P failed, fix ACS/IOMMU first.
-- fix.sglang: Try SGLang's opt-in PCIe custom all-reduce path (PR #32479, b12x backend).
-- fix.vllm: Watch vLLM RFC #56128 (custom all-reduce over PCIe) for an opt-in path.
-- source: docs/knowledge-base.md R28 (vllm-project/vllm#56128: NCCL ~20 us per all-reduce, ~100 per token; community 4xV100 PCIe fork haohervchb/sglang-V100#2: 92-97 vs 117 tok/s; sgl-project/sglang#32479). Evidence: the engine's own "Custom allreduce is disabled because ..." warning (vLLM and SGLang custom_all_reduce.py); one finding per run however many ranks print it.
-- Also raised when the launch itself disabled it (vLLM `disable_custom_all_reduce=True` in the
-- non-default args or engine config: it prints no warning) on a TP > 1 run: the cost is the same
-- and the flag is often copied from an old recipe. SGLang's explicit flag stays a choice,
-- reported by single_stream_below_reference as a configuration difference.
WITH warned AS MATERIALIZED (  -- the kind alone first (MATERIALIZED): a text filter pushed into the scan of events
  -- decompressed the text of every row (40 ms -> 3 ms on a 200 MB log)
  SELECT run_id, line_no, tp_rank, text FROM events_other WHERE kind = 'custom_allreduce_disabled' AND run_id IS NOT NULL
),
w AS (
  SELECT run_id, min(line_no) AS line_no, count(DISTINCT coalesce(tp_rank, -1)) AS n_tagged,
         count(*) AS n_lines,
         bool_or(text LIKE '%PCIe-only%') AS pcie_only,
         bool_or(text LIKE '%P2P%') AS no_p2p,
         bool_or(text LIKE 'Setup Custom allreduce failed%') AS setup_failed
  FROM warned
  -- "... because this process group spans across nodes" is multi-node TP, a different problem
  WHERE text LIKE '%PCIe-only%' OR text LIKE '%P2P%' OR text LIKE 'Setup Custom allreduce failed%'
  GROUP BY run_id
)
SELECT w.run_id, w.line_no, coalesce(r.tp_size, w.n_lines) AS tp_size,
       -- untagged lines (vLLM workers print without a rank prefix) count one per line
       CASE WHEN w.n_tagged > 1 THEN w.n_tagged ELSE w.n_lines END AS n_ranks,
       CASE WHEN w.pcie_only THEN 'not supported on more than two PCIe-only GPUs'
            WHEN w.no_p2p THEN 'no GPU P2P capability or the P2P test failed'
            ELSE 'custom all-reduce setup failed' END AS reason
FROM w JOIN runs r USING (run_id)
UNION ALL
SELECT r.run_id, min(c.line_no) AS line_no, r.tp_size, 0 AS n_ranks,  -- no rank warns: the flag silences it
       'disable_custom_all_reduce=True in the launch arguments' AS reason
FROM runs r JOIN config c ON c.run_id = r.run_id
WHERE r.engine = 'vllm' AND coalesce(r.tp_size, 1) > 1
  AND c.key IN ('disable_custom_all_reduce', 'parallel_config.disable_custom_all_reduce') AND lower(c.value) = 'true'
  AND r.run_id NOT IN (SELECT run_id FROM warned
                       WHERE text LIKE '%PCIe-only%' OR text LIKE '%P2P%' OR text LIKE 'Setup Custom allreduce failed%')
GROUP BY r.run_id, r.tp_size
