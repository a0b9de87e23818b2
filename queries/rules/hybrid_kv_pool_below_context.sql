-- id: hybrid_kv_pool_below_context
-- severity: warning
-- title: Run {run_id}: the full-attention KV pool of this hybrid model holds {kv_tokens} tokens, below the context length {context_len} ({ratio}x) — one long request fills it and everything else waits or is preempted
-- advice: context_length=lower, max_model_len=lower
-- fix: Lower the context length to what requests need, give the KV cache more memory (fewer CUDA-graph sizes), store it in FP8, or add TP. On hybrid models the Mamba / linear-attention state takes a fixed share of memory first, so the full-attention pool is smaller than for a dense model of the same size.
-- fix.sglang: Context: --context-length; memory: --mem-fraction-static.
-- fix.vllm: Context: --max-model-len; memory: --gpu-memory-utilization.
-- source: issue 12 (a hybrid model whose full-attention KV pool, 32,997 tokens, sat below its 65,536-token context, not raised); docs/knowledge-base.md R13 (sgl_kv_capacity_vs_context: the pool is shared by all requests) and vLLM's own case (max_model_len above the KV cache) is engine_stalled_with_waiting's. Hybrid evidence: SGLang `Mamba Cache is allocated` / swa or mamba usage on the decode lines / hybrid linear-attention backend; Runs SGLang's own limits line already reports are left to sgl_kv_capacity_vs_context.
WITH block_size AS MATERIALIZED (  -- the kind alone first (MATERIALIZED): a text filter pushed into the scan of events
  -- decompressed the text of every row (40 ms -> 3 ms on a 200 MB log)
  SELECT run_id, message FROM events_other WHERE kind = 'attention_block_size' AND run_id IS NOT NULL
),
hybrid AS (
  SELECT DISTINCT run_id FROM events_other WHERE kind IN ('mamba_cache_allocated', 'linear_attention_backend') AND run_id IS NOT NULL
  UNION SELECT DISTINCT run_id FROM decode_primary WHERE swa_usage IS NOT NULL OR mamba_usage IS NOT NULL
  -- vLLM: the attention block size notice of a hybrid model names its full attention layers / mamba pages
  UNION SELECT DISTINCT run_id FROM block_size
    WHERE message LIKE '%full attention layers%' OR message LIKE '%mamba page size%' OR message ILIKE '%hybrid%'
  -- SGLang: a server_args with mamba cache settings (config keys, not the line's text)
  UNION SELECT DISTINCT run_id FROM config WHERE run_id IS NOT NULL
    AND (key LIKE '%mamba_cache%' OR value LIKE '%mamba_cache%' OR value ILIKE '%hybrid kv cache%'
         OR value ILIKE '%HybridKVCache%')
),
sgl_limits AS (
  SELECT DISTINCT run_id FROM events_other WHERE kind = 'limits'
    AND value < TRY_CAST(json_extract_string(attrs, '$.context_len') AS DOUBLE)
),
pool AS (  -- the full-attention pool as allocated ("KV Cache is allocated. #tokens: N"), the first (target) one
  SELECT run_id, arg_min(value, line_no) AS kv_tokens, min(line_no) AS line_no FROM events_other
  WHERE kind = 'kv_cache_allocated' AND value > 0 GROUP BY run_id
)
SELECT r.run_id, p.line_no, CAST(p.kv_tokens AS BIGINT) AS kv_tokens, r.context_len,
       round(p.kv_tokens / r.context_len, 2) AS ratio
FROM runs r JOIN hybrid h USING (run_id) JOIN pool p USING (run_id)
WHERE r.engine = 'sglang' AND r.context_len > 0 AND p.kv_tokens < r.context_len
  AND r.run_id NOT IN (SELECT run_id FROM sgl_limits)
