-- primary_rank marks the rows that speak for one scheduler: per DP rank (each DP rank under
-- SGLang DP attention, and each vLLM engine, is its own scheduler with its own batch and its
-- own acceptance), the lowest TP rank (TP ranks of one scheduler repeat the same report).
-- Over the runs {runs}; {table} is decode_stats or prefill_stats
UPDATE {table} SET primary_rank = (coalesce(tp_rank, -1) = m.min_tp)
FROM (SELECT run_id, coalesce(dp_rank, -1) AS dp, min(coalesce(tp_rank, -1)) AS min_tp FROM {table}
      WHERE {runs} GROUP BY ALL) m
WHERE {table}.run_id = m.run_id AND coalesce({table}.dp_rank, -1) = m.dp
