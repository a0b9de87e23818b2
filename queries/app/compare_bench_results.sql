-- compare_bench_results: the benchmark result blocks of the runs that carry a throughput or a
-- TTFT, in file order. $run_ids: the runs.
SELECT run_id, line_no, tool, backend, max_concurrency, request_rate, successful_requests, output_tok_s,
       median_ttft_ms, mean_ttft_ms, p99_ttft_ms, median_tpot_ms, mean_tpot_ms, median_itl_ms,
       mean_itl_ms, p99_itl_ms
FROM bench_results
WHERE list_contains($run_ids, run_id)
  AND (output_tok_s IS NOT NULL OR median_ttft_ms IS NOT NULL OR mean_ttft_ms IS NOT NULL)
ORDER BY run_id, line_no
