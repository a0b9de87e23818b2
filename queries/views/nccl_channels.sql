-- nccl_channels: the transport each NCCL channel really used between two ranks, from the
-- NCCL_DEBUG=INFO lines of any source (a server log or an NCCL output file), e.g.
--   host:5969:5969 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read
--   host:73:356 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [receive] via NET/Socket/0
--   host:1477:2150 [1] NCCL INFO Channel 00 : 1[1a000] -> 2[af000] via direct shared memory   (<= 2.12)
-- transport: P2P, SHM or NET (first segment after `via`; old "direct shared memory" is SHM);
-- *_dev is the nvmlDev (>= 2.18.3) or the hex PCI busId (older) printed in brackets.
-- NCCL lines are never bulk lines, so lines_other holds them all.
SELECT source_id, line_no, run_id,
       nullif(regexp_extract(raw, '([A-Za-z0-9_.\-]+):(\d+):(\d+) \[(\d+)\] NCCL INFO', 1), '') AS host,
       TRY_CAST(nullif(regexp_extract(raw, '([A-Za-z0-9_.\-]+):(\d+):(\d+) \[(\d+)\] NCCL INFO', 2), '') AS INTEGER) AS pid,
       TRY_CAST(nullif(regexp_extract(raw, '\[(\d+)\] NCCL INFO', 1), '') AS INTEGER) AS cuda_dev,
       TRY_CAST(regexp_extract(raw, 'Channel (\d+)', 1) AS INTEGER) AS channel,
       TRY_CAST(regexp_extract(raw, '(\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]', 1) AS INTEGER) AS src_rank,
       regexp_extract(raw, '(\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]', 2) AS src_dev,
       TRY_CAST(regexp_extract(raw, '(\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]', 3) AS INTEGER) AS dst_rank,
       regexp_extract(raw, '(\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]', 4) AS dst_dev,
       nullif(regexp_extract(raw, '\] \[(send|receive)\] via', 1), '') AS direction,
       regexp_extract(raw, ' via (.+?)(?: comm 0x[0-9a-fA-F]+.*)?\s*$', 1) AS via,
       CASE WHEN raw LIKE '% via direct shared memory%' THEN 'SHM'
            ELSE upper(regexp_extract(raw, ' via ([A-Za-z0-9]+)', 1)) END AS transport
FROM lines_other
WHERE raw LIKE '%NCCL INFO%Channel %' AND raw LIKE '% via %'
  AND regexp_matches(raw, 'Channel \d+(/\d+)? : \d+\[[0-9a-fA-F]+\] -> \d+\[[0-9a-fA-F]+\]')
