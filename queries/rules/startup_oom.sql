-- id: startup_oom
-- severity: critical
-- title: Run {run_id} failed to start: CUDA out of memory {stage} ({detail})
-- fix: The model (weights + activations of the profiling/warm-up pass) does not fit next to what is already on the GPU: use more GPUs (TP/PP), a quantized checkpoint, a shorter context or a smaller prefill batch; lower the memory fraction only if other processes share the GPU; check nvidia-smi for leftover processes.
-- fix.sglang: Knobs: --mem-fraction-static, --context-length, --chunked-prefill-size.
-- fix.vllm: Knobs: --gpu-memory-utilization, --max-model-len, --max-num-batched-tokens.
-- source: docs/knowledge-base.md §2 failure causes (startup) and R09 — torch `CUDA out of memory. Tried to allocate ...` before the ready line (parsers/vllm.toml §10, parsers/sglang.toml "Startup"); OOMs inside CUDA-graph capture are cuda_graph_capture_oom (R05) and are excluded here.
-- requires: runs.end_state=startup_failed
WITH oom0 AS (
  SELECT e.run_id, e.line_no, e.last_line, e.kind, e.traceback, e.message AS record_message,
         CASE WHEN e.message ILIKE '%out of memory%' THEN e.message
              ELSE regexp_extract(e.traceback, '([^\n]*CUDA out of memory[^\n]*)', 1) END AS message
  FROM errors e JOIN runs r USING (run_id)
  WHERE e.fatal AND (e.message ILIKE '%out of memory%' OR e.exc_type ILIKE '%OutOfMemory%'
                     OR e.traceback ILIKE '%CUDA out of memory%')
    AND coalesce(e.kind, '') NOT IN ('cuda_graph_capture_failed', 'kv_alloc_oom')
    AND (r.ready_line IS NULL OR e.line_no < r.ready_line)
    AND r.end_state = 'startup_failed'
),
oom AS (  -- point at the OOM line itself (a wrapper record may start at "EngineCore failed to start."):
          -- the record's traceback holds one line of text per physical line (no line text scanned)
  SELECT o.run_id, coalesce(o.line_no - 1 + list_position(list_transform(
                              string_split(coalesce(o.traceback, o.record_message, ''), chr(10)),
                              lambda x: x ILIKE '%out of memory%'), true), o.line_no) AS line_no,
         o.kind, o.message
  FROM oom0 o
),
cap_begin AS (
  SELECT run_id, line_no FROM events_other
  WHERE kind IN ('cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin')
  UNION ALL
  SELECT run_id, line_no FROM events_other  -- capture progress bars (common.toml cuda_graph_capture_bar)
  WHERE kind = 'cuda_graph_capture_progress'
),
cap_end AS (
  SELECT run_id, line_no FROM events_other
  WHERE kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end')
),
milestone AS (
  SELECT run_id, line_no,
    CASE
      WHEN kind IN ('weights_begin', 'weight_shards') THEN 'while loading the weights'
      WHEN kind IN ('weights_loaded', 'weights_load_time', 'drafter_load') THEN 'after the weights loaded (profiling / KV-cache sizing)'
      WHEN kind IN ('dynamo_transform', 'compile_graph') THEN 'during torch.compile'
      WHEN kind IN ('torch_compile', 'compile_cache_hit') THEN 'after torch.compile (memory profiling / KV-cache allocation)'
      WHEN kind IN ('kv_cache_memory', 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated',
                    'memory_pool_end', 'limits', 'memory_profile', 'memory_profile_detail') THEN 'after the KV cache was sized'
      WHEN kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end') THEN 'after CUDA-graph capture (warm-up)'
      WHEN kind IN ('dist_init_begin', 'dist_init_end', 'nccl_version') THEN 'during distributed init'
      ELSE 'early in start-up'
    END AS stage
  FROM events_other
  WHERE kind IN ('weights_begin', 'weight_shards', 'weights_loaded', 'weights_load_time', 'drafter_load',
                 'dynamo_transform', 'compile_graph', 'torch_compile', 'compile_cache_hit', 'kv_cache_memory',
                 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated', 'memory_pool_end', 'limits',
                 'memory_profile', 'memory_profile_detail', 'cuda_graph_end', 'cuda_graph_draft_end',
                 'cuda_graph_piecewise_end', 'dist_init_begin', 'dist_init_end', 'version_banner')
),
hit AS (
  SELECT o.*,
    (SELECT m.stage FROM milestone m WHERE m.run_id = o.run_id AND m.line_no < o.line_no
     ORDER BY m.line_no DESC LIMIT 1) AS stage
  FROM oom o
  WHERE NOT EXISTS (  -- inside a capture window: that is cuda_graph_capture_oom
    SELECT 1 FROM cap_begin b WHERE b.run_id = o.run_id AND b.line_no < o.line_no
      AND NOT EXISTS (SELECT 1 FROM cap_end x WHERE x.run_id = o.run_id AND x.line_no > b.line_no AND x.line_no < o.line_no))
)
SELECT run_id, line_no, coalesce(stage, 'early in start-up') AS stage,
       coalesce(nullif(regexp_extract(message, '(Tried to allocate [\d.]+ [KMG]i?B)', 1), ''), left(message, 160))
         || coalesce('; ' || nullif(regexp_extract(message, '(GPU \d+ has a total capacity of [\d.]+ [KMG]i?B of which [\d.]+ [KMG]i?B is free)', 1), ''), '')
         AS detail,
       list(line_no) OVER (PARTITION BY run_id ORDER BY line_no ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS evidence_lines
FROM hit
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no) = 1
