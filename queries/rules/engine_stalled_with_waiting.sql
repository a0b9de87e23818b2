-- id: engine_stalled_with_waiting
-- severity: critical
-- title: Run {run_id}: {what}
-- fix: A request longer than the whole KV pool but within max_model_len is never admitted and blocks the queue while health checks stay green. Set --max-model-len <= the KV cache size in tokens (or add KV memory: FP8 KV, higher --gpu-memory-utilization, more GPUs); vLLM's --no-scheduler-reserve-full-isl is a workaround; enforce client-side length limits.
-- params: min_intervals=3
-- source: docs/knowledge-base.md R43 — vllm issues #39734 (Gemma-4-31B on 2xH100: KV 76,640 tokens vs default max_model_len 262,144), #45414, #45388. Observed form (critical): >=3 consecutive stats lines with Running: 0, Waiting > 0 and zero generation throughput, or any such line when max_model_len exceeds the KV cache size. Predictive form (warning): `Using max model len L` > `GPU KV cache size: T tokens` at start-up with no stall seen.
-- engine: vllm
WITH st AS (
  SELECT d.run_id, d.line_no, d.ts, d.queued_reqs,
         coalesce(d.running_reqs = 0 AND d.queued_reqs > 0 AND coalesce(d.gen_tok_s, 0) = 0, false) AS stalled,
         coalesce(d.engine_idx, -1) AS eng
  FROM decode_primary d JOIN runs r USING (run_id)
  WHERE r.engine = 'vllm' AND d.primary_rank
),
isl AS (
  SELECT *, row_number() OVER (PARTITION BY run_id, eng ORDER BY line_no)
          - row_number() OVER (PARTITION BY run_id, eng, stalled ORDER BY line_no) AS grp
  FROM st
),
stalls AS (
  SELECT run_id, grp, count(*) AS n, min(line_no) AS line_no, max(queued_reqs) AS waiting,
         coalesce(CAST(epoch(max(ts)) - epoch(min(ts)) AS INTEGER), 0) AS span_s,
         list(line_no ORDER BY line_no)[2:4] AS evidence_lines
  FROM isl WHERE stalled GROUP BY run_id, grp
),
longest AS (
  SELECT * FROM stalls QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY n DESC, line_no) = 1
),
pred AS (
  SELECT r.run_id, r.context_len, r.kv_cache_tokens,
         (SELECT min(line_no) FROM events_other e WHERE e.run_id = r.run_id AND e.kind = 'kv_cache_tokens') AS kv_line,
         (SELECT min(line_no) FROM events_other e WHERE e.run_id = r.run_id AND e.kind = 'max_model_len') AS mml_line
  FROM runs r
  WHERE r.engine = 'vllm' AND r.context_len IS NOT NULL AND r.kv_cache_tokens IS NOT NULL
    AND r.context_len > r.kv_cache_tokens
)
SELECT coalesce(l.run_id, p.run_id) AS run_id,
       coalesce(l.line_no, p.kv_line, p.mml_line) AS line_no,
       CASE WHEN l.run_id IS NOT NULL AND (l.n >= $min_intervals OR p.run_id IS NOT NULL) THEN
              'engine stalled: Running 0 with ' || l.waiting || ' request(s) waiting and no generation for '
              || l.n || ' stats interval(s) (' || l.span_s || ' s)'
              || CASE WHEN p.run_id IS NOT NULL THEN ' — max_model_len ' || p.context_len || ' exceeds the KV cache ('
                        || p.kv_cache_tokens || ' tokens): a request that long can never be admitted' ELSE '' END
            ELSE 'max_model_len ' || p.context_len || ' exceeds the KV cache (' || p.kv_cache_tokens
                 || ' tokens): a request between those lengths is never admitted and blocks the queue (no stall seen in this log)'
       END AS what,
       CASE WHEN l.run_id IS NOT NULL AND (l.n >= $min_intervals OR p.run_id IS NOT NULL) THEN 'critical' ELSE 'warning' END AS severity,
       CASE WHEN l.run_id IS NOT NULL AND (l.n >= $min_intervals OR p.run_id IS NOT NULL)
            THEN list_filter(list_concat(l.evidence_lines, [p.kv_line]), lambda x: x IS NOT NULL)
            ELSE list_filter([p.mml_line], lambda x: x IS NOT NULL) END AS evidence_lines
FROM longest l FULL OUTER JOIN pred p USING (run_id)
WHERE (l.run_id IS NOT NULL AND (l.n >= $min_intervals OR p.run_id IS NOT NULL)) OR p.run_id IS NOT NULL
