-- run_details: run_summary plus the provenance columns `ingest` and `show` print
-- (line range, how the attention backend and the GPU were found, why the run ended).
SELECT s.*, r.first_line, r.last_line, r.attention_backend_how, r.gpu_source, r.end_reason, r.end_line
FROM run_summary s JOIN runs r USING (run_id)
WHERE list_contains($run_ids, run_id)
ORDER BY run_id
