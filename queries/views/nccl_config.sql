-- nccl_config: what NCCL was configured with and chose, one row per fact, from the
-- NCCL_DEBUG=INFO lines of any source. origin:
--   version      `NCCL version 2.21.5+cuda12.4` (bare printf <= 2.21, INFO line >= 2.22)
--   environment  `NCCL_PROTO set by environment to Simple`, `NCCL_IB_DISABLE set by environment to 0.`
--                (value as typed; the trailing period of numeric params dropped)
--   network      `Using network IB|Socket|...`
--   comm         `comm 0x.. rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0` -> nranks, nnodes, mnnvl
--   tuning       `AllReduce: 4 Bytes -> Algo RING proto SIMPLE ...` -> algo, proto (uppercased: older
--                builds printed Ring/Simple)
WITH n AS (
  SELECT source_id, line_no, run_id, raw,
         nullif(regexp_extract(raw, '([A-Za-z0-9_.\-]+):(\d+):(\d+) \[(\d+)\] NCCL', 1), '') AS host,
         TRY_CAST(nullif(regexp_extract(raw, '\[(\d+)\] NCCL INFO', 1), '') AS INTEGER) AS cuda_dev
  FROM lines_other WHERE raw LIKE '%NCCL%'
)
SELECT source_id, line_no, run_id, host, cuda_dev, 'version' AS origin, 'version' AS key,
       regexp_extract(raw, 'NCCL version (\S+)', 1) AS value
FROM n WHERE regexp_matches(raw, 'NCCL version \d')
UNION ALL
SELECT source_id, line_no, run_id, host, cuda_dev, 'environment',
       regexp_extract(raw, '(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?\s*$', 1),
       regexp_extract(raw, '(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?\s*$', 2)
FROM n WHERE raw LIKE '% set by environment to %'
UNION ALL
SELECT source_id, line_no, run_id, host, cuda_dev, 'network', 'network',
       regexp_extract(raw, 'NCCL INFO Using network (.+?)\s*$', 1)
FROM n WHERE raw LIKE '%NCCL INFO Using network %'
UNION ALL
SELECT source_id, line_no, run_id, host, cuda_dev, 'comm', k,
       regexp_extract(raw, ' ' || k_printed || ' (\d+)', 1)
FROM n, (VALUES ('nranks', 'nRanks'), ('nnodes', 'nNodes'), ('mnnvl', 'MNNVL')) AS c(k, k_printed)
WHERE regexp_matches(raw, 'NCCL INFO comm 0x[0-9a-fA-F]+ rank \d+ nRanks \d+')
  AND regexp_extract(raw, ' ' || k_printed || ' (\d+)', 1) <> ''
UNION ALL
SELECT source_id, line_no, run_id, host, cuda_dev, 'tuning', 'algo', upper(regexp_extract(raw, 'Bytes -> Algo (\S+) proto (\S+)', 1))
FROM n WHERE regexp_matches(raw, 'NCCL INFO \w+: \d+ Bytes -> Algo \S+ proto \S+')
UNION ALL
SELECT source_id, line_no, run_id, host, cuda_dev, 'tuning', 'proto', upper(regexp_extract(raw, 'Bytes -> Algo (\S+) proto (\S+)', 2))
FROM n WHERE regexp_matches(raw, 'NCCL INFO \w+: \d+ Bytes -> Algo \S+ proto \S+')
