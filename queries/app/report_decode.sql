-- report_decode: the decode statistics lines of the runs (primary rank), in log order: the
-- report's throughput, concurrency, KV-cache and queue charts. $run_ids: the runs.
SELECT run_id, line_no, ts, running_reqs, queued_reqs, kv_usage, gen_tok_s, accept_len
FROM decode_stats
WHERE primary_rank AND list_contains($run_ids, run_id)
ORDER BY run_id, line_no
