-- report_run_facts: per run, its run_summary row and when and why it ended. $run_ids: the runs.
SELECT v.*, r.started_at, r.ended_at, r.end_reason, r.gpu_count
FROM run_summary v JOIN runs r USING (run_id)
WHERE list_contains($run_ids, v.run_id)
