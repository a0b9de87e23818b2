-- id: cuda_graph_capture_oom
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: CUDA out of memory while capturing CUDA graphs{phase} — the server never became ready ({detail})
-- advice: mem_fraction_static=lower, gpu_memory_utilization=lower, cuda_graph_max_bs=lower
-- fix: Graph buffers live outside the static KV pool: leave them room, capture fewer batch sizes, and with speculative decoding shrink the draft tree (num_steps 3, topk 1, draft_tokens 4).
-- fix.sglang: Lower --mem-fraction-static and --cuda-graph-max-bs.
-- fix.vllm: Lower --gpu-memory-utilization and the capture sizes (--max-cudagraph-capture-size / cudagraph_capture_sizes).
-- source: docs/knowledge-base.md R05 — sglang issue #5285, PR #3430, PR #5893 (DeepSeek TP8 on H200 needs ~6.2 GB of graph memory at bs 256); vllm PR #57595; sglang docs speculative_decoding.md "OOM troubleshooting". Evidence: SGLang `Capture cuda graph failed: CUDA out of memory`, or a CUDA OOM after a capture-begin line (`Capture cuda graph begin`, `Capturing CUDA graphs`, `Capturing batches`) with no capture-end line in between, before the server is ready.
WITH oom0 AS (
  SELECT e.run_id, e.line_no, e.last_line, e.kind, e.traceback, e.message AS record_message,
         CASE WHEN e.message ILIKE '%out of memory%' THEN e.message
              ELSE regexp_extract(e.traceback, '([^\n]*CUDA out of memory[^\n]*)', 1) END AS message
  FROM errors e
  WHERE e.fatal AND (e.message ILIKE '%out of memory%' OR e.exc_type ILIKE '%OutOfMemory%'
                     OR e.traceback ILIKE '%CUDA out of memory%')
),
oom AS (  -- point at the OOM line itself (a wrapper record may start at "EngineCore failed to start."):
          -- the record's traceback holds one line of text per physical line (no line text scanned)
  SELECT o.run_id, coalesce(o.line_no - 1 + list_position(list_transform(
                              string_split(coalesce(o.traceback, o.record_message, ''), chr(10)),
                              lambda x: x ILIKE '%graph failed%out of memory%'), true),
                            o.line_no - 1 + list_position(list_transform(
                              string_split(coalesce(o.traceback, o.record_message, ''), chr(10)),
                              lambda x: x ILIKE '%out of memory%'), true), o.line_no) AS line_no,
         o.kind, o.message
  FROM oom0 o
),
cap_begin AS (
  SELECT run_id, line_no, CASE WHEN kind = 'cuda_graph_draft_begin' THEN ' (draft model)' ELSE '' END AS phase
  FROM events_other WHERE kind IN ('cuda_graph_begin', 'cuda_graph_bs', 'cuda_graph_draft_begin', 'cuda_graph_piecewise_begin')
  UNION ALL
  SELECT run_id, line_no, '' FROM events_other  -- capture progress bars (common.toml cuda_graph_capture_bar)
  WHERE kind = 'cuda_graph_capture_progress'
),
cap_end AS (
  SELECT run_id, line_no FROM events_other
  WHERE kind IN ('cuda_graph_end', 'cuda_graph_draft_end', 'cuda_graph_piecewise_end', 'server_ready',
                 'app_startup_complete', 'api_server_start')
),
hit AS (
  SELECT o.run_id, o.line_no, o.message, b.phase,
         o.kind = 'cuda_graph_capture_failed' AS explicit
  FROM oom o
  JOIN runs r USING (run_id)
  LEFT JOIN LATERAL (
    SELECT b.phase, b.line_no FROM cap_begin b WHERE b.run_id = o.run_id AND b.line_no < o.line_no
    ORDER BY b.line_no DESC LIMIT 1) b ON true
  WHERE (r.ready_line IS NULL OR o.line_no < r.ready_line)
    AND (o.kind = 'cuda_graph_capture_failed'
         OR (b.line_no IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM cap_end x WHERE x.run_id = o.run_id AND x.line_no > b.line_no AND x.line_no < o.line_no)))
)
SELECT run_id, line_no, coalesce(phase, '') AS phase,
       coalesce(nullif(regexp_extract(message, '(Tried to allocate [\d.]+ [KMG]i?B)', 1), ''), 'CUDA out of memory')
         || coalesce(', ' || nullif(regexp_extract(message, '(GPU \d+ has a total capacity of [\d.]+ [KMG]i?B of which [\d.]+ [KMG]i?B is free)', 1), ''), '')
         AS detail,
       list(line_no) OVER (PARTITION BY run_id ORDER BY explicit DESC, line_no ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS evidence_lines
FROM hit
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY explicit DESC, line_no) = 1
