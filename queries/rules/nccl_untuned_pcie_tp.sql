-- id: nccl_untuned_pcie_tp
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: TP{tp_size} on PCIe-only GPUs ({pcie_evidence}) with NCCL at its defaults — the launch environment ({env_seen}) sets none of NCCL_PROTO, NCCL_ALGO, NCCL_P2P_LEVEL{shm_note}
-- fix: A/B the decode-latency NCCL settings: NCCL_P2P_LEVEL=SYS, NCCL_PROTO=LL (or LL128), NCCL_ALGO=Ring, exported before the server starts; verify with nccl-tests all_reduce_perf at 4-64 KB. If channels go via SHM, P2P is off: fix ACS/IOMMU (or the GeForce P2P limit) first.
-- params: min_tp=4
-- source: docs/knowledge-base.md R29 (field report: Kimi-K2.5 on 8x RTX PRO 6000, vLLM with NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_P2P_LEVEL=SYS 82.5 tok/s vs SGLang 63.6; community FujitsuPolycom/sparkring#193: LL vs Simple -27 % latency at 4 KB; NVIDIA/nccl#199). PCIe-only = runs.gpu_interconnect 'pcie' (topology/env report or GPU catalog) or the engine's custom all-reduce PCIe/P2P warning (R28); NCCL channels via SHM (NCCL_DEBUG=INFO) as extra evidence.
-- Only runs whose launch environment is visible in the log: a shell trace (set -x) of the launch
-- script, NCCL_DEBUG=INFO output (NCCL echoes every NCCL_* it reads) or exported variables. Without
-- any of these the environment is unknown and the rule stays silent.
WITH seen AS (
  SELECT run_id,
         string_agg(DISTINCT CASE WHEN pattern = 'shell_trace' THEN 'shell trace'
                                  WHEN pattern IN ('nccl_info', 'nccl_env_echo', 'nccl_channel') THEN 'NCCL_DEBUG output'
                                  WHEN pattern = 'env_export' THEN 'exported variables' END, ', ') AS env_seen
  FROM lines_other
  WHERE run_id IS NOT NULL AND pattern IN ('shell_trace', 'nccl_info', 'nccl_env_echo', 'nccl_channel', 'env_export')
  GROUP BY run_id
),
tuned AS (
  SELECT DISTINCT run_id FROM config
  WHERE origin = 'env' AND key IN ('NCCL_PROTO', 'NCCL_ALGO', 'NCCL_P2P_LEVEL') AND run_id IS NOT NULL
),
warned AS MATERIALIZED (  -- the kind alone first (MATERIALIZED): a text filter pushed into the scan of events
  -- decompressed the text of every row (40 ms -> 3 ms on a 200 MB log)
  SELECT run_id, line_no, text FROM events_other WHERE kind = 'custom_allreduce_disabled'
),
ar AS (
  SELECT run_id, min(line_no) AS line_no FROM warned
  WHERE text LIKE '%PCIe-only%' OR text LIKE '%P2P%'
  GROUP BY run_id
),
channels AS MATERIALIZED (  -- the same: the kind alone first
  SELECT run_id, line_no, text FROM events_other WHERE kind = 'nccl_channel'
),
shm AS (
  SELECT run_id, count(*) AS n_shm, min(line_no) AS line_no FROM channels
  WHERE text LIKE 'SHM%' GROUP BY run_id
),
tp_line AS (
  SELECT run_id, min(line_no) AS line_no FROM config
  WHERE key IN ('tp_size', 'tensor_parallel_size') GROUP BY run_id
)
SELECT r.run_id, coalesce(ar.line_no, shm.line_no, t.line_no, r.first_line) AS line_no, r.tp_size,
       CASE WHEN ar.line_no IS NOT NULL THEN 'the engine''s custom all-reduce warning'
            ELSE coalesce(r.gpu_name, 'GPUs') || ', interconnect from ' || coalesce(r.gpu_source, 'the GPU context')
       END AS pcie_evidence,
       s.env_seen,
       CASE WHEN shm.n_shm > 0 THEN '; NCCL channels go via SHM (' || shm.n_shm || ' lines): no GPU peer-to-peer'
            ELSE '' END AS shm_note,
       CASE WHEN shm.line_no IS NOT NULL AND ar.line_no IS NOT NULL THEN [shm.line_no] END AS evidence_lines
FROM runs r
JOIN seen s USING (run_id)
LEFT JOIN ar USING (run_id)
LEFT JOIN shm USING (run_id)
LEFT JOIN tp_line t USING (run_id)
WHERE r.tp_size >= $min_tp
  AND (r.gpu_interconnect = 'pcie' OR ar.line_no IS NOT NULL)
  AND r.run_id NOT IN (SELECT run_id FROM tuned)
