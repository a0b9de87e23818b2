-- vLLM: rewrite the spec_stats rows of one run into the common vocabulary.
--   V0 "Speculative metrics" (cumulative since start): V0 counts an accepted draft token even
--   after an earlier one was rejected, so accepted/drafted overstates what was kept. Verify
--   steps = drafted / k, every step emits its accepted prefix + 1 bonus, hence
--     accept_len = emitted / (drafted / k)   (= system efficiency x (k + 1))
--     draft_accept_rate = (emitted - steps) / drafted = (accept_len - 1) / k
--   V1 "SpecDecoding metrics" (per interval): Mean acceptance length includes the bonus token
--   from 0.9.0 (0.8.5 printed accepted/drafts without it: +1); 0.8.3-0.8.4 print only the rate:
--   accept_len = 1 + k x rate for chain methods, unknown for ceiling methods.
--   draft_accept_rate: chain methods (accept_len - 1) / k; ceiling methods (k is a maximum,
--   proposals vary in length) accepted / drafted, the acceptance of the tokens actually proposed.
-- For every run of the frame derive_spec (run_id, k: num_speculative_tokens, no_bonus: true for
-- vLLM 0.8.5 (mean without bonus), kind: method kind 'chain' | 'ceiling'); {runs} the same runs
UPDATE spec_stats SET
  num_spec_tokens = coalesce(num_spec_tokens, p.k),
  accept_len = CASE
    WHEN origin = 'vllm_v0' THEN emitted_tokens::DOUBLE * coalesce(num_spec_tokens, p.k) / nullif(drafted_tokens, 0)
    WHEN raw_accept_len IS NOT NULL THEN raw_accept_len + (CASE WHEN p.no_bonus THEN 1 ELSE 0 END)
    WHEN raw_rate IS NOT NULL AND p.k IS NOT NULL AND p.kind = 'chain' THEN 1 + p.k * raw_rate END,
  num_drafts = CASE
    WHEN num_drafts IS NOT NULL THEN num_drafts
    WHEN p.kind = 'chain' AND coalesce(num_spec_tokens, p.k) > 0 THEN round(drafted_tokens / coalesce(num_spec_tokens, p.k))
    WHEN raw_accept_len IS NOT NULL AND raw_accept_len + (CASE WHEN p.no_bonus THEN 1 ELSE 0 END) > 1
      THEN round(accepted_tokens / (raw_accept_len + (CASE WHEN p.no_bonus THEN 1 ELSE 0 END) - 1)) END,
  draft_accept_rate = CASE
    WHEN origin = 'vllm_v0' THEN least(1, greatest(0,
        (emitted_tokens - drafted_tokens::DOUBLE / nullif(coalesce(num_spec_tokens, p.k), 0)) / nullif(drafted_tokens, 0)))
    WHEN p.kind = 'chain' AND p.k > 0 AND raw_accept_len IS NOT NULL
      THEN least(1, greatest(0, (raw_accept_len + (CASE WHEN p.no_bonus THEN 1 ELSE 0 END) - 1) / p.k))
    ELSE coalesce(accepted_tokens::DOUBLE / nullif(drafted_tokens, 0), raw_rate) END,
  definition = CASE
    WHEN origin = 'vllm_v0' THEN 'vLLM V0 Speculative metrics (cumulative since start): accept_len = emitted / (drafted / k) '
         || '(= system efficiency x (k + 1)); draft_accept_rate = (accept_len - 1) / k; raw_rate = the printed draft acceptance '
         || 'rate, which counts accepted tokens after a rejection too'
    WHEN p.no_bonus THEN 'vLLM 0.8.5 SpecDecoding metrics: printed mean acceptance length excludes the bonus token: +1 added; '
         || CASE WHEN p.kind = 'chain' THEN 'draft_accept_rate = (accept_len - 1) / k' ELSE 'draft_accept_rate = accepted / drafted (k is a ceiling)' END
    WHEN raw_accept_len IS NOT NULL THEN 'vLLM SpecDecoding metrics: accept_len = printed mean acceptance length (1 bonus + accepted drafts per verify step); '
         || CASE WHEN p.kind = 'chain' THEN 'draft_accept_rate = (accept_len - 1) / k' ELSE 'draft_accept_rate = accepted / drafted (k is a ceiling)' END
    WHEN p.kind = 'chain' THEN 'vLLM 0.8.3-0.8.4 SpecDecoding metrics (rate only): accept_len = 1 + k x draft acceptance rate'
    ELSE 'vLLM SpecDecoding metrics (rate only, ceiling method): tokens per step unknown' END
FROM derive_spec p
WHERE {runs@spec_stats} AND spec_stats.run_id = p.run_id
