-- id: nccl_watchdog_timeout
-- severity: critical
-- platform: cuda, rocm
-- title: Run {run_id}: {what} — {meaning}
-- fix: Early collectives (low SeqNum) that never finish mean broken GPU peer-to-peer: test with NCCL_P2P_DISABLE=1, disable ACS/IOMMU (or fix the VM's PCIe passthrough), rerun with NCCL_DEBUG=INFO. A late timeout means one rank stopped: find it (py-spy dump, the rank whose log stops first; long JIT compile, OOM, hang). A known-long compile is benign.
-- fix.vllm: VLLM_RINGBUFFER_WARNING_INTERVAL only changes how often vLLM prints the shm-broadcast notice during such a compile.
-- params: early_seq=5, min_startup_shm_waits=5
-- source: docs/knowledge-base.md R30 (vllm-project/vllm#6042, #8978, #46611; NVIDIA/nccl#199; vllm-project/vllm-ascend#9287). torch ProcessGroupNCCL "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=N, OpType=..., Timeout(ms)=...)"; SeqNum <= early_seq = first collectives. vLLM "No available shared memory broadcast block found in 60 seconds": one notice during torch.compile/loading is benign; notices followed by a start-up milestone (compile, graph capture, KV sizing) were slow start-up work; the rule fires on notices after the server was ready with no start-up milestone after them (workers stopped answering while serving), or on min_startup_shm_waits (>= 5 min) notices that end the start-up with no progress after them.
-- Reads line text (issue 11: rules read events and the rollup, not lines): the rank tag and WorkNCCL fields of the error's own line (the [Rank N] tag sits in the line's prefix, not in errors.message), joined on its line number.
WITH wd AS (
  SELECT e.run_id, e.line_no,
         try_cast(regexp_extract(l.raw, 'SeqNum=(\d+)', 1) AS BIGINT) AS seq,
         nullif(regexp_extract(l.raw, 'OpType=(\w+)', 1), '') AS op,
         try_cast(regexp_extract(l.raw, 'Timeout\(ms\)=(\d+)', 1) AS BIGINT) AS timeout_ms,
         try_cast(regexp_extract(l.raw, 'ran for (\d+) milliseconds', 1) AS BIGINT) AS ran_ms,
         regexp_extract(l.raw, '\[Rank (\d+)\]', 1) AS rank_txt
  FROM errors e JOIN lines_other l ON l.source_id = e.source_id AND l.line_no = e.line_no
  WHERE e.kind = 'nccl_watchdog_timeout' AND e.run_id IS NOT NULL
),
wd_run AS (
  SELECT run_id, min(line_no) AS line_no, min(seq) AS seq, arg_min(op, coalesce(seq, 0)) AS op,
         max(timeout_ms) AS timeout_ms, max(ran_ms) AS ran_ms,
         greatest(count(DISTINCT nullif(rank_txt, '')), 1) AS n_ranks, list(line_no ORDER BY line_no) AS lines
  FROM wd GROUP BY run_id
),
progress AS (  -- start-up milestones: a notice followed by one of these was slow start-up work, not a hang
  SELECT run_id, max(line_no) AS last_progress FROM events_other
  WHERE kind IN ('weights_loaded', 'weights_load_time', 'torch_compile', 'compile_graph', 'compile_cache_hit',
                 'kv_cache_memory', 'kv_cache_tokens', 'cuda_graph_end', 'init_engine')
  GROUP BY run_id
),
shm AS (  -- notices with no start-up progress after them
  SELECT e.run_id, e.line_no, (r.ready_line IS NOT NULL AND e.line_no > r.ready_line) AS serving
  FROM events_other e JOIN runs r USING (run_id) LEFT JOIN progress p USING (run_id)
  WHERE e.kind = 'shm_broadcast_wait' AND e.line_no > coalesce(p.last_progress, 0)
),
shm_serving AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n, list(line_no ORDER BY line_no) AS lines
  FROM shm WHERE serving GROUP BY run_id
),
shm_startup AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n, list(line_no ORDER BY line_no) AS lines
  FROM shm WHERE NOT serving GROUP BY run_id HAVING count(*) >= $min_startup_shm_waits
)
SELECT run_id, line_no,
       'NCCL watchdog timeout: ' || coalesce(op, 'a collective') || coalesce(' (SeqNum=' || seq || ')', '')
         || coalesce(' ran ' || CAST(round(ran_ms / 1000.0) AS BIGINT) || ' s', '')
         || coalesce(' (limit ' || CAST(round(timeout_ms / 1000.0) AS BIGINT) || ' s)', '')
         || ' on ' || n_ranks || ' rank(s)' AS what,
       CASE WHEN seq IS NOT NULL AND seq <= $early_seq
            THEN 'one of the first collectives never completed: GPU peer-to-peer is likely broken (ACS/IOMMU/virtualization)'
            ELSE 'a late collective: one rank stopped (long compile, OOM or a hang) while the others waited' END AS meaning,
       seq, CAST(round(timeout_ms / 1000.0) AS BIGINT) AS timeout_s, n_ranks,
       list_filter(lines, lambda x: x <> line_no)[1:5] AS evidence_lines
FROM wd_run
UNION ALL
SELECT run_id, line_no,
       'vLLM workers did not answer the engine for ' || n || ' x 60 s after the server was ready' AS what,
       'a worker is stuck (hang, NCCL deadlock or a runtime compile) while serving' AS meaning,
       NULL, NULL, NULL, list_filter(lines, lambda x: x <> line_no)[1:5]
FROM shm_serving
UNION ALL
SELECT run_id, line_no,
       'vLLM startup stalled: ' || n || ' "No available shared memory broadcast block" notices in a row and no startup progress after them' AS what,
       'the workers hung during start-up (often the first NCCL collectives over broken P2P); one notice during compilation alone is benign' AS meaning,
       NULL, NULL, NULL, list_filter(lines, lambda x: x <> line_no)[1:5]
FROM shm_startup
