-- watch_history: earlier runs of every model (with TP size and GPU), oldest first, for
-- the live comparisons of `logsleuth watch` (weight phase, graph capture, time to ready,
-- single-stream decode) and the weight size behind its GB/s figure: the weight memory each
-- rank reported when loading ended (largest per rank, so a draft model's second report does
-- not count), summed over ranks, or one rank's figure times the TP size when ranks are
-- not tagged (vLLM workers).
WITH per_rank AS (
    SELECT run_id, coalesce(rank, '') AS rank, max(value) AS gb
    FROM events_other
    WHERE kind = 'weights_loaded' AND value > 0
    GROUP BY ALL
), weights AS (
    SELECT run_id, sum(gb) AS gb_sum, max(gb) AS gb_max, count(*) FILTER (WHERE rank <> '') AS tagged
    FROM per_rank GROUP BY run_id
)
SELECT s.run_id, s.model, s.tp_size, s.gpu_name, r.started_at, s.end_state,
       s.weight_load_s, s.cuda_graph_capture_s, s.time_to_ready_s, s.single_stream_tok_s,
       CASE WHEN w.tagged > 1 THEN w.gb_sum ELSE w.gb_max * coalesce(s.tp_size, 1) END AS weights_gb
FROM run_summary s
JOIN runs r USING (run_id)
LEFT JOIN weights w USING (run_id)
WHERE s.model IS NOT NULL
ORDER BY r.started_at NULLS FIRST, s.run_id
