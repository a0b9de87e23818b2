-- id: moe_untuned_kernel_config
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: fused-MoE kernels run with default (untuned) tile configs for {n_shapes} shape(s){device} — {example}
-- fix: Tune the fused-MoE Triton kernels for this GPU and expert shape and point the engine at the resulting JSON files.
-- fix.sglang: Tune with benchmark/kernels/fused_moe_triton/tuning_fused_moe_triton.py and put the files in SGLang's fused_moe configs folder.
-- fix.vllm: Tune with benchmarks/kernels/benchmark_moe.py --tune and set VLLM_TUNED_CONFIG_FOLDER to the folder of the files.
-- source: docs/knowledge-base.md R26 — vllm issue #17619 (H20, Mixtral shape: tuned vs default 1.31-1.60x at bs 1-32, kernel level), PRs #44152, #39904, #34846 (newer defaults narrow the gap; gpt-oss on H100 ~3.5 %); sglang PR #19003. Warning when a `Config file not found at .../E=..,N=..,device_name=<GPU>...json` names a missing tuned file; info when only the generic `Performance might be sub-optimal` notices (down_moe / W8A8 block FP8 defaults) appear.
-- requires: events_other.kind=moe_untuned_config
WITH ev AS (
  SELECT e.run_id, e.line_no, e.text, json_extract_string(e.attrs, '$.device_name') AS device,
         nullif(regexp_extract(json_extract_string(e.attrs, '$.config_path'), '(E=\d+,N=\d+[^/\]'']*?)\.json', 1), '') AS shape
  FROM events_other e WHERE e.kind = 'moe_untuned_config'
)
SELECT run_id, min(line_no) AS line_no,
       count(DISTINCT shape) AS n_shapes,
       coalesce(' on ' || any_value(device), '') AS device,
       coalesce('missing ' || min(shape) || '.json', 'default kernel config: ' || trim(arg_min(text, line_no))) AS example,
       CASE WHEN count(shape) > 0 THEN 'warning' ELSE 'info' END AS severity,
       count(*) AS n_lines
FROM ev GROUP BY run_id
