-- id: long_weight_loading
-- severity: info
-- title: Run {run_id}: {detail}
-- fix: Load from local NVMe or a pre-warmed page cache. Raise readiness/startup-probe timeouts above the measured load time, and do not kill a server whose shard bar is still moving.
-- fix.sglang: On network storage: --model-loader-extra-config '{"enable_multithread_load": true, "num_threads": 16}' and --weight-loader-disable-mmap.
-- fix.vllm: On network storage: --safetensors-load-strategy eager, fastsafetensors or runai_streamer.
-- params: min_load_s=180, warn_load_s=600, min_killed_s=60
-- source: docs/knowledge-base.md R32 (field report: a 547 GB Kimi-K2.5 took 5-10 min and was mistaken for a hang; sgl-project/sglang#18124 (24 m 46 s -> 6 m 11 s with a 64-thread loader), #7469, #7277; vllm-project/vllm#32347 (577 s), #24469; vLLM troubleshooting "Hangs loading a model from disk"). min_load_s: Qwen3-32B on a network mount took 4 m 18 s vs 32 s local, so >3 min is slow storage; warn_load_s = 600 s, the Knative/KServe default progress deadline (orchestrators kill slower starts). Download and load are different phases: seconds spent downloading from the Hub (vLLM `Time spent downloading weights`) are subtracted before judging storage. Seconds: SGLang lowest rank "Load weight begin" -> "Load weight end", vLLM "Model loading took X GiB and Y seconds"; size = per-rank weight memory x TP x PP.
-- Reads line text (issue 11: rules read events and the rollup, not lines): the elapsed time of the shard progress bar, read from the raw text of the weight_shards event lines only (joined on their line numbers).
WITH w AS (
  SELECT run_id, kind, line_no, ts, value, attrs, coalesce(tp_rank, -1) AS rk FROM events_other
  WHERE kind IN ('weights_begin', 'weights_loaded') AND run_id IS NOT NULL
),
low AS (SELECT run_id, min(rk) AS rk FROM w GROUP BY run_id),
sgl AS (  -- SGLang: the lowest rank's own begin -> end
  SELECT b.run_id, epoch(e.ts) - epoch(b.ts) AS secs, e.value AS gb_rank, e.line_no AS end_line
  FROM (SELECT w.run_id, min(w.ts) AS ts FROM w JOIN low USING (run_id, rk) WHERE kind = 'weights_begin' GROUP BY 1) b
  JOIN (SELECT w.run_id, arg_min(w.ts, w.line_no) AS ts, arg_min(w.value, w.line_no) AS value, min(w.line_no) AS line_no
        FROM w JOIN low USING (run_id, rk) WHERE kind = 'weights_loaded' GROUP BY 1) e USING (run_id)
  JOIN runs r USING (run_id)
  WHERE e.ts >= b.ts AND r.engine = 'sglang'
),
vl AS (  -- vLLM: "Model loading took X GiB memory and Y seconds"
  SELECT run_id, max(value) AS secs, max(try_cast(attrs->>'mem_gib' AS DOUBLE)) * 1.073741824 AS gb_rank,
         min(line_no) AS end_line
  FROM events_other WHERE kind = 'weights_loaded' AND value IS NOT NULL AND attrs->>'mem_gib' IS NOT NULL GROUP BY run_id
),
shards AS (
  SELECT e.run_id, e.line_no, try_cast(e.attrs->>'n' AS BIGINT) AS n, try_cast(e.attrs->>'total' AS BIGINT) AS total,
         regexp_extract(l.raw, '\[(?:(\d+):)?(\d+):(\d+)<', ['h', 'm', 's']) AS el
  FROM events_other e JOIN lines_other l ON l.source_id = e.source_id AND l.line_no = e.line_no
  WHERE e.kind = 'weight_shards'
),
last_shard AS (
  SELECT run_id, arg_max(line_no, line_no) AS line_no, arg_max(n, line_no) AS n, arg_max(total, line_no) AS total,
         arg_max(coalesce(try_cast(nullif(el.h, '') AS INT), 0) * 3600 + try_cast(el.m AS INT) * 60
                 + try_cast(el.s AS INT), line_no) AS elapsed_s,
         -- still advancing: the bar's count grew between its last two updates
         arg_max(n, line_no) > coalesce(list_sort(list(n))[-2], -1) AS advancing
  -- the main checkpoint's bar (most shards); a drafter's 1/1 bar comes later
  FROM (SELECT *, max(total) OVER (PARTITION BY run_id) AS max_total FROM shards WHERE n IS NOT NULL)
  WHERE total = max_total GROUP BY run_id
),
dl AS (  -- Hugging Face download inside the load phase ("Time spent downloading weights for X: N seconds"): network, not storage
  SELECT run_id, sum(value) AS download_s FROM events_other WHERE kind = 'weights_download' AND value > 0 GROUP BY run_id
),
facts AS (
  SELECT r.run_id, r.source_id, r.ordinal, r.engine, r.end_state, r.end_line, r.tp_size, r.pp_size,
         coalesce(CASE WHEN r.engine = 'sglang' THEN s.secs END, r.weight_load_s)
           - CASE WHEN dl.download_s IS NULL THEN 0  -- (least() skips NULLs: it must not see one)
                  ELSE least(dl.download_s, coalesce(CASE WHEN r.engine = 'sglang' THEN s.secs END, r.weight_load_s, 0)) END
           AS load_s,
         dl.download_s,
         coalesce(s.gb_rank, v.gb_rank) AS gb_rank, coalesce(s.end_line, v.end_line) AS end_line_w,
         ls.line_no AS shard_line, ls.n, ls.total, ls.elapsed_s, ls.advancing,
         EXISTS (SELECT 1 FROM events_other x WHERE x.run_id = r.run_id AND x.kind = 'weights_loaded') AS loaded
  FROM runs r LEFT JOIN sgl s USING (run_id) LEFT JOIN vl v USING (run_id) LEFT JOIN last_shard ls USING (run_id)
       LEFT JOIN dl USING (run_id)
),
f2 AS (
  SELECT f.*,
    lead(CASE WHEN f.loaded THEN f.load_s END) OVER w AS next_load_s, lead(f.run_id) OVER w AS next_run,
    lag(CASE WHEN NOT f.loaded AND f.n < f.total THEN f.n END) OVER w AS prev_n,
    lag(f.total) OVER w AS prev_total, lag(f.elapsed_s) OVER w AS prev_elapsed, lag(f.run_id) OVER w AS prev_run,
    gb_rank * coalesce(tp_size, 1) * coalesce(pp_size, 1) AS total_gb
  FROM facts f WINDOW w AS (PARTITION BY f.source_id ORDER BY f.ordinal)
)
-- 1. a load that finished but took long
SELECT run_id, coalesce(end_line_w, shard_line) AS line_no,
  'weights took ' || CAST(round(load_s) AS BIGINT) || ' s (' || round(load_s / 60, 1) || ' min) to load'
  || CASE WHEN download_s > 0 THEN ' after ' || CAST(round(download_s) AS BIGINT) || ' s of Hugging Face download (network time, not counted against storage)' ELSE '' END
  || CASE WHEN total_gb > 0 THEN ' — ' || round(gb_rank, 1) || ' GB per rank x ' || (coalesce(tp_size, 1) * coalesce(pp_size, 1))
          || ' rank(s) = ' || CAST(round(total_gb) AS BIGINT) || ' GB at ' || round(total_gb / load_s, 2) || ' GB/s' ELSE '' END
  || CASE WHEN n IS NOT NULL AND n = total AND total > 1 AND elapsed_s > 0 THEN '; the shard bar advanced steadily to ' || n || '/' || total
          || coalesce(' (~' || round(elapsed_s / n, 1) || ' s per shard)', '') || ': slow storage, not a hang' ELSE '' END
  || CASE WHEN prev_n IS NOT NULL THEN '; the previous launch in this file (run ' || prev_run || ') was stopped at '
          || prev_n || '/' || prev_total || ' shards after ' || (prev_elapsed // 60) || ' min ' || (prev_elapsed % 60)
          || ' s, before this long a load could finish' ELSE '' END AS detail,
  round(load_s, 1) AS load_s, round(total_gb / load_s, 2) AS gb_per_s, n AS shards_done, total AS shards_total,
  CASE WHEN load_s >= $warn_load_s THEN 'warning' END AS severity,
  CASE WHEN shard_line IS NOT NULL AND shard_line <> coalesce(end_line_w, shard_line) THEN [shard_line] END AS evidence_lines
FROM f2 WHERE loaded AND load_s >= $min_load_s
UNION ALL
-- 2. a launch stopped (killed, or the log ends) while the shard bar was still moving
SELECT run_id, shard_line AS line_no,
  CASE WHEN end_state = 'killed' THEN 'killed during weight loading at ' ELSE 'the log ends during weight loading at ' END
  || n || '/' || total || ' shards (' || CAST(round(100.0 * n / total) AS BIGINT) || ' %) after ' || (elapsed_s // 60) || ' min '
  || (elapsed_s % 60) || ' s while shard progress was still advancing (~' || round(elapsed_s / n, 1)
  || ' s per shard) — not a hang: at that pace loading needed ~' || CAST(round(elapsed_s * total / n / 60.0, 1) AS VARCHAR)
  || ' min'
  || CASE WHEN next_load_s IS NOT NULL THEN '; the relaunch in this file (run ' || next_run || ') loaded in '
          || CAST(round(next_load_s) AS BIGINT) || ' s (' || round(next_load_s / 60, 1) || ' min)' ELSE '' END AS detail,
  NULL, NULL, n, total,
  NULL AS severity,
  CASE WHEN end_state = 'killed' AND end_line IS NOT NULL THEN [end_line] END AS evidence_lines
FROM f2
WHERE NOT loaded AND n < total AND advancing AND end_state IN ('killed', 'truncated') AND elapsed_s >= $min_killed_s
UNION ALL
-- 3. only the shard progress bar tells: it completed, slowly, and no load time was printed
SELECT run_id, shard_line AS line_no,
  'the weight shard bar took ' || (elapsed_s // 60) || ' min ' || (elapsed_s % 60) || ' s for ' || total
  || ' shards (~' || round(elapsed_s / total, 1) || ' s per shard) and no load time was printed — slow storage or a network mount, seen only on the progress bar' AS detail,
  elapsed_s AS load_s, NULL, n, total,
  CASE WHEN elapsed_s >= $warn_load_s THEN 'warning' END AS severity,
  NULL AS evidence_lines
FROM f2
WHERE n = total AND total > 1 AND elapsed_s >= $min_load_s AND load_s IS NULL
