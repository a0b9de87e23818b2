-- id: spec_low_acceptance
-- severity: warning
-- title: Run {run_id}: {spec_method} drafts accepted at {accept_len} tokens per step ({draft_rate_pct}% of drafts) over {n_obs} observations — speculative decoding buys little or nothing
-- fix: Use a drafter trained for this exact target (version, quantization, chat template; e.g. with SpecForge), lower --speculative-num-steps / topk, or turn speculative decoding off for this workload.
-- params: min_accept_len=1.8, critical_accept_len=1.3
-- source: diagnostics.md R18 (sglang PR #4247, issue #11948; vLLM-ascend #5974; llama.cpp PR #18039; field report: EAGLE-3 at 42% and 25% on Kimi-K2.5). accept_len normalised to mean tokens per verify step including the bonus token (spec_stats.definition says how each engine's numbers were converted); weighted by drafted tokens where counts exist.
-- requires: spec_stats.accept_len
WITH obs AS (
  SELECT s.run_id, s.line_no, s.accept_len, s.draft_accept_rate, s.drafted_tokens, s.accepted_tokens
  FROM spec_stats s
  WHERE s.accept_len IS NOT NULL AND NOT coalesce(s.cumulative, false)
    -- idle intervals print 0 drafts; they say nothing about acceptance
    AND coalesce(s.drafted_tokens, 1) > 0
  UNION ALL  -- V0 prints cumulative counts: its last line is the whole-run figure
  SELECT run_id, line_no, accept_len, draft_accept_rate, drafted_tokens, accepted_tokens
  FROM spec_stats WHERE cumulative
  QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
),
agg AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n_obs,
    coalesce(sum(accept_len * drafted_tokens) / nullif(sum(drafted_tokens), 0), avg(accept_len)) AS accept_len,
    coalesce(sum(accepted_tokens)::DOUBLE / nullif(sum(drafted_tokens), 0), avg(draft_accept_rate)) AS draft_rate
  FROM obs GROUP BY run_id
)
SELECT a.run_id, a.line_no, round(a.accept_len, 2) AS accept_len, round(100 * a.draft_rate, 1) AS draft_rate_pct,
       a.n_obs, coalesce(r.spec_method, 'speculative') AS spec_method,
       CASE WHEN a.accept_len < $critical_accept_len THEN 'critical' ELSE 'warning' END AS severity
FROM agg a JOIN runs r USING (run_id)
WHERE a.accept_len < $min_accept_len
