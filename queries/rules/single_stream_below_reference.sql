-- id: single_stream_below_reference
-- severity: warning
-- title: Run {run_id} ({engine}) decodes a single stream at {tok_s} tok/s, {gap_pct}% below run {best_run} ({best_engine}, {best_tok_s} tok/s) on the same model; differences: {differences}
-- fix: Walk the configuration differences in this order: CUDA graphs -> attention/quantization backend -> communication (custom all-reduce, NCCL_PROTO/NCCL_ALGO/NCCL_P2P_LEVEL on PCIe) -> scheduler steps -> speculative decoding; change one at a time and re-measure at concurrency 1.
-- params: min_gap=0.1, warn_ratio=0.7, min_samples=5
-- requires: decode_stats.gen_tok_s
-- source: docs/knowledge-base.md R42 (field report: Kimi-K2.5 on 8x RTX PRO 6000, vLLM 82.5 tok/s NCCL-tuned vs SGLang 63.6; the KB's "warn below 70 % of reference"; §1 reference figures). The reference is the best run of the same model in this database (runs.model_key: the weights' hub id or path basename, lower-cased, quantisation suffixes such as -int4/-awq/-fp8 removed, so a served name on one side and a path on the other still meet; same TP size; runs on different known GPUs are not compared): median generation throughput of primary-rank stats lines with exactly one running request (run_summary.single_stream_tok_s), from at least min_samples lines. Fires (info) more than min_gap below the best, warning below warn_ratio of it. Idle servers have no single-stream figure and stay silent.
WITH ss AS (
  -- evidence: the single-stream line closest to the run's median, a representative sample
  -- (run_rollup, computed at ingest from the primary rank's decode lines)
  SELECT run_id, n_single_stream AS n_ss, single_stream_line AS line_no
  FROM run_rollup WHERE n_single_stream > 0
),
env_seen AS (
  SELECT DISTINCT run_id FROM lines_other
  WHERE run_id IS NOT NULL AND pattern IN ('shell_trace', 'nccl_info', 'nccl_env_echo', 'nccl_channel', 'env_export')
),
nccl AS (
  SELECT run_id, string_agg(DISTINCT key || '=' || value, ', ' ORDER BY key || '=' || value) AS nccl_env FROM config
  WHERE origin = 'env' AND key IN ('NCCL_PROTO', 'NCCL_ALGO', 'NCCL_P2P_LEVEL') GROUP BY run_id
),
warned AS MATERIALIZED (  -- the kind alone first (MATERIALIZED): a text filter pushed into the scan of events
  -- decompressed the text of every row (40 ms -> 3 ms on a 200 MB log)
  SELECT run_id, text FROM events_other WHERE kind = 'custom_allreduce_disabled'
),
ar AS (
  SELECT DISTINCT run_id FROM warned
  WHERE text LIKE '%PCIe-only%' OR text LIKE '%P2P%' OR text LIKE 'Setup Custom allreduce failed%'
  UNION
  SELECT DISTINCT run_id FROM config WHERE key = 'disable_custom_all_reduce' AND value = 'True'
),
cds AS (
  SELECT run_id, max(try_cast(value AS INT)) AS steps FROM config WHERE key = 'num_continuous_decode_steps' GROUP BY run_id
),
s AS (
  SELECT rs.run_id, rs.engine, rs.single_stream_tok_s AS tok_s, rs.gpu_name, rs.tp_size, r.quantization,
         rs.attention_backend, coalesce(rs.spec_method, 'off') AS spec, rs.cuda_graph, ss.line_no,
         coalesce(rs.model_key, lower(regexp_replace(rtrim(rs.model, '/'), '^.*/', ''))) AS model_key,
         CASE WHEN n.nccl_env IS NOT NULL THEN n.nccl_env WHEN e.run_id IS NOT NULL THEN 'none' END AS nccl_env,
         CASE WHEN ar.run_id IS NOT NULL THEN 'disabled' WHEN rs.tp_size > 1 THEN 'enabled' END AS custom_ar,
         c.steps
  FROM run_summary rs JOIN runs r USING (run_id) JOIN ss USING (run_id)
  LEFT JOIN nccl n USING (run_id) LEFT JOIN env_seen e USING (run_id) LEFT JOIN ar USING (run_id)
  LEFT JOIN cds c USING (run_id)
  WHERE rs.single_stream_tok_s > 0 AND coalesce(rs.model_key, rs.model) IS NOT NULL AND ss.n_ss >= $min_samples
),
pair AS (
  SELECT a.*, b.run_id AS best_run, b.engine AS best_engine, b.tok_s AS best_tok_s,
         concat_ws('; ',
           CASE WHEN lower(a.attention_backend) <> lower(b.attention_backend)
                THEN 'attention ' || a.attention_backend || ' vs ' || b.attention_backend END,
           CASE WHEN a.nccl_env <> b.nccl_env THEN 'NCCL env ' || a.nccl_env || ' vs ' || b.nccl_env END,
           CASE WHEN a.custom_ar <> b.custom_ar THEN 'custom all-reduce ' || a.custom_ar || ' vs ' || b.custom_ar END,
           CASE WHEN a.steps <> b.steps THEN 'num_continuous_decode_steps ' || a.steps || ' vs ' || b.steps END,
           CASE WHEN a.cuda_graph <> b.cuda_graph
                THEN 'CUDA graphs ' || CASE WHEN a.cuda_graph THEN 'on' ELSE 'off' END || ' vs '
                     || CASE WHEN b.cuda_graph THEN 'on' ELSE 'off' END END,
           CASE WHEN a.spec <> b.spec THEN 'speculative decoding ' || a.spec || ' vs ' || b.spec END,
           CASE WHEN a.quantization <> b.quantization THEN 'quantization ' || a.quantization || ' vs ' || b.quantization END) AS diffs
  FROM s a JOIN s b
    ON a.model_key = b.model_key AND a.run_id <> b.run_id
   AND (a.gpu_name IS NULL OR b.gpu_name IS NULL OR a.gpu_name = b.gpu_name)
   AND a.tp_size IS NOT DISTINCT FROM b.tp_size
  QUALIFY row_number() OVER (PARTITION BY a.run_id ORDER BY b.tok_s DESC, b.run_id) = 1
)
SELECT run_id, line_no, engine, round(tok_s, 1) AS tok_s, best_run, best_engine, round(best_tok_s, 1) AS best_tok_s,
       CAST(round(100 * (1 - tok_s / best_tok_s)) AS INTEGER) AS gap_pct,
       coalesce(nullif(diffs, ''), 'none of attention backend, NCCL env, custom all-reduce, decode steps, CUDA graphs, speculative decoding or quantization differ (look at hardware and versions)') AS differences,
       CASE WHEN tok_s < $warn_ratio * best_tok_s THEN 'warning' ELSE 'info' END AS severity
FROM pair
WHERE tok_s < (1 - $min_gap) * best_tok_s
