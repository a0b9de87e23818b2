-- The start-up phase each run of the frame derive_end (run_id, end_line) was in at its end
-- line: that of its last milestone event before it (the frame derive_phase (kind, phase, ord)
-- from queries/derive/startup_phases.toml). Runs without one are left out ("launching").
SELECT e.run_id, arg_max(p.phase, e.line_no) AS phase
FROM events_other e JOIN derive_end d ON e.run_id = d.run_id AND e.line_no <= d.end_line
JOIN derive_phase p ON e.kind = p.kind
WHERE {runs@e}
GROUP BY e.run_id
