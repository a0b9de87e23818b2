-- id: low_prefix_cache_hit
-- severity: info
-- title: Run {run_id}: the prefix cache served {hit_pct}% of {prompt_tokens} prompt tokens on prompt-heavy traffic ({prompt_per_output} prompt tokens per generated token) — little prompt work is reused, so shared system prompts and history, if any, are recomputed
-- fix: Keep prefixes byte-stable (no timestamps or per-request ids at the top of the prompt, stable tool order), route a conversation to the same replica/DP rank (cache-aware routing) and give the cache more KV memory.
-- fix.sglang: Use --schedule-policy lpm and HiCache; check that KV pressure is not evicting the cache (sgl_kv_pool_full_retract).
-- fix.vllm: Check that KV pressure is not evicting the cache (vllm_preemption).
-- params: max_hit_rate=0.2, min_prompt_tokens=20000, min_prompt_output_ratio=4, min_lines=20
-- source: docs/knowledge-base.md R35 (sgl-project/sglang#19746: 50K shared prefix, TTFT p50 -90 % and +29 % throughput once the cache hit; vllm-project/vllm#31920; 1CatAI/1Cat-vLLM#90 on hit-rate semantics). Hit rate: SGLang #cached-token / (#new-token + #cached-token) over all prefill lines (token-weighted); vLLM's rolling "Prefix cache hit rate" at the last busy stats line (V0: GPU prefix cache hit rate). KB threshold ~20 %; info because a log cannot show whether the prompts share prefixes (the KB's warning applies to multi-turn/agent traffic). Prompt-heavy traffic (>= min_prompt_output_ratio prompt tokens per generated token, over >= min_prompt_tokens and >= min_lines prefill / busy stats lines) is the signature of chat-history / agent / RAG workloads where prefixes repeat; random-prompt benchmarks (about 1:1) stay silent.
WITH sgl_p AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n,
         sum(coalesce(new_tokens, 0) + coalesce(cached_tokens, 0)) AS prompt_tokens, sum(coalesce(cached_tokens, 0)) AS cached
  FROM prefill_stats WHERE primary_rank AND run_id IS NOT NULL GROUP BY run_id
),
sgl_g AS (  -- each decode line covers decode_log_interval steps, one token per running request per step
  SELECT d.run_id, sum(d.running_reqs) * coalesce(
           (SELECT max(try_cast(c.value AS INT)) FROM config c WHERE c.run_id = d.run_id AND c.key = 'decode_log_interval'), 40)
         AS gen_tokens
  FROM decode_primary d WHERE d.primary_rank GROUP BY d.run_id
),
sgl AS (
  SELECT p.run_id, p.line_no, p.prompt_tokens, p.cached::DOUBLE / nullif(p.prompt_tokens, 0) AS hit, g.gen_tokens,
         p.n AS n_lines
  FROM sgl_p p LEFT JOIN sgl_g g USING (run_id) JOIN runs r USING (run_id)
  WHERE r.engine = 'sglang'
    AND NOT EXISTS (SELECT 1 FROM config c WHERE c.run_id = p.run_id AND c.key = 'disable_radix_cache' AND c.value = 'True')
),
v AS (
  SELECT d.run_id, d.line_no, d.prompt_tok_s, d.gen_tok_s, d.prefix_hit_rate,
         least(greatest(coalesce(epoch(d.ts) - epoch(lag(d.ts) OVER (PARTITION BY d.run_id, d.engine_idx ORDER BY d.line_no)), 10), 1), 60) AS dt
  FROM decode_primary d JOIN runs r USING (run_id)
  WHERE d.primary_rank AND r.engine = 'vllm'
),
v0_hit AS (  -- V0 prints "Prefix cache hit rate: GPU: x%" on its own line
  SELECT run_id, arg_max(CASE WHEN value > 1 THEN value / 100 ELSE value END, line_no) AS hit
  FROM events_other WHERE kind = 'prefix_cache_hit' GROUP BY run_id
),
vl AS (
  SELECT v.run_id, min(v.line_no) FILTER (WHERE v.prompt_tok_s > 0) AS line_no,
         count(*) FILTER (WHERE v.prompt_tok_s > 0) AS n_lines,
         sum(v.prompt_tok_s * v.dt) AS prompt_tokens, sum(v.gen_tok_s * v.dt) AS gen_tokens,
         coalesce(arg_max(v.prefix_hit_rate, v.line_no) FILTER (WHERE v.prefix_hit_rate IS NOT NULL AND v.prompt_tok_s > 0),
                  any_value(h.hit)) AS hit
  FROM v LEFT JOIN v0_hit h USING (run_id)
  WHERE NOT EXISTS (SELECT 1 FROM config c WHERE c.run_id = v.run_id AND c.key = 'enable_prefix_caching'
                    AND c.origin = 'engine_config' AND c.value LIKE 'False%')
  GROUP BY v.run_id
),
allr AS (
  SELECT run_id, line_no, prompt_tokens, hit, gen_tokens, n_lines FROM sgl
  UNION ALL
  SELECT run_id, line_no, prompt_tokens, hit, gen_tokens, n_lines FROM vl
)
SELECT run_id, line_no, round(100 * hit, 1) AS hit_pct, CAST(round(prompt_tokens) AS BIGINT) AS prompt_tokens,
       round(prompt_tokens / nullif(gen_tokens, 0), 1) AS prompt_per_output
FROM allr
WHERE hit IS NOT NULL AND hit < $max_hit_rate AND n_lines >= $min_lines AND prompt_tokens >= $min_prompt_tokens
  AND prompt_tokens >= $min_prompt_output_ratio * coalesce(gen_tokens, 0)
