-- id: jit_kernel_compile_stall
-- severity: warning
-- title: Run {run_id}: {what} — {effect}
-- fix: Persist the DeepGEMM / FlashInfer / Triton JIT caches across restarts and install the flashinfer-jit-cache / cubin wheels.
-- fix.sglang: Precompile with the same arguments (python3 -m sglang.compile_deep_gemm ...).
-- fix.vllm: Widen vLLM's warm-up to the shapes that JIT-compiled at run time (VLLM_SKIP_DEEP_GEMM_WARMUP only if runtime JIT is acceptable).
-- params: min_gap_s=120
-- source: docs/knowledge-base.md R34 (sgl-project/sglang#4773, #15891, #5031, #7339: first gsm8k pass 606 vs 1186 tok/s, ~20 s first-token stall; vllm-project/vllm#47456, #54529: cold FlashInfer JIT added ~120 s to init, 264 s vs 143 s). Evidence: SGLang "Entering DeepGEMM JIT Pre-Compile session" / "DeepGEMM JIT code generation ... Please wait."; vLLM "<X> kernel JIT compilation during inference: <kernel>" (jit_monitor); a silent gap >= min_gap_s after vLLM's torch.compile before the next start-up step (first-use FlashInfer JIT).
-- requires: events_other.kind=jit_compile|torch_compile
WITH jit AS (
  SELECT e.run_id, e.line_no, e.text, r.ready_line,
         (r.ready_line IS NOT NULL AND e.line_no > r.ready_line) AS serving
  FROM events_other e JOIN runs r USING (run_id)
  WHERE e.kind = 'jit_compile'
),
jit_run AS (
  SELECT run_id, min(line_no) AS line_no, count(*) AS n, bool_or(serving) AS serving, bool_and(serving) AS all_serving,
         string_agg(DISTINCT CASE WHEN text LIKE '%DeepGEMM%' THEN 'DeepGEMM'
                                  ELSE split_part(text, ' ', 1) END, ', ') AS kinds,
         list(line_no ORDER BY line_no) AS lines
  FROM jit GROUP BY run_id
),
startup_ev AS (  -- events but the per-request ones (events_bulk: millions on a busy server, never a start-up step)
  SELECT run_id, line_no, ts FROM events_other WHERE ts IS NOT NULL
),
after_compile AS (  -- vLLM: the first event after torch.compile finished, on the same run
  SELECT c.run_id, c.line_no, c.ts,
         (SELECT min(e.line_no) FROM startup_ev e WHERE e.run_id = c.run_id AND e.line_no > c.line_no) AS next_line
  FROM events_other c WHERE c.kind = 'torch_compile' AND c.ts IS NOT NULL
),
gap AS (
  SELECT a.run_id, a.line_no, n.line_no AS next_line, epoch(n.ts) - epoch(a.ts) AS gap_s
  FROM after_compile a JOIN startup_ev n ON n.run_id = a.run_id AND n.line_no = a.next_line
  JOIN runs r ON r.run_id = a.run_id
  WHERE r.engine = 'vllm' AND (r.ready_line IS NULL OR a.line_no < r.ready_line)
  QUALIFY row_number() OVER (PARTITION BY a.run_id ORDER BY epoch(n.ts) - epoch(a.ts) DESC) = 1
)
SELECT coalesce(g.run_id, j.run_id) AS run_id, coalesce(g.line_no, j.line_no) AS line_no,
       concat_ws('; ',
         CASE WHEN g.gap_s IS NOT NULL THEN CAST(round(g.gap_s) AS BIGINT) || ' s of silence after torch.compile finished, before the next start-up step (line ' || g.next_line || ')' END,
         CASE WHEN j.n IS NOT NULL THEN j.n || ' kernel JIT compilation(s) (' || j.kinds || ')'
           || CASE WHEN j.all_serving THEN ' while serving' WHEN j.serving THEN ' at start-up and while serving' ELSE ' at start-up' END END) AS what,
       concat_ws('; ',
         CASE WHEN g.gap_s IS NOT NULL THEN 'start-up waited on first-use kernel compilation/autotuning (cold FlashInfer/Triton JIT cache is the usual cause)' END,
         CASE WHEN j.serving THEN 'requests that hit an uncompiled shape stalled until the kernel was built'
              WHEN j.n IS NOT NULL THEN 'start-up waits for the compiler (DeepGEMM pre-compile typically 10-20 min) and first requests can still stall' END) AS effect,
       j.n AS n_jit, round(g.gap_s, 1) AS gap_s,
       list_filter(list_concat(CASE WHEN g.next_line IS NOT NULL THEN [g.next_line] END, j.lines),
                   lambda x: x <> coalesce(g.line_no, j.line_no))[1:5] AS evidence_lines
FROM (SELECT * FROM gap WHERE gap_s >= $min_gap_s) g
FULL OUTER JOIN jit_run j ON j.run_id = g.run_id
