-- id: spec_low_acceptance
-- severity: warning
-- title: Run {run_id}: {spec_method} ({kind_text}) delivers {accept_len} tokens per verify step — {rate_text} over {n_obs} observations: speculative decoding buys little or nothing
-- fix: Use a drafter trained for this exact target (version, quantization, chat template; e.g. with SpecForge), lower --speculative-num-steps / topk / num_speculative_tokens, or turn speculative decoding off for this workload. Known causes: quantized/rotated target vs a bf16-trained drafter, wrong chat template, sampling temperature.
-- params: min_accept_len=1.8, critical_accept_len=1.3, min_draft_rate=0.3, min_chain_rate=0.45, ceiling_min_accept_len=1.3
-- source: docs/knowledge-base.md R18 (sglang PR #4247, issue #11948; SafeAILab/EAGLE #132, #298; vllm-ascend #5974; llama.cpp PR #18039; mit-han-lab/fastrl PR #4; field reports: EAGLE-3 at 42 % printed / 22 % per-token (SGLang) and 25 % (vLLM) on Kimi-K2.5, no speedup; vLLM EAGLE-3 with 2 speculative tokens at 1.38-1.54 tokens/step (19-27 % per token) slower than its non-speculative baseline in every configuration). Numbers come from run_summary in one vocabulary (spec_stats.definition): accept_len = mean tokens per verify step including the bonus token; per-token draft acceptance = (accept_len - 1) / k; k = draft tokens per step (vLLM num_speculative_tokens = SGLang speculative_num_steps). Chain methods (EAGLE/EAGLE-3, MTP, draft model, DFlash: k drafts every step) warn when accept_len < 1.8 with k >= 2 (a verify step then yields under 0.8 extra tokens, which the draft passes and the wider verify eat up), when per-token acceptance < 0.3, or when accept_len / (k + 1) < 0.45 (long chains: DFlash with 15 drafts at ~2 tokens/step); critical below 1.3 tokens/step. Ceiling methods (suffix decoding, n-gram / prompt lookup: k is a maximum, proposals are cheap and variable) are judged on tokens per step only: warn below 1.3 (vLLM docs: suffix decoding at 2.0-2.8 tokens/step with 37-49 % acceptance is its healthy range).
-- requires: spec_stats.accept_len
WITH s AS (
  SELECT rs.run_id, rs.mean_accept_len AS accept_len, rs.draft_accept_rate AS rate, rs.spec_k AS k,
         coalesce(rs.spec_kind, 'chain') AS kind, coalesce(rs.spec_method, 'speculative decoding') AS spec_method,
         rs.n_spec_obs AS n_obs, rs.per_position,
         ro.first_spec_line AS line_no  -- the run's first acceptance line (run_rollup)
  FROM run_summary rs JOIN run_rollup ro USING (run_id) WHERE rs.mean_accept_len IS NOT NULL
)
SELECT run_id, line_no, round(accept_len, 2) AS accept_len, n_obs, spec_method, kind,
       CASE WHEN kind = 'ceiling' THEN 'up to ' || coalesce(k::VARCHAR, '?') || ' proposed per step'
            WHEN k IS NULL THEN 'chain length unknown' ELSE k || ' drafted per step' END AS kind_text,
       CASE WHEN rate IS NULL THEN 'draft acceptance unknown'
            WHEN kind = 'ceiling' THEN round(100 * rate, 1) || ' % of proposed tokens accepted'
            ELSE 'per-token draft acceptance ' || round(100 * rate, 1) || ' %' END
       || CASE WHEN per_position IS NOT NULL AND len(per_position) > 0
               THEN ', per position ' || array_to_string(per_position, ' / ') ELSE '' END AS rate_text,
       round(100 * rate, 1) AS draft_rate_pct, k,
       CASE WHEN accept_len < $critical_accept_len THEN 'critical' ELSE 'warning' END AS severity
FROM s
WHERE CASE WHEN kind = 'ceiling' THEN accept_len < $ceiling_min_accept_len
           ELSE (accept_len < $min_accept_len AND (k IS NULL OR k >= 2))
             OR (rate IS NOT NULL AND rate < $min_draft_rate)
             OR (k IS NOT NULL AND accept_len / (k + 1) < $min_chain_rate)
             OR accept_len < $critical_accept_len END
