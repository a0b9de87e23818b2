-- id: quant_kernel_not_optimized
-- severity: critical
-- title: Run {run_id}: {what}
-- fix: Omit --quantization (let the engine auto-detect awq_marlin / gptq_marlin) or pass the Marlin variant explicitly (--quantization awq_marlin / gptq_marlin). On ROCm/non-NVIDIA GPUs the Marlin kernels do not exist: compare against an FP8 or bf16 checkpoint instead.
-- source: docs/knowledge-base.md R24 — vllm issue #21376 (23 vs 123 tok/s, 5x, just from passing --quantization awq), issue #4359. Evidence: `Detected that the model can run with awq_marlin, however you specified quantization=awq explicitly, so forcing awq` and `<method> quantization is not fully optimized yet. The speed can be slower than non-quantized models.` Info instead of critical on AMD/ROCm, where no faster kernel is available.
-- requires: events_other.kind=quant_forced_legacy|quant_not_optimized
WITH ev AS (
  SELECT run_id, line_no, 1 AS prio,
         'quantization=' || coalesce(json_extract_string(attrs, '$.specified'), '?') || ' was forced although the model can run with '
         || text || ' — the legacy GEMM kernels are several times slower' AS what
  FROM events_other WHERE kind = 'quant_forced_legacy'
  UNION ALL
  SELECT run_id, line_no, 2,
         text || ' quantization runs on kernels that are "not fully optimized yet" (slower than non-quantized models)'
  FROM events_other WHERE kind = 'quant_not_optimized'
),
amd AS (  -- runs on a non-NVIDIA accelerator, named as the log names it (never guessed: Ascend is not ROCm)
  SELECT r.run_id,
         CASE WHEN r.gpu_vendor = 'amd' OR lower(p.text) = 'rocm' THEN 'AMD/ROCm'
              WHEN r.gpu_vendor = 'ascend' OR lower(p.text) = 'npu' THEN coalesce(r.gpu_name, 'Huawei Ascend NPU')
              ELSE coalesce(r.gpu_name, 'platform ' || p.text) END AS platform
  FROM runs r LEFT JOIN (SELECT run_id, any_value(text) AS text FROM events_other WHERE kind = 'platform' GROUP BY run_id) p USING (run_id)
  WHERE r.gpu_vendor IN ('amd', 'ascend') OR lower(p.text) IN ('rocm', 'npu', 'xpu', 'hpu', 'tpu', 'cpu')
     OR (r.gpu_vendor IS NOT NULL AND r.gpu_vendor <> 'nvidia')
)
SELECT ev.run_id, line_no,
       what || coalesce(' (' || a.platform || ': no Marlin kernels here, expected)', '') AS what,
       CASE WHEN a.run_id IS NOT NULL THEN 'info' ELSE 'critical' END AS severity,
       list(line_no) OVER (PARTITION BY ev.run_id ORDER BY prio, line_no ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS evidence_lines
FROM ev LEFT JOIN amd a USING (run_id)
QUALIFY row_number() OVER (PARTITION BY ev.run_id ORDER BY prio, line_no) = 1
