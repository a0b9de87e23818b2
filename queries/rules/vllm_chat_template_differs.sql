-- id: vllm_chat_template_differs
-- severity: info
-- title: Run {run_id}: the supplied chat template differs from the model's official one — output quality and speculative acceptance can drop
-- fix: Serve with the model's own template (drop --chat-template) unless the difference is intended; a drafter (EAGLE-3, MTP) trained on the official template accepts fewer tokens under another one.
-- source: issue 12 (vLLM's "supplied chat template is different from the official one" note, not raised before); docs/knowledge-base.md §7 (`It is different from official chat template ... may lead to performance degradation`) and R18 (wrong chat template lowers draft acceptance).
-- requires: events_other.kind=chat_template_differs
-- the notice is typed at ingest (parsers/vllm.toml vllm_chat_template_differs)
SELECT run_id, min(line_no) AS line_no FROM events_other
WHERE kind = 'chat_template_differs' AND run_id IS NOT NULL
GROUP BY run_id
