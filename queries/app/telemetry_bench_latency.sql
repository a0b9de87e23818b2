-- telemetry_bench_latency: client-side latency per run and concurrency, from the bench result
-- files linked to the run (run_telemetry): TTFT and ITL p50/p99 in ms (the file's own
-- median/p99; p50/p99 of its per-request lists when it saved details and lacks them).
-- $run_ids: the runs.
SELECT rt.run_id, b.source_id, b.line_no, b.tool, b.max_concurrency, b.request_rate, b.successful_requests,
       coalesce(b.median_ttft_ms, b.detail_p50_ttft_ms) AS ttft_p50_ms,
       coalesce(b.p99_ttft_ms, b.detail_p99_ttft_ms) AS ttft_p99_ms,
       coalesce(b.median_itl_ms, b.detail_p50_itl_ms) AS itl_p50_ms,
       coalesce(b.p99_itl_ms, b.detail_p99_itl_ms) AS itl_p99_ms,
       b.output_tok_s
FROM bench_results b JOIN run_telemetry rt USING (source_id)
WHERE list_contains($run_ids, rt.run_id)
ORDER BY rt.run_id, b.max_concurrency NULLS LAST, b.line_no
