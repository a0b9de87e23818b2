-- id: sgl_mla_triton_fallback_non_sm100
-- severity: warning
-- platform: cuda
-- title: Run {run_id}: {model_arch} (MLA) on {gpu_sm} {gpu_name} fell back to the '{backend}' attention backend ({how})
-- fix: SGLang's default MLA backend logic only picks an optimized backend on SM100 (is_sm100_supported); on SM120 it falls to triton. Benchmark --attention-backend flashinfer (and any SM120-capable MLA backend) explicitly.
-- source: docs/knowledge-base.md R21 (sglang server_args.py DeepSeek handler; sglang PR #15788, issue #5064; field report Kimi-K2.5 on 8x RTX PRO 6000)
-- requires: runs.gpu_sm
-- engine: sglang
-- Fires when an MLA-architecture model (DeepSeek-V2/V3/R1 family, Kimi-K2/K2.5) runs on a
-- non-SM100 NVIDIA GPU with the triton backend chosen by default (logged or in the dump)
-- and no explicit --attention-backend; stays silent when the backend was set by the user.
-- Reads line text (issue 11: rules read events and the rollup, not lines): the command line a job script echoed (pattern shell_trace, selected by pattern first): whether --attention-backend was given.
WITH mla AS (
  SELECT r.* FROM runs r
  WHERE r.engine = 'sglang'
    AND regexp_matches(coalesce(r.model_arch, '') || ' ' || coalesce(r.model, ''),
                       '(?i)deepseek|kimi|minimax-m1|glm-?4\.5|mla')
    AND r.gpu_vendor = 'nvidia' AND r.gpu_sm IS NOT NULL AND r.gpu_sm <> 'SM100' AND r.gpu_sm <> 'SM103'
),
choice AS (
  SELECT run_id, min(line_no) AS line_no, any_value(text) AS backend, 'logged default' AS how
  FROM events_other WHERE kind = 'attention_backend_default' AND lower(text) = 'triton' GROUP BY run_id
  UNION ALL
  SELECT c.run_id, min(c.line_no), 'triton', 'attention_backend=''triton'' in server_args'
  FROM config c WHERE c.key = 'attention_backend' AND c.value = 'triton' AND c.origin = 'server_args'
    AND NOT EXISTS (SELECT 1 FROM events_other e WHERE e.run_id = c.run_id AND e.kind = 'attention_backend_default')
  GROUP BY c.run_id
)
SELECT m.run_id, ch.line_no, coalesce(m.model_arch, m.model) AS model_arch, m.gpu_sm, m.gpu_name,
       ch.backend, ch.how
FROM mla m JOIN choice ch USING (run_id)
-- the user forcing triton is a choice, not a fallback: only flag runs whose launch command
-- (shell trace) did not pass --attention-backend
WHERE NOT EXISTS (SELECT 1 FROM lines_other l WHERE l.run_id = m.run_id AND l.pattern = 'shell_trace'
                  AND l.raw LIKE '%--attention-backend%')
  AND NOT EXISTS (SELECT 1 FROM events_other e WHERE e.run_id = m.run_id AND e.kind = 'attention_backend_sm100')
QUALIFY row_number() OVER (PARTITION BY m.run_id ORDER BY ch.line_no) = 1
