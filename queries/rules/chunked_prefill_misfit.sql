-- id: chunked_prefill_misfit
-- severity: info
-- title: Run {run_id}: {detail} — small prefill chunks trade TTFT and throughput for inter-token latency
-- advice: chunked_prefill_size=raise, max_num_batched_tokens=raise
-- fix: For throughput/TTFT raise the prefill chunk if memory allows; keep it small only for a strict ITL SLO or to avoid prefill OOM.
-- fix.sglang: Raise --chunked-prefill-size to 8192/16384; if it was kept small to avoid a prefill OOM, relieve --mem-fraction-static pressure instead where possible.
-- fix.vllm: Raise --max-num-batched-tokens above 8192; if it was kept small to avoid a prefill OOM, leave more headroom with a lower --gpu-memory-utilization instead where possible.
-- params: max_chunk=2048, min_full_chunks=2, min_prompts=3, min_backlog_lines=3
-- source: docs/knowledge-base.md R37 (vLLM optimization docs: max_num_batched_tokens > 8192 for throughput; vllm-project/vllm#10544; SGLang hyperparameter tuning: 4096/2048 only to avoid prefill OOM). SGLang: a prompt prefilled as >= min_full_chunks consecutive single-sequence "Prefill batch" lines with #new-token == chunked_prefill_size; vLLM: "Chunked prefill is enabled with max_num_batched_tokens=N" (N <= max_chunk) and stats lines with requests Waiting while prompts are being processed (a prefill backlog).
WITH sgl_chunk AS (
  SELECT run_id, max(try_cast(value AS BIGINT)) AS chunk FROM config
  WHERE key = 'chunked_prefill_size' GROUP BY run_id
),
p AS (
  SELECT p.run_id, p.line_no, (p.new_seqs = 1 AND p.new_tokens = c.chunk) AS full_chunk, c.chunk
  FROM prefill_stats p JOIN sgl_chunk c USING (run_id)
  WHERE p.primary_rank AND c.chunk > 0 AND c.chunk <= $max_chunk
),
isl AS (
  SELECT run_id, chunk, line_no, full_chunk,
         row_number() OVER (PARTITION BY run_id ORDER BY line_no)
         - row_number() OVER (PARTITION BY run_id, full_chunk ORDER BY line_no) AS grp
  FROM p
),
prompts AS (
  SELECT run_id, chunk, grp, min(line_no) AS line_no, count(*) AS n_chunks
  FROM isl WHERE full_chunk GROUP BY run_id, chunk, grp HAVING count(*) >= $min_full_chunks
),
sgl AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n_prompts, max(n_chunks) + 1 AS max_chunks, any_value(chunk) AS chunk,
         list(line_no ORDER BY line_no)[2:5] AS lines
  FROM prompts GROUP BY run_id HAVING count(*) >= $min_prompts
),
v_budget AS (
  SELECT run_id, arg_max(value, line_no) AS budget, arg_max(line_no, line_no) AS line_no
  FROM events_other WHERE kind = 'chunked_prefill' GROUP BY run_id
),
v AS (
  SELECT b.run_id, b.line_no, b.budget, count(*) AS n_backlog, max(d.queued_reqs) AS max_waiting,
         list(d.line_no ORDER BY d.line_no)[1:5] AS lines
  FROM v_budget b JOIN decode_primary d USING (run_id)
  WHERE b.budget <= $max_chunk AND d.primary_rank AND d.queued_reqs > 0 AND d.prompt_tok_s > 0
  GROUP BY b.run_id, b.line_no, b.budget HAVING count(*) >= $min_backlog_lines
)
SELECT run_id, line_no,
       n_prompts || ' prompts were prefilled in ' || (1 + $min_full_chunks) || '+ chunks (up to ' || max_chunks
         || ') of chunked_prefill_size=' || chunk || ' tokens' AS detail,
       chunk, n_prompts, lines AS evidence_lines
FROM sgl
UNION ALL
SELECT run_id, line_no,
       'prefill budget max_num_batched_tokens=' || CAST(budget AS BIGINT) || ' with requests waiting during prefill on '
         || n_backlog || ' stats lines (up to ' || max_waiting || ' waiting)' AS detail,
       CAST(budget AS BIGINT), NULL, lines
FROM v
