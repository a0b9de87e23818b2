-- id: vllm_cudagraph_mode_downgraded
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: vLLM downgraded cudagraph_mode to {mode_to} ({why}) — decode with full CUDA graphs is off, attention runs outside the graph every step
-- fix: Pick an attention backend that supports full CUDA graphs together with speculative decoding (FLASH_ATTN / FLASHINFER on recent vLLM; see the backend's "cudagraph support" in the vLLM docs), or measure whether speculative decoding still pays once the graphs are piecewise: at low acceptance it often does not.
-- engine: vllm
-- source: issue 12 (a vLLM EAGLE-3 run: "FULL_AND_PIECEWISE is not supported with spec-decode for attention backend ... setting cudagraph_mode=PIECEWISE", not raised before); vllm/config/compilation.py + v1/worker/gpu_model_runner.py resolve_cudagraph_mode_and_sizes (the backend's AttentionCGSupport decides, the mode is lowered with this WARNING); docs/knowledge-base.md R10 (decode outside CUDA graphs costs per-step launch overhead).
-- requires: events_other.kind=cudagraph_mode_downgraded
WITH w AS (  -- typed at ingest (parsers/vllm.toml vllm_cudagraph_mode_downgraded): text = the new mode
  SELECT run_id, min(line_no) AS line_no, arg_min(message, line_no) AS msg, arg_min(text, line_no) AS mode_to
  FROM events_other WHERE kind = 'cudagraph_mode_downgraded' AND run_id IS NOT NULL
  GROUP BY run_id
)
SELECT w.run_id, w.line_no, coalesce(nullif(w.mode_to, ''), 'a lower mode') AS mode_to,
       CASE WHEN w.msg ILIKE '%spec%decod%' THEN 'not supported with speculative decoding for this attention backend'
            ELSE 'not supported by this attention backend' END AS why
FROM w JOIN runs r USING (run_id) WHERE r.engine = 'vllm'
