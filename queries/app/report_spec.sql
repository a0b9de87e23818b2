-- report_spec: per-interval speculative acceptance lengths of the runs (cumulative counters
-- excluded), in log order. $run_ids: the runs.
SELECT run_id, line_no, ts, accept_len
FROM spec_stats
WHERE list_contains($run_ids, run_id) AND accept_len IS NOT NULL AND NOT coalesce(cumulative, false)
ORDER BY run_id, line_no
