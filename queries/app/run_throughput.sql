-- run_throughput: generation throughput over time of one run, primary rank only (one
-- value per scheduler report, not one per tensor-parallel rank).
SELECT gen_tok_s
FROM decode_primary
WHERE run_id = $run_id
ORDER BY line_no
