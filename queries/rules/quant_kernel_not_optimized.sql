-- id: quant_kernel_not_optimized
-- severity: critical
-- title: Run {run_id}: {what}
-- fix: Omit --quantization (let the engine auto-detect awq_marlin / gptq_marlin) or pass the Marlin variant explicitly (--quantization awq_marlin / gptq_marlin). On ROCm/non-NVIDIA GPUs the Marlin kernels do not exist: compare against an FP8 or bf16 checkpoint instead.
-- source: diagnostics.md R24 — vllm issue #21376 (23 vs 123 tok/s, 5x, just from passing --quantization awq), issue #4359. Evidence: `Detected that the model can run with awq_marlin, however you specified quantization=awq explicitly, so forcing awq` and `<method> quantization is not fully optimized yet. The speed can be slower than non-quantized models.` Info instead of critical on AMD/ROCm, where no faster kernel is available.
WITH ev AS (
  SELECT run_id, line_no, 1 AS prio,
         'quantization=' || coalesce(json_extract_string(attrs, '$.specified'), '?') || ' was forced although the model can run with '
         || text || ' — the legacy GEMM kernels are several times slower' AS what
  FROM events WHERE kind = 'quant_forced_legacy'
  UNION ALL
  SELECT run_id, line_no, 2,
         text || ' quantization runs on kernels that are "not fully optimized yet" (slower than non-quantized models)'
  FROM events WHERE kind = 'quant_not_optimized'
),
amd AS (
  SELECT r.run_id FROM runs r
  WHERE r.gpu_vendor = 'amd'
     OR EXISTS (SELECT 1 FROM events p WHERE p.run_id = r.run_id AND p.kind = 'platform' AND lower(p.text) = 'rocm')
)
SELECT run_id, line_no,
       what || CASE WHEN run_id IN (SELECT run_id FROM amd) THEN ' (AMD/ROCm: no Marlin kernels here, expected)' ELSE '' END AS what,
       CASE WHEN run_id IN (SELECT run_id FROM amd) THEN 'info' ELSE 'critical' END AS severity,
       list(line_no) OVER (PARTITION BY run_id ORDER BY prio, line_no ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS evidence_lines
FROM ev
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY prio, line_no) = 1
