-- id: dtype_downcast_fp16
-- severity: warning
-- title: Run {run_id}: the bf16 model is cast to float16 ("Casting {cast}"){gpu_note} — bf16-trained weights and activations can overflow in fp16 (NaN / garbage output)
-- fix: Use --dtype auto (bf16) on bf16-capable GPUs (Ampere and newer, also MI200+); where fp16 is forced by the hardware (e.g. T4, V100), validate accuracy on your tasks.
-- source: docs/knowledge-base.md R27 — QwenLM/Qwen3 issue #868 (Qwen2 on V100), deepseek-ai/DeepSeek-V2 issue #93. Evidence: `Casting torch.bfloat16 to torch.float16.` (old GPUs or --dtype half / float16).
-- requires: events_other.kind=dtype_cast
SELECT e.run_id, min(e.line_no) AS line_no, any_value(e.text) AS cast,
       CASE WHEN any_value(r.gpu_cc) IS NOT NULL AND TRY_CAST(any_value(r.gpu_cc) AS DOUBLE) < 8.0
              THEN ' on ' || coalesce(any_value(r.gpu_name), 'a GPU') || ' (compute capability ' || any_value(r.gpu_cc) || ', no bf16 support)'
            WHEN any_value(r.gpu_name) IS NOT NULL THEN ' on ' || any_value(r.gpu_name)
            ELSE '' END AS gpu_note
FROM events_other e JOIN runs r USING (run_id)
WHERE e.kind = 'dtype_cast' AND e.text ILIKE '%bfloat16 to torch.float16%'
GROUP BY e.run_id
