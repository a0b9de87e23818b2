-- id: telemetry_gpu_memory_headroom
-- severity: warning
-- title: Run {run_id}: GPU {gpu_index} {what}: {free_gib} GiB free of {total_gib} GiB {when}
-- fix: {advice}
-- params: min_free_gib=3, critical_free_gib=1, idle_free_gib=10, min_util=0.5
-- source: docs/knowledge-base.md R09 sgl_mem_fraction_too_high (under ~3 GB free, activations and graph buffers have no headroom: OOM under long prompts or big batches; another process growing on the GPU shows here too) and R08 sgl_mem_fraction_too_low (over 10 GB left idle instead of KV cache means fewer concurrent requests; docs: 5-8 GB is right). Memory from nvidia-smi memory.used/total, DCGM FB_USED+FB_FREE, rocm-smi/amd-smi VRAM. Critical under 1 GiB free.
-- requires: gpu_samples.mem_total_mib
WITH s AS (
  SELECT rt.run_id, g.*, (g.mem_total_mib - g.mem_used_mib) / 1024.0 AS free_gib
  FROM gpu_samples g JOIN run_telemetry rt USING (source_id)
  WHERE g.mem_total_mib > 0 AND g.mem_used_mib IS NOT NULL
),
low AS (
  SELECT run_id, source_id, gpu_index, arg_min(line_no, free_gib) AS line_no, round(min(free_gib), 2) AS free_gib,
         round(max(mem_total_mib) / 1024.0, 1) AS total_gib, 'little memory headroom' AS what, 'at the tightest sample' AS "when",
         CASE WHEN min(free_gib) < $critical_free_gib THEN 'critical' ELSE 'warning' END AS severity,
         'Lower --mem-fraction-static (SGLang) or --gpu-memory-utilization (vLLM) a little, lower --max-running-requests / --max-num-seqs or --chunked-prefill-size, and check that no other process shares the GPU.' AS advice
  FROM s GROUP BY run_id, source_id, gpu_index
  HAVING min(free_gib) < $min_free_gib
),
idle AS (
  -- memory never used while the GPU was busy (KV cache sized too small)
  SELECT run_id, source_id, gpu_index, arg_min(line_no, free_gib) AS line_no, round(min(free_gib), 2) AS free_gib,
         round(max(mem_total_mib) / 1024.0, 1) AS total_gib, 'memory left idle while serving' AS what,
         'at least, in ' || count(*) || ' busy sample(s)' AS "when", 'info' AS severity,
         'Give the memory to the KV cache: raise --mem-fraction-static (SGLang) or --gpu-memory-utilization (vLLM) until 5-8 GB stay free.' AS advice
  FROM s WHERE gpu_util >= $min_util
  GROUP BY run_id, source_id, gpu_index
  HAVING min(free_gib) > $idle_free_gib AND count(*) >= 3
)
SELECT * FROM low UNION ALL SELECT * FROM idle
