-- id: fp8_kv_backend_fallback
-- severity: warning
-- title: Run {run_id}: the FP8 KV cache ({kv_dtype}) forced a slower attention backend: {what}
-- fix: Use kv_cache_dtype fp8_e4m3 (FlashAttention3 supports only e4m3), pick a backend with native FP8 KV (FlashInfer), or keep a bf16 KV cache if memory is not the limit.
-- fix.sglang: FlashInfer: --attention-backend flashinfer.
-- fix.vllm: FlashInfer: VLLM_ATTENTION_BACKEND=FLASHINFER (or --attention-backend flashinfer on recent vLLM).
-- source: docs/knowledge-base.md R23 — sglang issue #18550 (`FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.`), vllm PR #7798 (`Cannot use FlashAttention-2 backend for FP8 KV cache.` + `Please use FlashInfer backend with FP8 KV Cache for better performance`), flashinfer issue #1753 (FP8 KV attention kernels 12-35 % slower even when memory is saved).
-- requires: events_other.kind=fp8_kv_backend_fallback|attention_backend_fallback|fp8_kv_flashinfer_hint
WITH ev AS (
  SELECT e.run_id, e.line_no, 'SGLang switched the attention backend to ' || e.text AS what
  FROM events_other e WHERE e.kind = 'fp8_kv_backend_fallback'
  UNION ALL
  SELECT e.run_id, e.line_no, '"Cannot use ' || e.text || rtrim(json_extract_string(e.attrs, '$.reason'), '. ') || '"'
  FROM events_other e WHERE e.kind = 'attention_backend_fallback' AND json_extract_string(e.attrs, '$.reason') ILIKE '%FP8%'
  UNION ALL
  SELECT e.run_id, e.line_no, 'vLLM asks for FlashInfer with an FP8 KV cache'
  FROM events_other e WHERE e.kind = 'fp8_kv_flashinfer_hint'  -- parsers/vllm.toml vllm_fp8_kv_flashinfer_hint
),
one AS (SELECT * FROM ev QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no) = 1),
chosen AS (
  SELECT e.run_id, arg_min(e.text, e.line_no) AS backend FROM events_other e
  WHERE e.kind = 'attention_backend' GROUP BY e.run_id
)
SELECT o.run_id, o.line_no, coalesce(r.kv_cache_dtype, 'fp8') AS kv_dtype,
       o.what || CASE WHEN c.backend IS NOT NULL AND o.what NOT LIKE 'SGLang%' THEN ' -> using ' || c.backend ELSE '' END AS what,
       (SELECT list(line_no ORDER BY line_no)[1:3] FROM ev WHERE ev.run_id = o.run_id AND ev.line_no <> o.line_no) AS evidence_lines
FROM one o JOIN runs r USING (run_id) LEFT JOIN chosen c USING (run_id)
