-- id: telemetry_spec_acceptance_mismatch
-- severity: warning
-- title: Run {run_id}: speculative acceptance length from Prometheus ({prom_accept_len}) disagrees with the log's ({log_accept_len}) by {diff_pct} %
-- fix: One of the two figures is not what it seems: check that the scrape and the log cover the same run and time (engine restarts reset counters), that the log's figure is the mean tokens per step including the bonus token, and for DP that all engines are scraped. Trust the counters for totals.
-- fix.sglang: SGLang logs both an accept length and an accept rate: compare the length.
-- fix.vllm: Compare against vLLM's Mean acceptance length.
-- params: max_rel_diff=0.15
-- source: vLLM spec-decode counters (vllm/v1/spec_decode/metrics.py docstring; README.md (Telemetry) 1.1): mean acceptance length = 1 + rate(vllm:spec_decode_num_accepted_tokens_total) / rate(vllm:spec_decode_num_drafts_total), here over the scrape's first and last snapshot (or since start for one snapshot); SGLang gauge sglang:spec_accept_length (mean over snapshots with a value). The log's figure: spec_stats.accept_len over the same time span (docs/knowledge-base.md lines on accept len: (accepted + bonus) / forward steps). A relative gap over 15 % (logsleuth's threshold) is more than interval noise.
-- requires: spec_stats.accept_len, metrics
WITH c AS (
  SELECT source_id, snapshot, any_value(ts) AS ts, min(line_no) AS line_no,
         sum(value) FILTER (WHERE name = 'vllm:spec_decode_num_accepted_tokens_total') AS accepted,
         sum(value) FILTER (WHERE name = 'vllm:spec_decode_num_drafts_total') AS drafts,
         avg(value) FILTER (WHERE name = 'sglang:spec_accept_length' AND value > 0) AS sgl_len
  FROM metrics
  WHERE name IN ('vllm:spec_decode_num_accepted_tokens_total', 'vllm:spec_decode_num_drafts_total', 'sglang:spec_accept_length')
  GROUP BY source_id, snapshot
),
span AS (
  SELECT source_id, min(ts) AS t0, max(ts) AS t1, arg_max(line_no, snapshot) AS line_no,
         CASE WHEN count(*) FILTER (WHERE drafts IS NOT NULL) >= 2
                   AND arg_max(drafts, snapshot) > arg_min(drafts, snapshot)
              THEN 1 + (arg_max(accepted, snapshot) - arg_min(accepted, snapshot)) / (arg_max(drafts, snapshot) - arg_min(drafts, snapshot))
              WHEN max(drafts) > 0 THEN 1 + arg_max(accepted, snapshot) / arg_max(drafts, snapshot)
              ELSE avg(sgl_len) END AS prom
  FROM c GROUP BY source_id
),
logged AS (
  SELECT rt.run_id, s.source_id, s.line_no, s.prom,
         (SELECT avg(accept_len) FROM spec_stats x WHERE x.run_id = rt.run_id AND x.accept_len IS NOT NULL
            AND (s.t0 IS NULL OR x.ts IS NULL OR x.ts BETWEEN s.t0 - INTERVAL 1 MINUTE AND s.t1 + INTERVAL 1 MINUTE)) AS log_len
  FROM span s JOIN run_telemetry rt USING (source_id)
  WHERE s.prom IS NOT NULL
)
SELECT run_id, source_id, line_no, round(prom, 2) AS prom_accept_len, round(log_len, 2) AS log_accept_len,
       round(100 * abs(prom - log_len) / log_len, 0) AS diff_pct
FROM logged
WHERE log_len > 0 AND abs(prom - log_len) / log_len > $max_rel_diff
