-- The 200 lines before each run's ready line (frame derive_ready: run_id, ready_line), nearest
-- first: a ready line printed without a time (uvicorn's) takes the nearest stamped one's.
SELECT l.run_id, l.raw FROM lines l JOIN derive_ready d ON l.run_id = d.run_id AND l.line_no < d.ready_line
WHERE {runs@l} AND ({near})  -- {near}: the same bounds as literals (few runs), so row groups are skipped
QUALIFY row_number() OVER (PARTITION BY l.run_id ORDER BY l.line_no DESC) <= 200
ORDER BY l.run_id, l.line_no DESC
