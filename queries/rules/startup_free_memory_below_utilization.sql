-- id: startup_free_memory_below_utilization
-- severity: critical
-- title: Run {run_id} failed to start: only {free_gib} of {total_gib} GiB was free on the GPU, less than gpu_memory_utilization {util} asks for ({desired_gib} GiB) — about {used_gib} GiB is held by something else
-- advice: gpu_memory_utilization=lower
-- fix: Free the GPU (an earlier vLLM instance or another process still holds memory — check nvidia-smi) or lower --gpu-memory-utilization to at most {max_util} so the budget fits in the free memory.
-- source: docs/knowledge-base.md §2 start-up failure causes (KV/memory family, R08/R11 neighbours); parsers/vllm.toml §10: `ValueError: Free memory on device (F/T GiB) on startup is less than desired GPU memory utilization (U, D GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.` (V1 >= 0.9; >= 0.14 `on device cuda:0 (...)`). Real: vllm__mrpid12org__imageworks__nohup.out.
-- engine: vllm
WITH err AS (
  SELECT e.run_id, e.line_no, e.last_line, e.message FROM errors e
  WHERE e.message LIKE '%Free memory on device%on startup is less than desired GPU memory utilization%'
  QUALIFY row_number() OVER (PARTITION BY e.run_id ORDER BY e.line_no) = 1
),
exact AS (  -- the first line of the run's error records saying so (a record's traceback holds one
            -- line of text per physical line; no line text is scanned)
  SELECT e.run_id, min(e.line_no - 1 + list_position(list_transform(string_split(coalesce(e.traceback, e.message, ''), chr(10)),
           lambda x: x LIKE '%Free memory on device%is less than desired GPU memory utilization%'), true)) AS line_no
  FROM errors e WHERE e.run_id IN (SELECT run_id FROM err) GROUP BY e.run_id
),
v AS (
  SELECT e.run_id, coalesce(x.line_no, e.line_no) AS line_no, e.line_no AS err_line,
         TRY_CAST(regexp_extract(e.message, '\(([\d.]+)/[\d.]+ GiB\) on startup', 1) AS DOUBLE) AS free_gib,
         TRY_CAST(regexp_extract(e.message, '\([\d.]+/([\d.]+) GiB\) on startup', 1) AS DOUBLE) AS total_gib,
         TRY_CAST(regexp_extract(e.message, 'utilization \(([\d.]+), [\d.]+ GiB\)', 1) AS DOUBLE) AS util,
         TRY_CAST(regexp_extract(e.message, 'utilization \([\d.]+, ([\d.]+) GiB\)', 1) AS DOUBLE) AS desired_gib
  FROM err e LEFT JOIN exact x USING (run_id)
)
SELECT run_id, line_no, free_gib, total_gib, util, desired_gib,
       round(total_gib - free_gib, 2) AS used_gib,
       floor(100 * free_gib / nullif(total_gib, 0)) / 100 AS max_util,
       CASE WHEN err_line <> line_no THEN [err_line] END AS evidence_lines
FROM v
