-- id: sgl_decode_above_cuda_graph_bs
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: {how} — CUDA-graph ceiling cuda_graph_max_bs={ceiling}, max_running_requests={max_running}, peak #running-req {peak_running}
-- advice: cuda_graph_max_bs=raise
-- fix: Raise --cuda-graph-max-bs to at least the expected peak running batch (or cap --max-running-requests to the ceiling); with DP attention / MTP size it for the padded per-rank batch; if capture then needs memory, trim --mem-fraction-static a little.
-- params: warn_share=0.10, critical_share=0.50, config_ceiling_below=128
-- source: docs/knowledge-base.md R01 — sglang issue #33483 (median running batch 67 with ceiling 32 vs 23 with 128, "absorbing state"), PR #33900, PR #40346 (RTX 5090 TPOT 5.4 -> 2.6 ms once the ceiling was raised), PR #21005; log example mit-han-lab/fastrl PR #4. Share of busy decode lines (primary rank, #running-req > 0) that run above the ceiling without a graph: >=10 % warning, >=50 % critical; the config-only form (max_running_requests > a small ceiling, nothing observed above it) is info.
-- requires: runs.cuda_graph_max_bs
-- engine: sglang
-- SGLang replays a CUDA graph only when the batch fits the largest captured bs; above it the
-- step runs eagerly and no warning is printed. Old formats without the `cuda graph:` field
-- count lines above the ceiling as eager (the graph runner cannot take them).
WITH r AS (
  SELECT run_id, cuda_graph_max_bs AS ceiling, max_running_requests AS max_running
  FROM runs
  WHERE engine = 'sglang' AND cuda_graph_max_bs IS NOT NULL AND coalesce(cuda_graph, true)
),
busy AS (
  SELECT d.run_id, d.line_no, d.running_reqs, d.cuda_graph, d.running_reqs > r.ceiling
           AND d.cuda_graph IS DISTINCT FROM true AS above
  FROM decode_primary d JOIN r USING (run_id)
  WHERE d.primary_rank AND d.running_reqs > 0
),
agg AS (
  SELECT run_id, count(*) AS n_busy, count(*) FILTER (WHERE above) AS n_above,
         max(running_reqs) AS peak_running,
         min(line_no) FILTER (WHERE above) AS first_above,
         list(line_no ORDER BY running_reqs DESC, line_no) FILTER (WHERE above) AS above_lines,
         median(running_reqs) FILTER (WHERE above) AS median_above
  FROM busy GROUP BY run_id
),
cfg_line AS (  -- where the limit is printed: the startup summary, else the server_args dump
  SELECT run_id, min(line_no) AS line_no FROM events_other WHERE kind = 'limits' GROUP BY run_id
  UNION ALL
  SELECT c.run_id, min(c.line_no) FROM config c
  WHERE c.origin = 'server_args' AND c.key = 'cuda_graph_max_bs'
    AND NOT EXISTS (SELECT 1 FROM events_other e WHERE e.run_id = c.run_id AND e.kind = 'limits')
  GROUP BY c.run_id
),
judged AS (
  SELECT r.run_id, r.ceiling, r.max_running, a.n_busy, coalesce(a.n_above, 0) AS n_above,
         a.peak_running, a.first_above, a.above_lines, a.median_above,
         coalesce(a.n_above, 0)::DOUBLE / nullif(a.n_busy, 0) AS share
  FROM r LEFT JOIN agg a USING (run_id)
)
SELECT j.run_id,
       coalesce(j.first_above, c.line_no) AS line_no,
       j.ceiling, coalesce(CAST(j.max_running AS VARCHAR), '?') AS max_running,
       coalesce(CAST(j.peak_running AS VARCHAR), 'n/a') AS peak_running,
       j.n_above, j.n_busy, round(100 * j.share, 1) AS share_pct, j.median_above,
       CASE WHEN j.n_above > 0
            THEN j.n_above || ' of ' || j.n_busy || ' busy decode lines (' || round(100 * j.share, 1)
                 || ' %) ran eager with #running-req above the captured ceiling (median ' || CAST(j.median_above AS INTEGER) || ')'
            ELSE 'admission allows ' || j.max_running || ' running requests but graphs only cover ' || j.ceiling
                 || ' — batches above that would decode eagerly'
       END AS how,
       CASE WHEN j.share >= $critical_share THEN 'critical'
            WHEN j.share >= $warn_share THEN 'warning'
            ELSE 'info' END AS severity,
       j.above_lines[2:5] AS evidence_lines
FROM judged j LEFT JOIN cfg_line c USING (run_id)
WHERE (j.n_above > 0 AND j.share >= $warn_share)
   OR (coalesce(j.n_above, 0) = 0 AND j.max_running > j.ceiling AND j.ceiling < $config_ceiling_below
       AND coalesce(j.peak_running, 0) <= j.ceiling)
