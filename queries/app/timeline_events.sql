-- timeline_events: the timestamped startup milestones of the runs, in time order, with a flag
-- for rank 0 (a run's timeline uses rank 0 when it has any). $run_ids: the runs; $kinds: the
-- milestone kinds (analysis/timeline.py PHASE_OF).
SELECT run_id, ts, kind, line_no, coalesce(tp_rank, 0) = 0 AS rank0
FROM events_other
WHERE list_contains($run_ids, run_id) AND ts IS NOT NULL AND list_contains($kinds, kind)
ORDER BY run_id, ts, line_no
