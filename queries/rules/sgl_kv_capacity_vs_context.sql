-- id: sgl_kv_capacity_vs_context
-- severity: warning
-- title: Run {run_id}: the whole KV pool holds {kv_tokens} tokens (max_total_num_tokens), less than context_len {context_len} — one long request can fill it ({ratio}x of one context)
-- advice: context_length=lower
-- fix: Set --context-length to what requests really need, store the KV cache in FP8 (--kv-cache-dtype fp8_e4m3), or give it more memory / more TP.
-- source: docs/knowledge-base.md R13 — sglang issue #29575 (maintainer: max_total_num_tokens is the total KV slots for all requests together), SGLang hyperparameter tuning docs. From the start-up summary `max_total_num_tokens=..., context_len=...`.
-- engine: sglang
SELECT e.run_id, min(e.line_no) AS line_no, CAST(max(e.value) AS BIGINT) AS kv_tokens,
       max(TRY_CAST(json_extract_string(e.attrs, '$.context_len') AS BIGINT)) AS context_len,
       round(max(e.value) / max(TRY_CAST(json_extract_string(e.attrs, '$.context_len') AS DOUBLE)), 2) AS ratio
FROM events_other e JOIN runs r USING (run_id)
WHERE e.kind = 'limits' AND r.engine = 'sglang'
GROUP BY e.run_id
HAVING max(e.value) < max(TRY_CAST(json_extract_string(e.attrs, '$.context_len') AS BIGINT))
