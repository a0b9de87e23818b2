-- id: vllm_preemption
-- severity: warning
-- title: Run {run_id}: {n_preempt} request preemption(s) for lack of KV cache ({how}){context}
-- advice: gpu_memory_utilization=raise, max_num_seqs=lower
-- fix: Preempted requests are recomputed from scratch (latency spikes, stalls mid-stream). Give the KV cache more room: raise --gpu-memory-utilization, lower --max-num-seqs / --max-num-batched-tokens, shorten --max-model-len, use an FP8 KV cache, or add TP/PP.
-- params: critical_per_min=5, critical_count=20
-- source: docs/knowledge-base.md R10 — vLLM optimization docs (docs.vllm.ai configuration/optimization, "Preemption"). V0: `Sequence group ... is preempted by PreemptionMode.RECOMPUTE ... total_num_cumulative_preemption=N` (logged every 50th preemption, so N is the cumulative count); V1: the `Preemptions: N` field of the periodic stats line (per interval, printed only when > 0). Critical when frequent: >=20 preemptions at >=5 per minute of the stats window.
-- engine: vllm
WITH v0 AS (
  SELECT run_id, min(line_no) AS line_no, CAST(max(coalesce(value, 1)) AS BIGINT) AS n_preempt,
         'V0 RECOMPUTE preemption warnings, cumulative count' AS how,
         list(line_no ORDER BY line_no)[2:4] AS evidence_lines
  FROM events_other WHERE kind = 'preemption' GROUP BY run_id
),
v1 AS (
  SELECT run_id, min(line_no) AS line_no, CAST(sum(preemptions) AS BIGINT) AS n_preempt,
         'V1 stats field Preemptions, ' || count(*) || ' interval(s)' AS how,
         list(line_no ORDER BY preemptions DESC, line_no)[1:3] AS evidence_lines
  FROM decode_primary WHERE primary_rank AND preemptions > 0 GROUP BY run_id
),
win AS (
  SELECT run_id, greatest(epoch(max(ts)) - epoch(min(ts)), 60) / 60.0 AS minutes,
         max(kv_usage) AS peak_kv, max(queued_reqs) AS peak_waiting
  FROM decode_primary WHERE primary_rank AND (running_reqs > 0 OR queued_reqs > 0) GROUP BY run_id
),
p AS (SELECT * FROM v0 UNION ALL SELECT * FROM v1 WHERE run_id NOT IN (SELECT run_id FROM v0))
SELECT p.run_id, p.line_no, p.n_preempt, p.how,
       CASE WHEN w.peak_kv IS NOT NULL
            THEN '; GPU KV cache usage peaked at ' || round(100 * w.peak_kv, 1) || ' % with up to ' || coalesce(w.peak_waiting, 0) || ' waiting'
            ELSE '' END AS context,
       CASE WHEN p.n_preempt >= $critical_count AND p.n_preempt / coalesce(w.minutes, 1.0) >= $critical_per_min
            THEN 'critical' ELSE 'warning' END AS severity,
       p.evidence_lines
FROM p JOIN runs r USING (run_id) LEFT JOIN win w USING (run_id)
WHERE r.engine = 'vllm'
