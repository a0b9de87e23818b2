-- id: spec_at_high_concurrency
-- severity: warning
-- title: Run {run_id}: speculative decoding ({spec_method}) stays on while {n_high} of {n_busy} busy stats lines run {high_running}+ requests (median {median_high}, peak {peak}) — at large batches verification competes with decode for compute
-- fix: Disable speculation at high batch, or split latency (spec on) and throughput (spec off) deployments.
-- fix.sglang: Use adaptive speculation or fewer --speculative-num-steps.
-- fix.vllm: Set speculative_config.disable_by_batch_size.
-- params: high_running=32, min_share=0.25, min_lines=3
-- source: docs/knowledge-base.md R19 — vLLM spec_decode README (targets low-QPS memory-bound decode), sglang issue #5160 (128-way concurrency slower with spec), HabanaAI/vllm-fork PR #1264 (MTP 1.6x at bs4 -> 1.35x at bs128 -> ~0 at bs256), snowflakedb/ArcticInference#185 (suffix decoding degrades above ~20 concurrency), vllm issue #49548. Sustained = >=25 % of busy primary-rank stats lines (and >=3) at >=32 running requests.
-- requires: runs.spec_method
WITH busy AS (
  SELECT d.run_id, d.line_no, d.running_reqs
  FROM decode_primary d JOIN runs r USING (run_id)
  WHERE r.spec_method IS NOT NULL AND d.primary_rank AND d.running_reqs > 0
    -- vLLM turns speculation off by itself above disable_by_batch_size
    AND NOT EXISTS (SELECT 1 FROM config c WHERE c.run_id = d.run_id
                    AND c.key IN ('speculative_disable_by_batch_size', 'speculative_config.disable_by_batch_size')
                    AND TRY_CAST(c.value AS INTEGER) <= d.running_reqs)
)
SELECT b.run_id, min(b.line_no) FILTER (WHERE b.running_reqs >= $high_running) AS line_no,
       count(*) FILTER (WHERE b.running_reqs >= $high_running) AS n_high, count(*) AS n_busy,
       CAST(median(b.running_reqs) FILTER (WHERE b.running_reqs >= $high_running) AS INTEGER) AS median_high,
       max(b.running_reqs) AS peak, any_value(r.spec_method) AS spec_method, $high_running AS high_running
FROM busy b JOIN runs r USING (run_id)
GROUP BY b.run_id
HAVING count(*) FILTER (WHERE b.running_reqs >= $high_running) >= $min_lines
   AND count(*) FILTER (WHERE b.running_reqs >= $high_running) >= $min_share * count(*)
