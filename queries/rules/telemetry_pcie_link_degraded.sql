-- id: telemetry_pcie_link_degraded
-- severity: warning
-- title: Run {run_id}: GPU {gpu_index} PCIe link at Gen{gen} x{width} under load, the link can do Gen{gen_max} x{width_max}
-- fix: Reseat the card or riser, check the slot's wiring (an x16 card in an x8 slot, a bifurcated slot), BIOS PCIe settings (forced GenN, ASPM) and cable/retimer quality; then confirm with nvidia-smi -q -d PCI (and the replay counter). A degraded link slows weight loading, host<->device copies, CPU offload and every PCIe all-reduce (TP on PCIe-only GPUs).
-- params: min_util=0.5
-- source: nvidia-smi --help-query-gpu: pcie.link.gen.current "may be reduced when the GPU is not in use" (so only samples under load, utilization >= 50 %, count for the generation), pcie.link.gen.max / pcie.link.width.max are what GPU and system support together; a narrower width than the maximum is never a power-saving state. Fields from README.md (Telemetry) 3.1 (DCGM: DCGM_FI_DEV_PCIE_LINK_GEN/WIDTH).
-- requires: gpu_samples.pcie_gen
WITH s AS (
  SELECT rt.run_id, g.* FROM gpu_samples g JOIN run_telemetry rt USING (source_id)
  WHERE (g.pcie_width < g.pcie_width_max)
     OR (g.pcie_gen < g.pcie_gen_max AND g.gpu_util >= $min_util)
)
SELECT run_id, source_id, gpu_index, min(line_no) AS line_no, min(pcie_gen) AS gen, min(pcie_width) AS width,
       max(pcie_gen_max) AS gen_max, max(pcie_width_max) AS width_max, count(*) AS n_samples,
       list(line_no ORDER BY line_no)[2:4] AS evidence_lines
FROM s GROUP BY run_id, source_id, gpu_index
