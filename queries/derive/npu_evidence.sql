-- Evidence that a run ran on Huawei Ascend NPUs, named as the log names it: decode/prefill lines
-- ending `npu graph: True|False` (SGLang NPU builds print npu/cpu instead of cuda), torch_npu /
-- vllm_ascend / `device=npu` mentions, `Ascend910B3`-style device names (the name is returned).
-- Per run of {runs} with evidence (the first 200 lines of evidence, stats lines first)
WITH hits AS (
  SELECT run_id, 0 AS part, line_no, raw FROM lines_bulk WHERE {runs} AND raw LIKE '%npu graph:%'
  UNION ALL
  SELECT run_id, 1, line_no, raw FROM lines_other WHERE {runs}
    AND (raw LIKE '%npu graph:%' OR raw ILIKE '%torch_npu%' OR raw ILIKE '%vllm_ascend%' OR raw ILIKE '%vllm-ascend%'
         OR regexp_matches(raw, 'Ascend\s?\d{3}') OR raw ILIKE '%device=''npu''%' OR raw ILIKE '%device_type=npu%'
         OR raw LIKE '%Platform: npu%' OR raw ILIKE '%detected platform npu%')
),
sample AS (
  SELECT * FROM hits QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY part, line_no) <= 200
)
SELECT run_id,
       nullif(max(regexp_extract(raw, '(Ascend\s?\d{3}\w*)', 1)), '') AS device_name,
       arg_min(CASE WHEN raw LIKE '%npu graph:%' THEN 'npu graph lines' WHEN raw ILIKE '%torch_npu%' THEN 'torch_npu'
                    WHEN raw ILIKE '%vllm_ascend%' OR raw ILIKE '%vllm-ascend%' THEN 'vllm-ascend'
                    WHEN raw LIKE '%Ascend%' THEN 'Ascend device name' ELSE 'device=npu' END, (part, line_no)) AS how
FROM sample GROUP BY run_id
