-- id: vllm_decode_not_graph_covered
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: decode needs graphs up to {needed} tokens (max_num_seqs {max_num_seqs} x {tokens_per_seq} token(s) per step) but CUDA graphs stop at {ceiling}{how}
-- advice: max_cudagraph_capture_size=raise
-- fix: Set --max-cudagraph-capture-size (or explicit cudagraph_capture_sizes) to at least max_num_seqs x (1 + num_speculative_tokens), or lower --max-num-seqs to what the graphs cover; keep max_num_seqs on the capture grid (multiples of 8).
-- params: warn_share=0.10
-- source: docs/knowledge-base.md R04 — vllm issue #54933 (6 seqs x 7 tokens = 42 with the list ending at 40: 25.3 -> 133.3 tok/s, TTFT 26 s -> 0.84 s once 42 was captured), PRs #37865, #57355, #40734, #51509; tonyd2wild/DeepSeek-v4-Flash... PR #5 (community). Ceiling = `Truncating max_cudagraph_capture_size to N`, else max_cudagraph_capture_size / the largest cudagraph_capture_sizes entry of the engine config. Critical when >=10 % of busy stats lines run above it, warning when only the configuration shows the gap.
-- engine: vllm
WITH k AS (
  SELECT run_id, coalesce(num_spec_tokens, 0) AS k, cuda_graph_max_bs AS truncated_to FROM runs
  WHERE engine = 'vllm' AND coalesce(cuda_graph, true)
),
cc AS (  -- capture ceiling from the engine config (dict/JSON repr) or flattened keys
  SELECT run_id, max(coalesce(  -- the largest size actually in the capture list wins over the configured maximum
           list_max(list_transform(string_split(regexp_extract(value, 'cudagraph_capture_sizes''?"?\s*:\s*\[([\d, ]+)\]', 1), ','),
                                   lambda x: TRY_CAST(trim(x) AS INTEGER))),
           TRY_CAST(regexp_extract(value, '''?"?max_cudagraph_capture_size''?"?\s*:\s*(\d+)', 1) AS INTEGER),
           TRY_CAST(regexp_extract(value, '''?"?max_capture_size''?"?\s*:\s*(\d+)', 1) AS INTEGER))) AS ceiling,
         min(line_no) AS line_no
  FROM config WHERE key = 'compilation_config' GROUP BY run_id
  UNION ALL
  SELECT run_id, max(coalesce(
           list_max(list_transform(string_split(trim(value, '[]'), ','), lambda x: TRY_CAST(trim(x) AS INTEGER))),
           TRY_CAST(value AS INTEGER))), min(line_no) FROM config
  WHERE key IN ('compilation_config.cudagraph_capture_sizes', 'compilation_config.max_capture_size',
                'compilation_config.max_cudagraph_capture_size')
  GROUP BY run_id
),
ccr AS (SELECT run_id, min(ceiling) FILTER (WHERE ceiling > 0) AS ceiling, min(line_no) AS cfg_line FROM cc GROUP BY run_id),
tr AS (SELECT run_id, min(line_no) AS trunc_line FROM events_other WHERE kind = 'cudagraph_truncated' GROUP BY run_id),
ceil AS (
  SELECT k.run_id, k.k, coalesce(k.truncated_to, ccr.ceiling) AS ceiling, tr.trunc_line, ccr.cfg_line
  FROM k LEFT JOIN ccr USING (run_id) LEFT JOIN tr USING (run_id)
),
seqs AS (
  SELECT run_id, max(TRY_CAST(value AS INTEGER)) AS max_num_seqs, min(line_no) AS line_no
  FROM config WHERE key = 'max_num_seqs' GROUP BY run_id
),
busy AS (
  SELECT d.run_id, count(*) AS n_busy,
         count(*) FILTER (WHERE d.running_reqs * (1 + c.k) > c.ceiling) AS n_above,
         min(d.line_no) FILTER (WHERE d.running_reqs * (1 + c.k) > c.ceiling) AS first_above,
         max(d.running_reqs) AS peak_running
  FROM decode_primary d JOIN ceil c USING (run_id)
  WHERE d.primary_rank AND d.running_reqs > 0 AND c.ceiling IS NOT NULL
  GROUP BY d.run_id
)
SELECT c.run_id,
       coalesce(b.first_above, c.trunc_line, s.line_no, c.cfg_line) AS line_no,
       coalesce(s.max_num_seqs, b.peak_running) AS max_num_seqs, 1 + c.k AS tokens_per_seq,
       coalesce(s.max_num_seqs, b.peak_running) * (1 + c.k) AS needed, c.ceiling,
       coalesce(b.n_above, 0) AS n_above, coalesce(b.n_busy, 0) AS n_busy,
       (CASE WHEN c.trunc_line IS NOT NULL THEN ' (vLLM truncated max_cudagraph_capture_size)' ELSE '' END)
       || (CASE WHEN b.n_above > 0 THEN '; ' || b.n_above || ' of ' || b.n_busy
                || ' busy stats lines ran above it (peak Running ' || b.peak_running || ')' ELSE '' END) AS how,
       CASE WHEN coalesce(b.n_above, 0) >= $warn_share * b.n_busy AND b.n_above > 0 THEN 'critical' ELSE 'warning' END AS severity,
       list_filter([c.trunc_line, s.line_no], lambda x: x IS NOT NULL AND x <> coalesce(b.first_above, c.trunc_line, s.line_no)) AS evidence_lines
FROM ceil c LEFT JOIN seqs s USING (run_id) LEFT JOIN busy b USING (run_id)
WHERE c.ceiling IS NOT NULL
  AND (coalesce(s.max_num_seqs, 0) * (1 + c.k) > c.ceiling OR coalesce(b.n_above, 0) > 0)
