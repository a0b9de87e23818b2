-- id: sampling_defaults_overridden
-- severity: info
-- title: Run {run_id}: default sampling parameters come from the model's generation config{params} — requests that set no sampling options are not sampled with the engine defaults
-- fix: When comparing engines or runs, send explicit sampling parameters from the client (temperature, top_p, top_k, repetition_penalty), or pin the server defaults; use the model's official chat template.
-- fix.sglang: Pin the defaults with --sampling-defaults openai.
-- fix.vllm: Pin the defaults with --generation-config vllm.
-- source: docs/knowledge-base.md R39 (vllm-project/vllm#15281). Evidence: vLLM "Default sampling parameters have been overridden by the model's Hugging Face generation config ..." and either engine's "Using default (chat) sampling params from model (generation config): {...}" (SGLang prints it with --sampling-defaults model, its default in newer releases). Different sampling changes output lengths, spec-decoding acceptance and quality between compared runs.
-- Reads line text (issue 11: rules read events and the rollup, not lines): the {...} of the default-sampling-params lines (pattern default_sampling_params, kept as lines), selected by pattern before any text is read.
WITH ev AS (
  SELECT run_id, line_no, NULL AS params FROM events_other WHERE kind = 'sampling_overridden' AND run_id IS NOT NULL
  UNION ALL
  SELECT run_id, line_no, regexp_extract(raw, '(\{.*\})', 1) FROM lines_other
  WHERE pattern = 'default_sampling_params' AND run_id IS NOT NULL
)
SELECT run_id, min(line_no) AS line_no,
       coalesce(' (' || nullif(max(params), '') || ')', '') AS params,
       list_sort(list(DISTINCT line_no))[2:4] AS evidence_lines
FROM ev GROUP BY run_id
