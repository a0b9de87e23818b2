-- watch_runs: the runs stored for the given sources, with the line range each covers and
-- the hardware learned for it (so the watch can compare a live run with earlier runs of the
-- same model on the same GPU).
SELECT run_id, source_id, first_line, last_line, model, tp_size, gpu_name, end_state
FROM runs
WHERE list_contains($source_ids, source_id)
ORDER BY source_id, first_line
