-- id: queue_saturation
-- severity: warning
-- title: Run {run_id}: the queue grew from {q_first} to {q_max} waiting over {span_s} s ({n_lines} consecutive stats lines) while {running_desc} and KV usage stayed at ~{kv_pct} % — arrivals exceed what the server can serve
-- fix: Scale out (more replicas / DP behind a router), rate-limit clients, or raise capacity (more KV memory, FP8 KV, a shorter max context). For offline throughput runs a standing queue is expected.
-- fix.sglang: More KV memory: see sgl_mem_fraction_too_low.
-- fix.vllm: More KV memory: see vllm_max_concurrency_below_target.
-- params: kv_full=0.9, kv_busy_at_cap=0.7, min_lines=3, min_span_s=30
-- source: docs/knowledge-base.md R15 — SGLang hyperparameter tuning docs, vLLM optimization docs. A saturated stats line (primary rank) has requests waiting and either KV usage >= 90 % or Running at the admission cap with KV >= 70 % (below that the cap itself is the limit: running_pinned_at_cap). Fires on a run of >=3 consecutive saturated lines spanning >=30 s in which the queue grows; short admission ramps stay silent.
-- requires: decode_stats.queued_reqs, decode_primary.seq
WITH caps AS (SELECT run_id, max_running_requests AS cap FROM runs),
pre AS MATERIALIZED (  -- runs whose stretches were found at ingest with these thresholds (queue_stretches)
  SELECT run_id FROM run_rollup WHERE stretch_kv_full = $kv_full AND stretch_kv_busy = $kv_busy_at_cap
),
sat AS (  -- the other runs: their saturated lines; a stretch of them is consecutive in its scheduler's stream (seq)
  SELECT d.run_id, d.line_no, d.ts, d.running_reqs, d.queued_reqs, d.kv_usage, d.seq,
         coalesce(d.engine_idx, d.dp_rank, -1) AS eng
  FROM decode_primary d JOIN caps c USING (run_id)
  WHERE d.primary_rank AND d.seq IS NOT NULL AND d.queued_reqs > 0
    AND (d.kv_usage >= $kv_full OR (d.running_reqs >= c.cap AND d.kv_usage >= $kv_busy_at_cap))
    AND d.run_id NOT IN (SELECT run_id FROM pre)
),
islands AS (  -- a stretch = saturated lines whose seq runs without a gap (gaps-and-islands over
  -- the saturated lines only; queries/derive/queue_stretches.sql does the same at ingest)
  SELECT *, seq - row_number() OVER (PARTITION BY run_id, eng ORDER BY seq) AS grp FROM sat
),
runs_of_sat AS (
  SELECT run_id, count(*) AS n_lines, min(line_no) AS line_no, max(line_no) AS last_line,
         arg_min(queued_reqs, line_no) AS q_first, max(queued_reqs) AS q_max,
         CAST(epoch(max(ts)) - epoch(min(ts)) AS INTEGER) AS span_s,
         CAST(median(running_reqs) AS INTEGER) AS running_med, min(running_reqs) AS running_min,
         max(running_reqs) AS running_max, round(100 * median(kv_usage), 1) AS kv_pct,
         arg_max(line_no, queued_reqs) AS q_max_line
  FROM islands GROUP BY run_id, eng, grp
  UNION ALL
  SELECT run_id, n_lines, line_no, last_line, q_first, q_max, span_s, running_med, running_min, running_max,
         kv_pct, q_max_line
  FROM queue_stretches WHERE run_id IN (SELECT run_id FROM pre)
)
SELECT x.run_id, x.line_no, x.q_first, x.q_max, x.span_s, x.n_lines, x.kv_pct,
       CASE WHEN x.running_min = x.running_max THEN 'running stayed at ' || x.running_med
            ELSE 'running was ' || x.running_min || '–' || x.running_max END
       || CASE WHEN c.cap IS NOT NULL AND x.running_max >= c.cap THEN ' (the cap ' || c.cap || ')' ELSE '' END AS running_desc,
       list_distinct([x.q_max_line, x.last_line]) AS evidence_lines
FROM runs_of_sat x JOIN caps c USING (run_id)
WHERE x.n_lines >= $min_lines AND x.span_s >= $min_span_s AND x.q_max > x.q_first
QUALIFY row_number() OVER (PARTITION BY x.run_id ORDER BY x.span_s DESC, x.line_no) = 1
