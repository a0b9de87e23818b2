-- id: bench_failed_requests
-- severity: critical
-- title: Benchmark run {run_id}: {failed} of {sent} requests failed ({failed_pct}%) — throughput and latency figures count only the successful ones and are not comparable
-- fix: Fix the server-side cause before reading the numbers: look for the matching server errors (context-length rejections, 5xx, aborted or timed-out requests, OOM) in the server log of the same time window, then rerun the benchmark.
-- requires: bench_results.successful_requests
-- source: docs/knowledge-base.md R40 (block format: vllm-project/vllm#40734, sgl-project/sglang#1738). Evidence: "Failed requests: N" > 0, or "Successful requests" below the num_prompts of the benchmark's own Namespace(...) line.
WITH b AS (
  SELECT run_id, source_id, line_no, last_line, successful_requests, failed_requests FROM bench_results
  WHERE run_id IS NOT NULL AND coalesce(successful_requests, failed_requests) IS NOT NULL
),
args AS (  -- the client's Namespace(... num_prompts=N ...) lines (parsers/bench.toml bench_args)
  SELECT source_id, line_no, CAST(value AS BIGINT) AS num_prompts
  FROM events_other WHERE kind = 'bench_args' AND value IS NOT NULL
),
failed_rows AS (  -- the block's 'Failed requests:' row (parsers/bench.toml bench_failed_row)
  SELECT source_id, line_no FROM events_other WHERE kind = 'bench_failed_requests'
),
np AS (  -- the nearest Namespace(... num_prompts=N ...) before the block
  SELECT b.run_id, b.line_no, arg_max(a.num_prompts, a.line_no) AS num_prompts
  FROM b JOIN args a ON a.source_id = b.source_id AND a.line_no < b.line_no
  GROUP BY b.run_id, b.line_no
),
frow AS (
  SELECT b.run_id, b.line_no, min(l.line_no) AS fline
  FROM b JOIN failed_rows l ON l.source_id = b.source_id AND l.line_no BETWEEN b.line_no AND coalesce(b.last_line, b.line_no + 60)
  GROUP BY b.run_id, b.line_no
),
x AS (
  SELECT b.run_id, b.line_no, f.fline,
         greatest(coalesce(b.failed_requests, 0),
                  coalesce(np.num_prompts - b.successful_requests, 0)) AS failed,
         greatest(coalesce(np.num_prompts, 0), coalesce(b.successful_requests, 0) + coalesce(b.failed_requests, 0)) AS sent
  FROM b LEFT JOIN np USING (run_id, line_no) LEFT JOIN frow f USING (run_id, line_no)
)
SELECT run_id, line_no, failed, sent, round(100.0 * failed / nullif(sent, 0), 1) AS failed_pct,
       CASE WHEN fline IS NOT NULL THEN [fline] END AS evidence_lines
FROM x WHERE failed > 0
