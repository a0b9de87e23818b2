-- compare_runs: per run, its run_summary row and the runs/sources columns compare shows or
-- falls back on. $run_ids: the runs.
SELECT v.*, r.ordinal, r.gpu_count, r.spec_draft_model, r.context_len, r.started_at, r.pp_size,
       r.cuda_graph_max_bs, r.max_running_requests, r.kv_cache_dtype, r.quantization,
       s.kind AS source_kind, s.label AS source_label
FROM run_summary v JOIN runs r USING (run_id) JOIN sources s ON s.source_id = r.source_id
WHERE list_contains($run_ids, v.run_id)
