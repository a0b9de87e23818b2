-- id: telemetry_gpu_throttled
-- severity: warning
-- title: Run {run_id}: GPU {gpu_index} clocks held back by {reasons} in {n_samples} busy sample(s) (SM clock down to {min_sm_mhz} of {max_sm_mhz} MHz)
-- fix: Thermal reasons: check cooling, fan curves, airflow and inlet temperature; power reasons: check the power limit (nvidia-smi -q -d POWER; enforced.power.limit below the board default?) and the PSU/PDU; hw_slowdown / power brake are signalled by the board or the system (PSU, thermal trip) and need the host's vendor. Throughput measured while throttled does not show what the GPU can do.
-- params: min_util=0.5, min_samples=3
-- source: NVML clocks-event reasons (docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html; nvidia-smi clocks_event_reasons.* / clocks_throttle_reasons.*, README.md (Telemetry) 3.1): sw_power_cap, hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown and hw_power_brake_slowdown lower the SM clock below what the load asks for; gpu_idle, applications_clocks_setting, sync_boost and display_clock_setting do not mean lost performance and are ignored. amd-smi throttle_status other than UNTHROTTLED counts alike. Only samples under load (utilization >= 50 %) count: an idle GPU may clock down freely. Critical when hardware slowdown or thermal reasons persist (>= 10 samples).
-- requires: gpu_samples.throttle_reasons
WITH s AS (
  SELECT rt.run_id, g.*,
         CASE WHEN g.tool = 'amd-smi' AND g.throttle_reasons IS NOT NULL AND upper(g.throttle_reasons) <> 'UNTHROTTLED'
              THEN [g.throttle_reasons]
              ELSE regexp_extract_all(coalesce(g.throttle_reasons, ''),
                     '(sw_power_cap|hw_slowdown|sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown)') END AS bad
  FROM gpu_samples g JOIN run_telemetry rt USING (source_id)
  WHERE g.gpu_util >= $min_util
)
SELECT run_id, source_id, gpu_index, min(line_no) AS line_no, count(*) AS n_samples,
       array_to_string(list_sort(list_distinct(flatten(list(bad)))), ', ') AS reasons,
       min(sm_clock_mhz) AS min_sm_mhz, max(coalesce(sm_clock_max_mhz, sm_clock_mhz)) AS max_sm_mhz,
       CASE WHEN count(*) >= 10 AND bool_or(list_has_any(bad, ['hw_slowdown', 'hw_thermal_slowdown',
            'sw_thermal_slowdown', 'hw_power_brake_slowdown'])) THEN 'critical' ELSE 'warning' END AS severity,
       list(line_no ORDER BY line_no)[2:4] AS evidence_lines
FROM s WHERE len(bad) > 0
GROUP BY run_id, source_id, gpu_index
HAVING count(*) >= $min_samples
