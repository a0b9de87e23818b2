-- compare_run_names: every run with the names a selector may use (run id, run and source
-- label, source file name and path), in run order.
SELECT r.run_id, r.label AS run_label, s.name, s.path, s.label AS source_label
FROM runs r JOIN sources s USING (source_id)
ORDER BY r.run_id
