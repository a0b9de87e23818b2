-- timeline_runs: per run, its start and the startup durations the runs table holds (the
-- fallback when its milestones carry no timestamps). $run_ids: the runs.
SELECT run_id, started_at, weight_load_s, cuda_graph_capture_s, time_to_ready_s
FROM runs
WHERE list_contains($run_ids, run_id)
