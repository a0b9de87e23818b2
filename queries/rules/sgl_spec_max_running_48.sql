-- id: sgl_spec_max_running_48
-- severity: warning
-- title: Run {run_id}: speculative decoding ({spec_method}) reset max_running_requests to {cap}{observed}
-- fix: Pass --max-running-requests explicitly (sized from the KV pool and the target concurrency) together with a matching --cuda-graph-max-bs; with DP attention remember the cap is split per worker.
-- params: min_pinned_lines=3
-- source: docs/knowledge-base.md R17 — sglang PR #34290, issue #33199; field report (Kimi-K2.5 EAGLE-3 campaign lost most of its concurrent throughput to the 48 cap). Evidence: `Max running requests is reset to 48 for speculative decoding`, or max_running_requests=48 with a speculative algorithm and no explicit --max-running-requests. Critical when #running-req sits at the cap with #queue-req > 0 (>=3 decode lines), i.e. the offered concurrency exceeded it.
-- engine: sglang
-- Reads line text (issue 11: rules read events and the rollup, not lines): the command line a job script echoed (pattern shell_trace, selected by pattern first): whether --max-running-requests was given.
WITH reset AS (
  SELECT run_id, min(line_no) AS line_no, CAST(max(value) AS INTEGER) AS cap, 'reset line' AS how
  FROM events_other WHERE kind = 'spec_max_running_reset' GROUP BY run_id
),
cfg AS (  -- no reset line (older/other builds), but the dump shows the spec default of 48
  SELECT r.run_id, (SELECT min(line_no) FROM events_other e WHERE e.run_id = r.run_id AND e.kind = 'limits') AS line_no,
         r.max_running_requests AS cap, 'config' AS how
  FROM runs r
  WHERE r.engine = 'sglang' AND r.spec_method IS NOT NULL AND r.max_running_requests = 48
    AND r.run_id NOT IN (SELECT run_id FROM reset)
    AND NOT EXISTS (SELECT 1 FROM lines_other l WHERE l.run_id = r.run_id AND l.pattern = 'shell_trace'
                    AND l.raw LIKE '%--max-running-requests%')
),
hit AS (SELECT * FROM reset UNION ALL SELECT * FROM cfg WHERE line_no IS NOT NULL),
pinned AS (
  SELECT d.run_id, count(*) AS n_pinned, max(d.queued_reqs) AS max_queue, min(d.line_no) AS first_line
  FROM decode_primary d JOIN hit h USING (run_id)
  WHERE d.primary_rank AND d.running_reqs >= h.cap AND d.queued_reqs > 0
  GROUP BY d.run_id
)
SELECT h.run_id, h.line_no, h.cap, coalesce(r.spec_method, 'speculative') AS spec_method,
       CASE WHEN p.n_pinned >= $min_pinned_lines
            THEN ' and the batch sat at ' || h.cap || ' on ' || p.n_pinned || ' decode lines while up to '
                 || p.max_queue || ' requests waited'
            ELSE ' (the default KV-derived limit is replaced; the run never offered more than the cap)' END AS observed,
       CASE WHEN p.n_pinned >= $min_pinned_lines THEN 'critical' ELSE 'warning' END AS severity,
       CASE WHEN p.first_line IS NOT NULL THEN [p.first_line] END AS evidence_lines
FROM hit h JOIN runs r USING (run_id) LEFT JOIN pinned p USING (run_id)
