-- run_headers: what a findings listing prints above each run's findings.
SELECT r.run_id, s.name AS source, r.engine, r.model, r.end_state
FROM runs r JOIN sources s USING (source_id)
ORDER BY r.run_id
