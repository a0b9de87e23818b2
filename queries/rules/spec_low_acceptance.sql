-- id: spec_low_acceptance
-- severity: warning
-- title: Run {run_id}: {spec_method} drafts ({k_text}) accepted at {accept_len} tokens per verify step ({rate_text}) over {n_obs} observations — speculative decoding buys little or nothing
-- fix: Use a drafter trained for this exact target (version, quantization, chat template; e.g. with SpecForge), lower --speculative-num-steps / topk / num_speculative_tokens, or turn speculative decoding off for this workload. Known causes: quantized/rotated target vs a bf16-trained drafter, wrong chat template, sampling temperature.
-- params: min_accept_len=1.8, critical_accept_len=1.3, min_chain_rate=0.45, min_chain_for_len=4
-- source: diagnostics.md R18 (sglang PR #4247, issue #11948; SafeAILab/EAGLE #132, #298; vllm-ascend #5974; llama.cpp PR #18039; mit-han-lab/fastrl PR #4; field report: EAGLE-3 at 42 % (SGLang) and 25 % (vLLM) on Kimi-K2.5). accept_len is normalised to mean tokens per verify step including the bonus token (spec_stats.definition says how each engine's numbers were converted), weighted by drafted tokens where counts exist. Warn when accept_len < 1.8 for chains of >=3 drafts (or unknown length), or when accept_len / (drafts + 1) — SGLang's printed accept rate for topk 1 — is < 0.45 (this scales to long chains: DFlash with 15 drafts at ~2 tokens/step); critical below 1.3.
-- requires: spec_stats.accept_len
WITH obs AS (
  SELECT s.run_id, s.line_no, s.accept_len, s.draft_accept_rate, s.drafted_tokens, s.accepted_tokens, s.raw_rate, s.origin
  FROM spec_stats s
  WHERE s.accept_len IS NOT NULL AND NOT coalesce(s.cumulative, false)
    -- idle intervals print 0 drafts; they say nothing about acceptance
    AND coalesce(s.drafted_tokens, 1) > 0
  UNION ALL  -- V0 prints cumulative counts: its last line is the whole-run figure
  SELECT run_id, line_no, accept_len, draft_accept_rate, drafted_tokens, accepted_tokens, raw_rate, origin
  FROM spec_stats WHERE cumulative
  QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no DESC) = 1
),
agg AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n_obs, any_value(origin) AS origin,
    coalesce(sum(accept_len * drafted_tokens) / nullif(sum(drafted_tokens), 0), avg(accept_len)) AS accept_len,
    coalesce(sum(accepted_tokens)::DOUBLE / nullif(sum(drafted_tokens), 0), avg(draft_accept_rate)) AS draft_rate,
    avg(raw_rate) FILTER (WHERE origin = 'sglang_decode') AS sgl_rate
  FROM obs GROUP BY run_id
),
chain AS (  -- drafts per verify step: SGLang speculative_num_steps (topk 1 chain), vLLM num_speculative_tokens
  SELECT r.run_id,
         coalesce(CASE WHEN r.engine = 'sglang' THEN
                    (SELECT max(TRY_CAST(c.value AS INTEGER)) FROM config c
                     WHERE c.run_id = r.run_id AND c.key = 'speculative_num_steps') END,
                  CASE WHEN r.engine = 'sglang' THEN r.num_spec_tokens - 1 ELSE r.num_spec_tokens END) AS k,
         coalesce(r.spec_method, 'speculative') AS spec_method
  FROM runs r
),
j AS (
  SELECT a.*, c.k, c.spec_method,
         coalesce(a.sgl_rate, a.accept_len / (c.k + 1)) AS chain_rate
  FROM agg a JOIN chain c USING (run_id)
)
SELECT run_id, line_no, round(accept_len, 2) AS accept_len, n_obs, spec_method,
       CASE WHEN k IS NULL THEN 'chain length unknown' ELSE k || ' per step' END AS k_text,
       CASE WHEN origin = 'sglang_decode' AND sgl_rate IS NOT NULL
              THEN 'printed accept rate ' || round(sgl_rate, 2) || ' = ' || round(100 * sgl_rate) || ' %'
            WHEN draft_rate IS NOT NULL THEN 'draft acceptance rate ' || round(100 * draft_rate, 1) || ' %'
            ELSE 'acceptance rate not printed' END AS rate_text,
       round(100 * draft_rate, 1) AS draft_rate_pct, round(sgl_rate, 2) AS sgl_accept_rate,
       CASE WHEN accept_len < $critical_accept_len THEN 'critical' ELSE 'warning' END AS severity
FROM j
WHERE (accept_len < $min_accept_len AND (k IS NULL OR k + 1 >= $min_chain_for_len))
   OR (k IS NOT NULL AND chain_rate < $min_chain_rate)
   OR accept_len < $critical_accept_len
