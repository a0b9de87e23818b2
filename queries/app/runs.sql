-- runs: the run list of `logsleuth runs` and `logsleuth.runs()`, one row per run.
-- $run_ids: the runs to list (the caller resolves selectors; all runs when none were given).
SELECT r.run_id, s.name AS source, r.label, r.engine,
       coalesce(r.engine_version, 'era ' || r.format_era) AS version, r.model, r.tp_size AS tp,  -- exact, else the era
       r.attention_backend AS attention, r.spec_method AS spec,
       r.gpu_name AS gpu, CASE WHEN r.gpu_name IS NOT NULL THEN r.gpu_source END AS gpu_source,  -- named with the GPU only
       r.end_state,
       -- telemetry linked to the run (view run_telemetry): tool, file and why it belongs to the run
       (SELECT string_agg(t.tool || ' ' || ts.name || ' (' || rt.how || ')', '; ' ORDER BY rt.source_id)
        FROM run_telemetry rt JOIN telemetry_sources t USING (source_id) JOIN sources ts USING (source_id)
        WHERE rt.run_id = r.run_id) AS telemetry
FROM runs r JOIN sources s USING (source_id)
WHERE list_contains($run_ids, r.run_id)
ORDER BY r.run_id
