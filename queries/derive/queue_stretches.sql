-- queue_stretches: the stretches of consecutive saturated stats lines of the runs $run_ids (the
-- rule queue_saturation; the same statement as its live part, which it falls back to for other
-- thresholds). A saturated line (primary rank) has requests waiting and either KV usage >=
-- $kv_full or Running at the admission cap with KV >= $kv_busy_at_cap; a stretch is the
-- saturated lines whose seq (decode_primary.seq) runs without a gap. One row per stretch.
WITH caps AS (SELECT source_id, run_id, max_running_requests AS cap FROM runs WHERE list_contains($run_ids, run_id)),
sat AS (
  SELECT c.source_id, d.run_id, d.line_no, d.ts, d.running_reqs, d.queued_reqs, d.kv_usage, d.seq,
         coalesce(d.engine_idx, d.dp_rank, -1) AS eng
  FROM decode_primary d JOIN caps c USING (run_id)
  WHERE d.primary_rank AND d.seq IS NOT NULL AND d.queued_reqs > 0
    AND (d.kv_usage >= $kv_full OR (d.running_reqs >= c.cap AND d.kv_usage >= $kv_busy_at_cap))
),
islands AS (SELECT *, seq - row_number() OVER (PARTITION BY run_id, eng ORDER BY seq) AS grp FROM sat)
SELECT any_value(source_id) AS source_id, run_id, eng, count(*) AS n_lines, min(line_no) AS line_no,
       max(line_no) AS last_line, arg_min(queued_reqs, line_no) AS q_first, max(queued_reqs) AS q_max,
       CAST(epoch(max(ts)) - epoch(min(ts)) AS INTEGER) AS span_s,
       CAST(median(running_reqs) AS INTEGER) AS running_med, min(running_reqs) AS running_min,
       max(running_reqs) AS running_max, round(100 * median(kv_usage), 1) AS kv_pct,
       arg_max(line_no, queued_reqs) AS q_max_line
FROM islands GROUP BY run_id, eng, grp
