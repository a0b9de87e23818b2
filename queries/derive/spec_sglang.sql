-- SGLang: acceptance is printed in the decode line of each scheduler (one per DP rank under
-- DP attention; TP ranks of one scheduler repeat nothing). Copy every scheduler's observation
-- into spec_stats in the common vocabulary.
--   accept_len        = printed "accept len": (accepted drafts + 1 bonus) / verify steps
--   num_spec_tokens   = k = speculative_num_steps (chain depth; num_draft_tokens - 1 for topk 1),
--                       the same number vLLM calls num_speculative_tokens
--   draft_accept_rate = (accept_len - 1) / k, per-token acceptance of the drafted chain
--   raw_rate          = the printed "accept rate", whose meaning changed by version
--                       (accept_len/(steps+1), accept_len/num_draft_tokens, (accept_len-1)/(draft_tokens-1))
-- For every run of the frame derive_spec (run_id, k, kind: method kind 'chain' | 'ceiling'); {runs} the same runs
INSERT INTO spec_stats (source_id, line_no, run_id, ts, rank, tp_rank, dp_rank, origin,
                        accept_len, raw_accept_len, raw_rate, draft_accept_rate, num_spec_tokens,
                        cumulative, definition)
SELECT d.source_id, d.line_no, d.run_id, d.ts, d.rank, d.tp_rank, dp_rank, 'sglang_decode',
       accept_len, accept_len, accept_rate,
       CASE WHEN p.k > 0 THEN least(1, greatest(0, (accept_len - 1) / p.k)) END,
       p.k, false,
       'SGLang decode line: accept_len = printed accept len (accepted drafts + 1 bonus per verify step); '
       || 'k = speculative_num_steps (= speculative_num_draft_tokens - 1 for topk 1 = vLLM num_speculative_tokens); '
       || CASE WHEN p.kind = 'ceiling' THEN 'k is a ceiling for this method: draft_accept_rate = (accept_len - 1) / k is a lower bound; '
               ELSE 'draft_accept_rate = (accept_len - 1) / k; ' END
       || 'raw_rate = the printed accept rate (its denominator changed across versions)'
FROM decode_stats d JOIN derive_spec p USING (run_id)
WHERE {runs} AND accept_len IS NOT NULL AND primary_rank
