-- run_milestones: startup and shutdown milestones of one run (rank 0), in log order.
SELECT line_no, ts, kind, value, text
FROM events_other
WHERE run_id = $run_id AND coalesce(tp_rank, 0) = 0
  AND kind IN ('weights_begin', 'weights_loaded', 'kv_cache_allocated', 'kv_cache_tokens',
               'cuda_graph_begin', 'cuda_graph_end', 'torch_compile', 'init_engine', 'server_ready',
               'app_startup_complete', 'shutdown', 'attention_backend', 'attention_backend_default',
               'spec_max_running_reset')
ORDER BY line_no
LIMIT $limit
