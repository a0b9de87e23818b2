-- id: died_without_error
-- severity: critical
-- title: Run {run_id}: the log stops {where} — the server never became ready and no error was printed (last milestone line {milestone_line}: {milestone}; {tail_lines} line(s) after it)
-- fix: A silent death during start-up is usually the kernel OOM killer (host RAM, or unified memory on GB10/Grace: check `dmesg | grep -i kill`), an orchestrator kill (readiness/liveness timeout, `docker stop`) or a hang. Check dmesg / the container's exit code, give start-up more host memory or a longer health-check timeout, and re-run with the same flags to see whether it stops at the same point.
-- source: docs/knowledge-base.md §2 start-up failure causes (R30-R34 for hangs vs slow loading); runs.end_state = 'truncated': no ready line, no error line, no kill notice, no serving activity, and the log ends with this run. Real: vllm__sostrowsk__dgx-spark-local-llm__vllm-run1-oom.log (ends right after `torch.compile took 30.61 s`), sglang__TianyangChen357__LLM__sglang.log (ends inside `Capture cuda graph begin ... bs=1`).
-- requires: runs.end_state=truncated
WITH ended AS MATERIALIZED (
  SELECT r.run_id, r.source_id, r.last_line FROM runs r
  WHERE r.end_state = 'truncated' AND r.engine IN ('sglang', 'vllm') AND NOT coalesce(r.ready, false)
    AND r.last_line = (SELECT max(r2.last_line) FROM runs r2 WHERE r2.source_id = r.source_id)
),
busy AS (  -- those that decoded, prefilled or failed; each an IN (the few runs above), not a NOT
           -- EXISTS, which hashed every prefill line of the database (0.3 s on a 2 GB log)
  SELECT run_id FROM decode_primary WHERE run_id IN (SELECT run_id FROM ended)  -- (1/TP of decode_stats)
  UNION SELECT run_id FROM prefill_stats WHERE run_id IN (SELECT run_id FROM ended)
  UNION SELECT run_id FROM errors WHERE fatal AND run_id IN (SELECT run_id FROM ended)
),
cand AS (SELECT * FROM ended WHERE run_id NOT IN (SELECT run_id FROM busy)),
milestone AS (
  SELECT e.run_id, e.line_no, e.kind,
    CASE
      WHEN e.kind = 'weight_shards' THEN 'loading weight shards (' || coalesce(json_extract_string(e.attrs, '$.n') || '/' || json_extract_string(e.attrs, '$.total'), '?') || ')'
      WHEN e.kind = 'weights_begin' THEN 'weight loading started'
      WHEN e.kind IN ('weights_loaded', 'weights_load_time') THEN 'weights loaded'
      WHEN e.kind = 'drafter_load' THEN 'loading the draft model'
      WHEN e.kind IN ('dynamo_transform', 'compile_graph') THEN 'torch.compile in progress'
      WHEN e.kind = 'torch_compile' THEN 'torch.compile finished (' || e.value || ' s)'
      WHEN e.kind = 'compile_cache_hit' THEN 'compiled graphs loaded from cache'
      WHEN e.kind IN ('kv_cache_memory', 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated',
                      'memory_pool_end', 'limits', 'memory_profile', 'memory_profile_detail') THEN 'KV cache sized / allocated'
      WHEN e.kind IN ('cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin') THEN 'CUDA-graph capture began'
      WHEN e.kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end') THEN 'CUDA-graph capture finished'
      WHEN e.kind IN ('init_engine', 'api_server_start') THEN 'engine initialised, API server starting'
      WHEN e.kind = 'jit_compile' THEN 'JIT kernel compilation'
      WHEN e.kind IN ('dist_init_begin', 'dist_init_end', 'nccl_version') THEN 'distributed init'
      ELSE 'launched (version / arguments logged)'
    END AS milestone,
    CASE
      WHEN e.kind = 'weight_shards' OR e.kind = 'weights_begin' THEN 'while loading the weights'
      WHEN e.kind IN ('weights_loaded', 'weights_load_time', 'drafter_load') THEN 'after the weights loaded'
      WHEN e.kind IN ('dynamo_transform', 'compile_graph') THEN 'during torch.compile'
      WHEN e.kind IN ('torch_compile', 'compile_cache_hit') THEN 'after torch.compile, before KV-cache profiling and CUDA-graph capture'
      WHEN e.kind IN ('kv_cache_memory', 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated',
                      'memory_pool_end', 'limits', 'memory_profile', 'memory_profile_detail') THEN 'after the KV cache was allocated'
      WHEN e.kind IN ('cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin') THEN 'inside CUDA-graph capture'
      WHEN e.kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end') THEN 'after CUDA-graph capture (warm-up)'
      WHEN e.kind IN ('init_engine', 'api_server_start') THEN 'while the API server was starting'
      WHEN e.kind = 'jit_compile' THEN 'during JIT kernel compilation'
      WHEN e.kind IN ('dist_init_begin', 'dist_init_end', 'nccl_version') THEN 'during distributed init'
      ELSE 'right after launch'
    END AS "where"
  FROM events_other e JOIN cand c USING (run_id)
  WHERE e.kind IN ('version_banner', 'dist_init_begin', 'dist_init_end', 'nccl_version', 'weights_begin', 'weight_shards',
                   'weights_loaded', 'weights_load_time', 'drafter_load', 'dynamo_transform', 'compile_graph',
                   'torch_compile', 'compile_cache_hit', 'kv_cache_memory', 'kv_cache_tokens', 'max_concurrency',
                   'kv_blocks', 'kv_cache_allocated', 'memory_pool_end', 'limits', 'memory_profile',
                   'memory_profile_detail', 'cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin',
                   'cuda_graph_piecewise_begin', 'cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end',
                   'init_engine', 'api_server_start', 'jit_compile')
),
last_m AS (
  SELECT * FROM milestone QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
)
SELECT c.run_id, m.line_no, m.line_no AS milestone_line, m.milestone, m."where",
       c.last_line - m.line_no AS tail_lines,
       CASE WHEN c.last_line <> m.line_no THEN [c.last_line] END AS evidence_lines
FROM cand c JOIN last_m m USING (run_id)
