-- id: prefix_cache_disabled
-- severity: info
-- title: Run {run_id}: prefix caching is off ({how}) on a server that took {n_prefill} prefill(s) — repeated system prompts and conversation history are recomputed on every request
-- fix: Re-enable it unless the workload has no reuse at all; for random-prompt benchmarks the bookkeeping can cost more than it saves. Hybrid (Mamba/linear-attention) models: check the engine version's support before forcing it.
-- fix.sglang: Drop --disable-radix-cache.
-- fix.vllm: Pass --enable-prefix-caching.
-- source: docs/knowledge-base.md R36 (sgl-project/sglang#1639, #19746). Evidence: disable_radix_cache=True in SGLang's server_args, enable_prefix_caching=False in vLLM's engine config (V0 default; V1 default for hybrid models). Only servers that took traffic (prefill lines or prompt throughput): an idle server recomputes nothing.
WITH off AS (
  SELECT c.run_id, min(c.line_no) AS line_no,
         bool_or(c.key = 'disable_radix_cache') AS sglang_flag
  FROM config c
  WHERE (c.key = 'disable_radix_cache' AND c.value = 'True')
     OR (c.key = 'enable_prefix_caching' AND c.origin = 'engine_config' AND c.value LIKE 'False%')
  GROUP BY c.run_id
),
traffic AS (
  SELECT run_id, count(*) AS n FROM (
    SELECT run_id FROM prefill_stats WHERE primary_rank
    UNION ALL SELECT run_id FROM decode_primary WHERE primary_rank AND prompt_tok_s > 0) GROUP BY run_id
),
hybrid AS (
  SELECT r.run_id FROM runs r
  WHERE regexp_matches(coalesce(r.model_arch, '') || ' ' || coalesce(r.model, ''),
                       '(?i)qwen3[._-]?[5-9]|qwen3-?next|mamba|jamba|nemotron-?h|granite-?4|falcon-?h|lfm2|hybrid')
     OR EXISTS (SELECT 1 FROM events_other e WHERE e.run_id = r.run_id AND e.kind = 'mamba_cache_allocated')
)
SELECT o.run_id, o.line_no, t.n AS n_prefill,
       CASE WHEN o.sglang_flag THEN 'disable_radix_cache=True in server_args'
            WHEN r.format_era LIKE '%V0%' THEN 'vLLM V0, where it is off unless --enable-prefix-caching is given'
            WHEN o.run_id IN (SELECT run_id FROM hybrid) THEN 'vLLM leaves it off for this hybrid (Mamba/linear-attention) model unless asked'
            ELSE 'enable_prefix_caching=False in the engine config' END AS how
FROM off o JOIN traffic t USING (run_id) JOIN runs r USING (run_id)
