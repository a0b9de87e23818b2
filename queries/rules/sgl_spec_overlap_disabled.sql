-- id: sgl_spec_overlap_disabled
-- severity: info
-- title: Run {run_id}: the overlap (zero-overhead) scheduler is off because of {why} speculative decoding
-- fix: With --speculative-eagle-topk 1, try SGLANG_ENABLE_SPEC_V2=True (spec v2 keeps the overlap scheduler on; experimental), and A/B it.
-- source: docs/knowledge-base.md R20 — sglang docs advanced_features/speculative_decoding.md; sglang PR #1738 (the overlap scheduler was worth ~10 % throughput when introduced). Evidence: `Overlap scheduler is disabled because of using <algo> speculative decoding` and the ngram form `The overlap scheduler and mixed chunked prefill are disabled because of using ngram speculative decoding`.
-- engine: sglang
-- requires: events_other.kind=overlap_disabled_spec|spec_notice
WITH ev AS (
  SELECT e.run_id, e.line_no, e.text AS why FROM events_other e WHERE e.kind = 'overlap_disabled_spec'
  UNION ALL
  SELECT e.run_id, e.line_no, 'ngram' FROM events_other e
  WHERE e.kind = 'spec_notice' AND e.message LIKE '%overlap scheduler and mixed chunked prefill are disabled because of using ngram%'
)
SELECT ev.run_id, min(ev.line_no) AS line_no, arg_min(ev.why, ev.line_no) AS why
FROM ev JOIN runs r USING (run_id)
WHERE r.engine = 'sglang'
GROUP BY ev.run_id
