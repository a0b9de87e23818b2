-- id: rocm_aiter_jit_build
-- severity: warning
-- platform: rocm
-- title: Run {run_id}: {n_modules} aiter kernel module(s) were JIT-built for {build_s} s during start-up (slowest {slowest} at {slowest_s} s) — every fresh container pays this again
-- fix: Bake the built modules into the image (run one warm-up in the Dockerfile, or keep aiter's jit/build folder on a persistent volume), use an image whose aiter ships prebuilt kernels for this GPU (gfx942 / gfx950), and raise start-up probe timeouts above the build time meanwhile.
-- params: min_build_s=30
-- source: issue 12 (a 55 s aiter JIT kernel build during warm-up on ROCm, not raised); aiter/jit/core.py logs `[aiter] start build [module_x] under ...` / `[aiter] finish build [module_x], cost 23.6s`; docs/knowledge-base.md R33 (JIT/compile stalls at start-up, jit_kernel_compile_stall). min_build_s = 30 s: below that the build is lost in weight loading.
-- requires: events_other.kind=aiter_jit_build
WITH b AS (  -- typed at ingest (parsers/common.toml aiter_jit_build): text = module, value = seconds
  SELECT run_id, line_no, text AS module, value AS cost_s
  FROM events_other WHERE kind = 'aiter_jit_build' AND run_id IS NOT NULL
)
SELECT run_id, min(line_no) AS line_no, count(*) AS n_modules, round(sum(cost_s), 1) AS build_s,
       arg_max(module, cost_s) AS slowest, round(max(cost_s), 1) AS slowest_s
FROM b WHERE cost_s IS NOT NULL
GROUP BY run_id HAVING sum(cost_s) >= $min_build_s
