-- id: request_exceeds_context
-- severity: warning
-- title: Run {run_id}: {n_rejected} request(s) rejected for exceeding the context (e.g. {requested} tokens > {limit}){http}
-- advice: context_length=raise, max_model_len=raise
-- fix: Raise the context limit if the KV cache allows it, or truncate prompts client-side. Benchmarks count these as failures.
-- fix.sglang: Raise --context-length (see sgl_kv_capacity_vs_context) or enable --allow-auto-truncate.
-- fix.vllm: Raise --max-model-len (see vllm_kv_too_small_for_max_model_len).
-- source: docs/knowledge-base.md R14 — sglang source (validate_input_length: `Input length (X tokens) exceeds the maximum allowed length (Y tokens)`, `The input (X tokens) is longer than the model's context length (Y tokens)`); vllm issue #10517 (`This model's maximum context length is X tokens. However, you requested Y tokens`, `The decoder prompt (length X) is longer than the maximum model length of Y`) and the HTTP 400 access lines.
WITH rej AS (
  SELECT e.run_id, e.message,
    -- the rejection line inside the record: its traceback holds one line of text per physical line
    coalesce(e.line_no - 1 + list_position(list_transform(string_split(coalesce(e.traceback, e.message, ''), chr(10)),
               lambda x: x LIKE '%maximum context length is%' OR x LIKE '%exceeds the maximum allowed length%'
                         OR x LIKE '%longer than the m%'), true), e.line_no) AS line_no,
    coalesce(nullif(regexp_extract(e.message, 'you requested (\d+) tokens', 1), ''),
             nullif(regexp_extract(e.message, 'Input length \((\d+) tokens\)', 1), ''),
             nullif(regexp_extract(e.message, 'The input \((\d+) tokens\)', 1), ''),
             nullif(regexp_extract(e.message, 'decoder prompt \(length (\d+)\)', 1), '')) AS requested,
    coalesce(nullif(regexp_extract(e.message, 'maximum context length is (\d+) tokens', 1), ''),
             nullif(regexp_extract(e.message, 'maximum allowed length \((\d+) tokens\)', 1), ''),
             nullif(regexp_extract(e.message, 'context length \((\d+) tokens\)', 1), ''),
             nullif(regexp_extract(e.message, 'maximum model length of (\d+)', 1), '')) AS lim
  FROM errors e
  WHERE e.kind = 'request_too_long'
     OR e.message LIKE '%maximum context length is % tokens. However, you requested%'
     OR e.message LIKE '%exceeds the maximum allowed length%'
     OR e.message LIKE '%is longer than the model_s context length%'
     OR e.message LIKE '%is longer than the maximum model length of%'
),
agg AS (
  SELECT run_id, count(DISTINCT line_no) AS n_rejected, min(line_no) AS line_no,
         arg_min(requested, line_no) AS requested, arg_min(lim, line_no) AS lim,
         list(DISTINCT line_no)[2:4] AS evidence_lines
  FROM rej GROUP BY run_id
),
http AS (
  SELECT run_id, count(*) AS n400 FROM events_bulk WHERE kind = 'http_access' AND value = 400 GROUP BY run_id
)
SELECT a.run_id, a.line_no, a.n_rejected, coalesce(a.requested, '?') AS requested, coalesce(a.lim, '?') AS "limit",
       CASE WHEN h.n400 > 0 THEN '; ' || h.n400 || ' HTTP 400 response(s) in the access log' ELSE '' END AS http,
       a.evidence_lines
FROM agg a LEFT JOIN http h USING (run_id)
