-- Evidence that a run ran on Huawei Ascend NPUs, named as the log names it: decode/prefill lines
-- ending `npu graph: True|False` (SGLang NPU builds print npu/cpu instead of cuda), torch_npu /
-- vllm_ascend / `device=npu` mentions, `Ascend910B3`-style device names (the name is returned).
-- $1 run_id
SELECT count(*) > 0 AS is_npu,
       nullif(max(regexp_extract(raw, '(Ascend\s?\d{3}\w*)', 1)), '') AS device_name,
       any_value(CASE WHEN raw LIKE '%npu graph:%' THEN 'npu graph lines' WHEN raw ILIKE '%torch_npu%' THEN 'torch_npu'
                      WHEN raw ILIKE '%vllm_ascend%' OR raw ILIKE '%vllm-ascend%' THEN 'vllm-ascend'
                      WHEN raw LIKE '%Ascend%' THEN 'Ascend device name' ELSE 'device=npu' END) AS how
FROM (
  SELECT raw FROM lines_bulk WHERE run_id = $1 AND raw LIKE '%npu graph:%'
  UNION ALL
  SELECT raw FROM lines_other WHERE run_id = $1
    AND (raw LIKE '%npu graph:%' OR raw ILIKE '%torch_npu%' OR raw ILIKE '%vllm_ascend%' OR raw ILIKE '%vllm-ascend%'
         OR regexp_matches(raw, 'Ascend\s?\d{3}') OR raw ILIKE '%device=''npu''%' OR raw ILIKE '%device_type=npu%'
         OR raw LIKE '%Platform: npu%' OR raw ILIKE '%detected platform npu%')
  LIMIT 200
)
