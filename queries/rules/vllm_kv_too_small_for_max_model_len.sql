-- id: vllm_kv_too_small_for_max_model_len
-- severity: critical
-- title: Run {run_id} failed to start: one request at max_model_len {max_len} needs {need} of KV cache but only {avail} is available — it fits about {est_len} tokens
-- advice: max_model_len=lower
-- fix: Set --max-model-len to at most {est_len} (the default is the model's advertised context — set what you need), or raise --gpu-memory-utilization, use an FP8 KV cache (--kv-cache-dtype fp8), or add GPUs (TP/PP).
-- source: docs/knowledge-base.md R11 — vllm issue #10517; vllm/v1/core/kv_cache_utils.py (`To serve at least one request with the model's max seq len (X), (Y GiB KV cache is needed, which is larger than the available KV cache memory (Z GiB). Based on the available memory, the estimated maximum model length is W`); V0 `The model's max seq len (X) is larger than the maximum number of tokens that can be stored in KV cache (Y)`. This is also the start-up failure cause "KV cache too small".
-- engine: vllm
WITH err AS (
  SELECT e.run_id, e.line_no, e.message
  FROM errors e
  WHERE e.message LIKE '%To serve at least one request with the model%max seq len%'
     OR e.message LIKE '%max seq len (%) is larger than the maximum number of tokens that can be stored in KV cache%'
  QUALIFY row_number() OVER (PARTITION BY e.run_id ORDER BY e.line_no) = 1
),
exact AS (  -- the ValueError line itself (the error row may start at "EngineCore failed to start."), found
            -- in the run's error records: a record's traceback holds one line of text per physical line
  SELECT e.run_id, min(e.line_no - 1 + list_position(list_transform(string_split(coalesce(e.traceback, e.message, ''), chr(10)),
           lambda x: x LIKE '%ValueError: %max seq len%'), true)) AS line_no
  FROM errors e WHERE e.run_id IN (SELECT run_id FROM err) GROUP BY e.run_id
)
SELECT e.run_id, coalesce(x.line_no, e.line_no) AS line_no,
       regexp_extract(e.message, 'max seq len \((\d+)\)', 1) AS max_len,
       coalesce(nullif(regexp_extract(e.message, '\(([\d.]+ Gi?B) KV cache is needed', 1), ''), '?') AS need,
       coalesce(nullif(regexp_extract(e.message, 'available KV cache memory \(([\d.]+ Gi?B)\)', 1), ''),
                nullif(regexp_extract(e.message, 'stored in KV cache \((\d+)\)', 1) || ' tokens', ' tokens'), '?') AS avail,
       coalesce(nullif(regexp_extract(e.message, 'estimated maximum model length is (\d+)', 1), ''),
                nullif(regexp_extract(e.message, 'stored in KV cache \((\d+)\)', 1), ''), '?') AS est_len,
       CASE WHEN x.line_no IS NOT NULL AND x.line_no <> e.line_no THEN [e.line_no] END AS evidence_lines
FROM err e LEFT JOIN exact x USING (run_id)
