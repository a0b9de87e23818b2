-- The milestone events of the runs {runs} that their runs row is derived from (launch, model,
-- backend, limits, startup phases, readiness, shutdown), in line order. {kinds}: the kinds.
-- Milestones are never per-request (bulk) events: events_other holds them all.
SELECT run_id, kind, line_no, ts, value, text, attrs, tp_rank, proc FROM events_other
WHERE {runs} AND kind IN ({kinds}) ORDER BY run_id, line_no, rowid
