-- decode_primary: the decode_stats rows of the primary rank(s) of the sources {sources} (one row
-- per scheduler report), with seq: the report's position in its scheduler's stream (run, vLLM
-- engine index or DP rank), counting the timed reports in line order (NULL without a time).
-- Consecutive reports differ by 1, so a rule finds a stretch of consecutive reports (a queue
-- that stays saturated) by grouping on seq - row_number() over its few candidate rows instead
-- of ordering every report of the run (queue_saturation: 0.3 s on a 2 GB log).
INSERT INTO decode_primary BY NAME
SELECT *, CASE WHEN ts IS NOT NULL THEN row_number() OVER (
         PARTITION BY source_id, run_id, coalesce(engine_idx, dp_rank, -1), ts IS NULL ORDER BY line_no) END AS seq
FROM decode_stats WHERE {sources} AND primary_rank
-- in line order, as decode_stats holds them: the window leaves its rows in partition order, and
-- aggregates that pick one of equal values (arg_max on a tie) follow the stored order
ORDER BY source_id, line_no
