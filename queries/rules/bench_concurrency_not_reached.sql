-- id: bench_concurrency_not_reached
-- severity: warning
-- title: Benchmark run {run_id}: {achieved} against a requested concurrency of {max_concurrency} — the run missed its load point ({why})
-- fix: Send at least several times max-concurrency prompts (ramp and drain dilute the average), keep --request-rate inf for a concurrency sweep, check the client machine is not the bottleneck, and on the server check the admission caps and the KV capacity.
-- fix.sglang: Admission caps: --max-running-requests and the speculative-decoding cap; KV capacity: sgl_kv_capacity_vs_context.
-- fix.vllm: Admission cap: --max-num-seqs; KV capacity: vllm_max_concurrency_below_target.
-- params: min_ratio=0.75, min_peak_ratio=0.95
-- requires: bench_results.max_concurrency
-- source: docs/knowledge-base.md R41 (sgl-project/sglang#34290, #33483). Evidence: SGLang "Concurrency:" (achieved average in-flight requests) below min_ratio x "Max request concurrency:"; "Peak concurrent requests" below min_peak_ratio x the maximum; or fewer prompts than the concurrency. Ramp-up and drain keep a healthy run near 90 % (story: 115.13 of 128).
WITH b AS (
  SELECT run_id, source_id, line_no, max_concurrency, concurrency, peak_concurrency, request_rate, successful_requests,
         failed_requests
  FROM bench_results
  WHERE run_id IS NOT NULL AND max_concurrency > 1 AND coalesce(successful_requests, failed_requests) IS NOT NULL
),
args AS (  -- the client's Namespace(... num_prompts=N ...) lines (parsers/bench.toml bench_args)
  SELECT source_id, line_no, CAST(value AS BIGINT) AS num_prompts
  FROM events_other WHERE kind = 'bench_args' AND value IS NOT NULL
),
np AS (
  SELECT b.run_id, b.line_no, arg_max(a.num_prompts, a.line_no) AS num_prompts
  FROM b JOIN args a ON a.source_id = b.source_id AND a.line_no < b.line_no
  GROUP BY b.run_id, b.line_no
),
x AS (
  SELECT b.*, coalesce(np.num_prompts, b.successful_requests + coalesce(b.failed_requests, 0)) AS prompts
  FROM b LEFT JOIN np USING (run_id, line_no)
)
SELECT run_id, line_no, CAST(max_concurrency AS BIGINT) AS max_concurrency,
       concat_ws(', ',
         CASE WHEN concurrency IS NOT NULL THEN 'average concurrency ' || round(concurrency, 2) || ' (' || CAST(round(100 * concurrency / max_concurrency) AS BIGINT) || ' %)' END,
         CASE WHEN peak_concurrency IS NOT NULL THEN 'peak ' || round(peak_concurrency, 2) END) AS achieved,
       CASE WHEN prompts < max_concurrency THEN 'only ' || prompts || ' prompts were sent, fewer than the concurrency'
            WHEN request_rate IS NOT NULL AND isfinite(request_rate)
              THEN 'the client offered ' || request_rate || ' req/s, too few to keep ' || CAST(max_concurrency AS BIGINT) || ' requests in flight'
            ELSE 'the client issued or the server admitted fewer requests than offered (client bottleneck, admission caps, KV limits)' END AS why,
       round(concurrency / max_concurrency, 3) AS achieved_ratio
FROM x
WHERE (concurrency IS NOT NULL AND concurrency < $min_ratio * max_concurrency)
   OR (peak_concurrency IS NOT NULL AND peak_concurrency < $min_peak_ratio * max_concurrency)
   OR prompts < max_concurrency
