-- id: nccl_env_not_honoured
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: {variable}={value} was set, but NCCL {what}
-- fix: {advice}
-- source: NCCL_DEBUG=INFO lines (NVIDIA/nccl src/misc/param.cc, graph/tuning.cc, transport/*.cc; README.md (Telemetry) section 5): `NCCL_ALGO|NCCL_PROTO set by environment to X` then, with NCCL_DEBUG_SUBSYS=TUNING, `...: N Bytes -> Algo A proto P`: an algorithm or protocol outside the list set (or inside a `^` exclusion list) means NCCL did not follow it (another library overrode the variable, or it is not valid for that collective). NCCL_P2P_DISABLE=1 / NCCL_SHM_DISABLE=1 / NCCL_IB_DISABLE=1 with channels via P2P / SHM / network IB contradict the variable. A NCCL_* variable in the environment the server log printed, while the run's NCCL output (at INFO) never says it was `set by environment`, was not seen by NCCL's process (set in the wrong process, or after NCCL initialised): info.
-- requires: lines_other, nccl_config
-- Reads line text (issue 11: rules read events and the rollup, not lines): through the views nccl_config/nccl_channels, which parse NCCL_DEBUG INFO lines (kept as lines, selected by pattern).
WITH cfg AS (
  SELECT coalesce(n.run_id, rt.run_id) AS run, n.* EXCLUDE (run_id)
  FROM nccl_config n LEFT JOIN run_telemetry rt ON n.run_id IS NULL AND rt.source_id = n.source_id
),
ch AS (
  SELECT coalesce(c.run_id, rt.run_id) AS run, c.* EXCLUDE (run_id)
  FROM nccl_channels c LEFT JOIN run_telemetry rt ON c.run_id IS NULL AND rt.source_id = c.source_id
),
env AS (
  SELECT run, key AS variable, any_value(value) AS value, min(line_no) AS line_no, any_value(source_id) AS source_id
  FROM cfg WHERE origin = 'environment' AND run IS NOT NULL GROUP BY run, key
),
tuned AS (
  SELECT run, 'NCCL_' || upper(key) AS variable, value AS used, min(line_no) AS line_no, count(*) AS n
  FROM cfg WHERE origin = 'tuning' AND run IS NOT NULL GROUP BY run, key, value
),
algo_proto AS (
  SELECT e.run AS run_id, e.source_id, e.line_no, e.variable, e.value,
         'used ' || t.used || ' for ' || t.n || ' collective(s)' AS what,
         'Check the value (NCCL_ALGO: Ring, Tree, CollNet*, NVLS*, PAT; NCCL_PROTO: LL, LL128, Simple) and whether the engine overrides it for its own communicators; verify with NCCL_DEBUG_SUBSYS=TUNING.' AS advice,
         [t.line_no] AS evidence_lines
  FROM env e JOIN tuned t ON t.run = e.run AND t.variable = e.variable
  WHERE e.variable IN ('NCCL_ALGO', 'NCCL_PROTO')
    AND CASE WHEN starts_with(e.value, '^')
             THEN list_contains(string_split(upper(ltrim(e.value, '^')), ','), t.used)
             ELSE NOT list_contains(string_split(upper(e.value), ','), t.used) END
),
disabled AS (
  SELECT e.run AS run_id, e.source_id, e.line_no, e.variable, e.value,
         'still opened ' || count(*) || ' channel(s) via ' || any_value(c.transport) AS what,
         'The variable did not reach every process that creates a communicator (worker processes, Ray actors): export it before the server starts.' AS advice,
         (list(c.line_no ORDER BY c.line_no))[1:3] AS evidence_lines
  FROM env e JOIN ch c ON c.run = e.run
   AND ((e.variable = 'NCCL_P2P_DISABLE' AND c.transport = 'P2P') OR (e.variable = 'NCCL_SHM_DISABLE' AND c.transport = 'SHM'))
  WHERE e.value = '1' GROUP BY ALL
),
ib AS (
  SELECT e.run AS run_id, e.source_id, e.line_no, e.variable, e.value, 'used network ' || n.value AS what,
         'Check for a second NCCL (a bundled libnccl) or a plugin that ignores NCCL_IB_DISABLE.' AS advice,
         [min(n.line_no)] AS evidence_lines
  FROM env e JOIN cfg n ON n.run = e.run AND n.origin = 'network' AND n.value LIKE 'IB%'
  WHERE e.variable = 'NCCL_IB_DISABLE' AND e.value = '1' GROUP BY ALL
),
unseen AS (
  -- NCCL_* in the environment the log printed, never reported by NCCL although it logged at INFO
  SELECT c.run_id, r.source_id, min(c.line_no) AS line_no, c.key AS variable, any_value(c.value) AS value,
         'never reported reading it' AS what,
         'Set the variable in the environment of the process that runs NCCL (before launch), not after initialisation or in another process.' AS advice,
         CAST([] AS BIGINT[]) AS evidence_lines
  FROM config c JOIN runs r USING (run_id)
  WHERE c.key LIKE 'NCCL\_%' ESCAPE '\' AND c.key NOT LIKE 'NCCL\_DEBUG%' ESCAPE '\'
    AND c.run_id IN (SELECT run FROM cfg WHERE origin IN ('environment', 'network', 'comm'))
    AND NOT EXISTS (SELECT 1 FROM env e WHERE e.run = c.run_id AND e.variable = c.key)
  GROUP BY c.run_id, r.source_id, c.key
)
SELECT *, 'warning' AS severity FROM algo_proto
UNION ALL SELECT *, 'warning' FROM disabled
UNION ALL SELECT *, 'warning' FROM ib
UNION ALL SELECT *, 'info' FROM unseen
