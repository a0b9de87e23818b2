-- id: sgl_single_stream_continuous_decode
-- severity: info
-- title: Run {run_id}: single-stream traffic ({n_small} of {n_busy} busy decode lines ran 1-2 requests, median {median_tok_s} tok/s at one request) with num_continuous_decode_steps=1 — the scheduler runs between every decode step
-- fix: A/B --num-continuous-decode-steps 4..8 (the story's tuned launch used 4); it amortises per-step scheduling over several decode steps at a small cost in time-to-first-token for newly arriving requests. One upstream PR notes it was not fully wired in some versions: measure.
-- params: max_running=2, min_share=0.5, min_lines=20
-- source: docs/knowledge-base.md R38 (field report; SemiAnalysisAI/InferenceX#1243: 4 -> 8 steps gave +6.3 % throughput / -5.9 % TPOT on DeepSeek-R1 FP8 MI355X at conc 64, +4.4 % at conc 4; sgl-project/sglang#23131). Single-stream = at least min_share of the busy primary-rank decode lines with #running-req <= max_running.
-- engine: sglang
WITH d AS (
  SELECT run_id, line_no, running_reqs, gen_tok_s FROM decode_primary
  WHERE primary_rank AND running_reqs > 0 AND run_id IS NOT NULL
),
agg AS (
  SELECT run_id, count(*) AS n_busy, count(*) FILTER (WHERE running_reqs <= $max_running) AS n_small,
         min(line_no) FILTER (WHERE running_reqs <= $max_running) AS line_no,
         median(gen_tok_s) FILTER (WHERE running_reqs = 1 AND gen_tok_s > 0) AS median_tok_s
  FROM d GROUP BY run_id
),
steps AS (
  SELECT run_id, min(line_no) AS cfg_line, max(try_cast(value AS INT)) AS steps FROM config
  WHERE key = 'num_continuous_decode_steps' GROUP BY run_id
)
SELECT a.run_id, a.line_no, a.n_small, a.n_busy, round(a.median_tok_s, 1) AS median_tok_s, s.steps,
       [s.cfg_line] AS evidence_lines
FROM agg a JOIN steps s USING (run_id) JOIN runs r USING (run_id)
WHERE r.engine = 'sglang' AND s.steps = 1
  AND a.n_small >= $min_lines AND a.n_small >= $min_share * a.n_busy
