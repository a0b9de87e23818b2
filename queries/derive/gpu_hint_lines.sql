-- The lines of each run of {runs} that may name its hardware (the [hints] prefilter of
-- parsers/env_reports.toml: {likes}), the first 3000 per run, in line order.
SELECT run_id, raw FROM lines_other WHERE {runs} AND ({likes})
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY line_no) <= 3000
ORDER BY run_id, line_no
