-- id: nccl_transport_below_topology
-- severity: warning
-- platform: cuda, rocm
-- title: Run {run_id}: NCCL moved data over {slow} on {n_slow} channel(s) {where}
-- fix: Find why peer-to-peer is refused: PCIe ACS / IOMMU enabled (disable ACS in BIOS, iommu=pt), a container without IPC (--ipc=host), NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL set too low, CUDA_VISIBLE_DEVICES spanning sockets; confirm with `nvidia-smi topo -m` and nccl-tests all_reduce_perf. Within one node NET means neither P2P nor SHM worked.
-- source: NCCL transports (NVIDIA/nccl src/transport/p2p.cc, shm.cc, net.cc; README.md (Telemetry) section 5): P2P (NVLink or PCIe peer access) is NCCL's first choice between GPUs of one node, SHM (through host memory) its fallback when P2P is unavailable or disabled, NET for other nodes. SHM or NET between GPUs that share NVLink (topology from an environment report, runs.gpu_interconnect nvlink/unified) loses most of the link's bandwidth: warning. NET with nNodes 1 (ranks on one node): warning. SHM beside P2P channels of the same run on a PCIe/unknown topology may be the topology itself (GPUs under different CPU sockets): info. docs/knowledge-base.md R29/R30 (fix ACS/IOMMU first).
-- requires: lines_other, nccl_channels
-- Reads line text (issue 11: rules read events and the rollup, not lines): through the view nccl_channels, which parses NCCL_DEBUG INFO channel lines (kept as lines, selected by pattern).
WITH ch AS (
  SELECT coalesce(c.run_id, rt.run_id) AS run, c.source_id, c.line_no, c.transport
  FROM nccl_channels c LEFT JOIN run_telemetry rt ON c.run_id IS NULL AND rt.source_id = c.source_id
),
nodes AS (
  SELECT coalesce(n.run_id, rt.run_id) AS run, max(TRY_CAST(n.value AS INTEGER)) AS nnodes
  FROM nccl_config n LEFT JOIN run_telemetry rt ON n.run_id IS NULL AND rt.source_id = n.source_id
  WHERE n.key = 'nnodes' GROUP BY ALL
),
per_run AS (
  SELECT run AS run_id, source_id,
         count(*) FILTER (WHERE transport = 'P2P') AS n_p2p,
         count(*) FILTER (WHERE transport = 'SHM') AS n_shm,
         count(*) FILTER (WHERE transport = 'NET') AS n_net,
         min(line_no) FILTER (WHERE transport IN ('SHM', 'NET')) AS line_no,
         (list(line_no ORDER BY line_no) FILTER (WHERE transport IN ('SHM', 'NET')))[2:4] AS evidence_lines
  FROM ch WHERE run IS NOT NULL GROUP BY run, source_id
)
SELECT p.run_id, p.source_id, p.line_no,
       CASE WHEN p.n_net > 0 AND n.nnodes = 1 THEN 'NET' ELSE 'SHM' END AS slow,
       CASE WHEN p.n_net > 0 AND n.nnodes = 1 THEN p.n_net ELSE p.n_shm END AS n_slow,
       CASE WHEN p.n_net > 0 AND n.nnodes = 1 THEN 'although all ranks are on one node'
            WHEN r.gpu_interconnect IN ('nvlink', 'unified') THEN 'although the GPUs are linked by NVLink'
            ELSE 'while ' || p.n_p2p || ' channel(s) of the same run use P2P' END AS "where",
       CASE WHEN (p.n_net > 0 AND n.nnodes = 1) OR r.gpu_interconnect IN ('nvlink', 'unified') THEN 'warning'
            ELSE 'info' END AS severity,
       p.evidence_lines
FROM per_run p JOIN runs r USING (run_id) LEFT JOIN nodes n ON n.run = p.run_id
WHERE (p.n_net > 0 AND n.nnodes = 1)
   OR (p.n_shm > 0 AND (r.gpu_interconnect IN ('nvlink', 'unified') OR p.n_p2p > 0))
