-- id: fp8_weight_only_marlin
-- severity: info
-- platform: cuda
-- title: Run {run_id}: the GPU{gpu} has no native FP8 compute — the FP8 checkpoint runs weight-only (W8A16) through Marlin: memory is saved, prefill / compute-bound work does not get faster
-- fix: Set expectations: on pre-Ada GPUs (A100, RTX 3090) FP8 weights save memory and may help decode, but for compute-bound loads prefer bf16, INT8 (W8A8) or AWQ/GPTQ-Marlin checkpoints.
-- source: docs/knowledge-base.md R25 — vllm model_executor/layers/quantization/utils/marlin_utils_fp8.py (`Your GPU does not have native support for FP8 computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel.`).
-- requires: events_other.kind=fp8_marlin
SELECT e.run_id, min(e.line_no) AS line_no,
       coalesce(' (' || any_value(r.gpu_name) || coalesce(', ' || any_value(r.gpu_sm), '') || ')', '') AS gpu,
       count(*) AS n_lines
FROM events_other e JOIN runs r USING (run_id)
WHERE e.kind = 'fp8_marlin'
GROUP BY e.run_id
