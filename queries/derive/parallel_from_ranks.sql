-- TP / DP / PP sizes from the rank tags of the lines themselves (SGLang `[ts DP3 PP0 TP3 EP3]`,
-- vLLM `Worker_TP3`), for runs whose configuration was not logged (an excerpt). TP ranks are
-- global (node 2 of TP16 prints TP8-TP15; DP attention gives `DP3 TP3`), so size = highest
-- rank seen + 1: a lower bound when the excerpt does not show every rank.
-- Per run of {runs}
SELECT run_id, max(tp) + 1 AS tp_size, max(dp) + 1 AS dp_size FROM (
  SELECT run_id, tp_rank AS tp, dp_rank AS dp FROM decode_stats WHERE {runs}
  UNION ALL SELECT run_id, tp_rank, dp_rank FROM prefill_stats WHERE {runs}
  UNION ALL SELECT run_id, tp_rank, dp_rank FROM events WHERE {runs}
  UNION ALL SELECT run_id, tp_rank, dp_rank FROM errors WHERE {runs}
) GROUP BY run_id
