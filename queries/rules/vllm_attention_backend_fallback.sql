-- id: vllm_attention_backend_fallback
-- severity: warning
-- title: Run {run_id}: {what}
-- fix: Install FlashInfer (vLLM's fallback paths are chosen when it or FlashAttention cannot be used), pick a supported backend/dtype (VLLM_ATTENTION_BACKEND / --attention-backend), or upgrade vLLM for this GPU generation (SM120 support arrived late).
-- source: docs/knowledge-base.md R22 — vllm issue #40153 (gpt-oss on SM120: `Using TRITON_ATTN attention backend out of potential backends: ['TRITON_ATTN']` + Marlin MoE), PR #14071, PR #20699; parsers/vllm.toml §3 (`Cannot use FlashAttention-2 backend for Volta and Turing GPUs`, `Cannot use FA version 2 is not supported due to ...`, FlexAttention / XFormers fallbacks) and the sampler notice `FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling` (info on its own). Silent on ROCm (Triton attention is its normal path), for TRITON_MLA (the only dense-MLA kernel on SM120: nothing better to select), for the FA3->FA2 version notice on Blackwell, and for FP8-KV fallbacks (fp8_kv_backend_fallback).
-- engine: vllm
-- Reads line text (issue 11: rules read events and the rollup, not lines): the logger's source file (rocm.py) in the line prefix, which no column keeps: a ROCm run without a platform event.
WITH vr AS (
  SELECT r.run_id FROM runs r
  WHERE r.engine = 'vllm' AND coalesce(r.gpu_vendor, 'nvidia') = 'nvidia'
    AND NOT EXISTS (SELECT 1 FROM events_other p WHERE p.run_id = r.run_id AND p.kind = 'platform' AND lower(p.text) = 'rocm')
    AND NOT EXISTS (SELECT 1 FROM lines_other l WHERE l.run_id = r.run_id AND (l.raw LIKE '%[rocm.py:%' OR l.raw LIKE '% rocm.py:%'))
),
attn AS (
  SELECT e.run_id, e.line_no, 1 AS prio,
         'attention fell back: "Cannot use ' || e.text || rtrim(coalesce(json_extract_string(e.attrs, '$.reason'), ''), '. ') || '"' AS what
  FROM events_other e JOIN vr USING (run_id)
  WHERE e.kind = 'attention_backend_fallback'
    AND coalesce(json_extract_string(e.attrs, '$.reason'), '') NOT ILIKE '%FP8%'
    AND coalesce(json_extract_string(e.attrs, '$.reason'), '') NOT ILIKE '%defaulting to FA version%'
  UNION ALL
  SELECT e.run_id, e.line_no, 2,
         'the generic ' || e.text || ' attention backend was selected'
         || CASE WHEN json_extract_string(e.attrs, '$.candidates') IS NOT NULL
                 THEN ' (the only valid candidate: [' || json_extract_string(e.attrs, '$.candidates') || '])' ELSE '' END
  FROM events_other e JOIN vr USING (run_id)
  WHERE e.kind = 'attention_backend'
    AND (upper(e.text) IN ('TRITON_ATTN', 'FLEX_ATTENTION', 'TORCH_SDPA') OR e.text IN ('Triton', 'FlexAttention', 'Torch SDPA'))
    AND (json_extract_string(e.attrs, '$.candidates') IS NULL
         OR NOT regexp_matches(json_extract_string(e.attrs, '$.candidates'), 'FLASH_ATTN|FLASHINFER'))
),
chosen AS (  -- what was used instead after a "Cannot use" line
  SELECT e.run_id, arg_min(e.text, e.line_no) AS backend FROM events_other e JOIN vr USING (run_id)
  WHERE e.kind = 'attention_backend' GROUP BY e.run_id
),
sampler AS (
  SELECT e.run_id, min(e.line_no) AS line_no FROM events_other e JOIN vr USING (run_id)
  -- vllm_sampler emits sampler_backend with a "fallback" attr for "FlashInfer is not
  -- available. Falling back to the PyTorch-native implementation of top-p & top-k sampling"
  WHERE e.kind = 'sampler_backend' AND json_extract_string(e.attrs, '$.fallback') IS NOT NULL
  GROUP BY e.run_id
),
a1 AS (SELECT * FROM attn QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY prio, line_no) = 1)
SELECT coalesce(a.run_id, s.run_id) AS run_id, coalesce(a.line_no, s.line_no) AS line_no,
       CASE WHEN a.run_id IS NOT NULL THEN
              a.what || CASE WHEN a.prio = 1 AND c.backend IS NOT NULL THEN ' -> using ' || c.backend ELSE '' END
              || CASE WHEN s.run_id IS NOT NULL THEN '; FlashInfer is also missing for top-p/top-k sampling' ELSE '' END
            ELSE 'FlashInfer is not available: top-p & top-k sampling falls back to the PyTorch-native implementation'
       END AS what,
       CASE WHEN a.run_id IS NOT NULL THEN 'warning' ELSE 'info' END AS severity,
       CASE WHEN a.run_id IS NOT NULL AND s.run_id IS NOT NULL THEN [s.line_no] END AS evidence_lines
FROM a1 a FULL OUTER JOIN sampler s USING (run_id)
LEFT JOIN chosen c ON c.run_id = coalesce(a.run_id, s.run_id)
