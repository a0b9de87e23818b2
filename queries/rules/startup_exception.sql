-- id: startup_exception
-- severity: critical
-- title: Run {run_id} failed to start{stage}: {exc_type}: {exc_message}{unknown}
-- fix: Read the traceback at the quoted line: it names the failing component (kernel compile, model code, config validation). Typical fixes: a backend/dtype the GPU supports (e.g. no fp8e4nv on Ampere/RDNA: use a bf16 KV cache or another attention backend), an engine version that supports the model/quantization, or corrected launch arguments. An NVSHMEM failure (DeepEP all-to-all: `Peer GPU N is not accessible`, `nvshmem initialization failed`) means a rank could not map a peer GPU's memory: across nodes NVSHMEM needs a remote transport (InfiniBand with nvidia_peermem or GDRCopy; NVSHMEM_REMOTE_TRANSPORT, NVSHMEM_IB_ENABLE_IBGDA), within a node P2P access (`nvidia-smi topo -p2p r`), and every node needs the same --nnodes/--dist-init-addr with its own --node-rank.
-- source: docs/knowledge-base.md §2 start-up failure causes (catch-all after the specific ones: vllm_kv_too_small_for_max_model_len, startup_free_memory_below_utilization, startup_oom, cuda_graph_capture_oom, sgl_mem_fraction_too_low, illegal_memory_access, watchdog timeouts). The root cause is the run's one root cause (runs.end_line/end_reason, chosen once by derive/end_state.py for ingest, diagnose and report alike): the first failure in time across ranks and nodes, preferring records that name a cause over wrappers (`Received sigquit from a child process`, `Engine core initialization failed`, EngineDeadError, worker-died notices) and consequences (EOFError on a peer); a traceback no pattern marked fatal counts when it is the unready run's last word (a kernel AssertionError during warm-up). When only a wrapper was logged the finding says so. Real: the 2x RTX 3090 Triton `CompilationError` (fp8e4nv not supported) boot failure; issue 12's two-node start-up whose root cause is NVSHMEM's unstamped `Peer GPU 8 is not accessible, exiting`, not the EOFError on another rank.
-- requires: runs.end_state=startup_failed
WITH failed AS (
  SELECT run_id, ready_line, end_line FROM runs WHERE end_state = 'startup_failed'
),
root AS (  -- the run's one root cause (runs.end_line, derive/end_state.py): first failure in time across ranks
  SELECT e.run_id, e.line_no, e.last_line, e.kind, e.message, e.traceback,
         coalesce(e.exc_type, nullif(regexp_extract(e.message, '^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))', 1), ''),
                  e.kind, 'error') AS exc,
         coalesce(e.kind, '') IN ('child_failed', 'scheduler_dead', 'worker_died', 'engine_init_failed', 'engine_dead',
                                  'engine_core_fatal_error', 'engine_core_failed_to_start', 'output_handler_failed', 'fatal_signal')
           AND e.exc_type IS NULL AS wrapper_only
  FROM errors e JOIN failed f ON f.run_id = e.run_id AND f.end_line = e.line_no
),
covered AS (  -- causes that have their own rule
  SELECT run_id FROM root
  WHERE message ILIKE '%out of memory%' OR exc ILIKE '%OutOfMemory%' OR traceback ILIKE '%CUDA out of memory%'
     OR message LIKE '%Free memory on device%less than desired GPU memory utilization%'
     OR message LIKE '%max seq len%'
     OR message LIKE '%Not enough memory. Please try to increase --mem-fraction-static%'
     OR message ILIKE '%illegal memory access%'
     OR kind IN ('watchdog_timeout', 'nccl_watchdog_timeout', 'cuda_graph_capture_failed', 'kv_alloc_oom',
                 'not_enough_memory', 'illegal_memory_access', 'insufficient_free_memory', 'kv_cache_too_small')
),
exact AS (  -- the exception line itself, and the last line of a multi-line message (Triton's ValueError(...))
  SELECT r.run_id,
    -- found in the record's own text: its traceback holds one line per physical line (no line text scanned)
    r.line_no - 1 + list_position(list_transform(string_split(coalesce(r.traceback, r.message, ''), chr(10)),
                                                 lambda x: x LIKE '%' || r.exc || ':%'), true) AS line_no,
    nullif(trim(regexp_extract(coalesce(r.traceback, ''), '\n\s*(\w+(?:Error|Exception)\(.*\))\s*$', 1)), '') AS tail
  FROM root r
),
milestone AS (
  SELECT run_id, line_no,
    CASE
      WHEN kind IN ('weights_begin', 'weight_shards') THEN 'while loading the weights'
      WHEN kind IN ('weights_loaded', 'weights_load_time', 'drafter_load') THEN 'after the weights loaded'
      WHEN kind IN ('dynamo_transform', 'compile_graph') THEN 'during torch.compile'
      WHEN kind IN ('torch_compile', 'compile_cache_hit') THEN 'after torch.compile'
      WHEN kind IN ('kv_cache_memory', 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated',
                    'memory_pool_end', 'limits') THEN 'after the KV cache was allocated'
      WHEN kind IN ('cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin') THEN 'during CUDA-graph capture'
      WHEN kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end') THEN 'after CUDA-graph capture'
      ELSE 'early in start-up'
    END AS stage
  FROM events_other
  WHERE kind IN ('weights_begin', 'weight_shards', 'weights_loaded', 'weights_load_time', 'drafter_load',
                 'dynamo_transform', 'compile_graph', 'torch_compile', 'compile_cache_hit', 'kv_cache_memory',
                 'kv_cache_tokens', 'max_concurrency', 'kv_blocks', 'kv_cache_allocated', 'memory_pool_end', 'limits',
                 'cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin',
                 'cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end', 'dist_init_begin', 'version_banner')
)
SELECT r.run_id, coalesce(x.line_no, r.line_no) AS line_no,
       regexp_replace(r.exc, '^.*\.', '') AS exc_type,
       left(trim(regexp_replace(regexp_replace(r.message, '^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt):\s*', ''), '\s+', ' ', 'g'))
            || CASE WHEN x.tail IS NOT NULL AND strpos(r.message, x.tail) = 0 THEN ' … ' || x.tail ELSE '' END, 400) AS exc_message,
       r.exc AS exception,
       coalesce(' ' || (SELECT m.stage FROM milestone m WHERE m.run_id = r.run_id AND m.line_no < r.line_no
                        ORDER BY m.line_no DESC LIMIT 1),
                CASE WHEN r.traceback ILIKE '%cuda_graph%' AND (r.traceback ILIKE '%capture%' OR r.traceback ILIKE '%piecewise%')
                       THEN ' during CUDA-graph capture (per the traceback)'
                     WHEN r.traceback ILIKE '%load_weights%' THEN ' while loading the weights (per the traceback)' END,
                '') AS stage,
       CASE WHEN r.wrapper_only THEN ' — no record names the root cause (only this wrapper was logged): look at the other ranks'' output, dmesg (Xid, OOM killer) and the launcher' ELSE '' END AS unknown,
       CASE WHEN x.line_no IS NOT NULL AND x.line_no <> r.line_no THEN [r.line_no] END AS evidence_lines
FROM root r LEFT JOIN exact x USING (run_id)
WHERE r.run_id NOT IN (SELECT run_id FROM covered)
