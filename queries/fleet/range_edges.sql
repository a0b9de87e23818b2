-- The first and last timestamp of one byte range's parsed lines, in file order (fleet/ranges.py:
-- a year of vLLM timestamps that turned over at a seam shows as time going back).
WITH stamped AS (
    SELECT line_no, ts FROM events WHERE ts IS NOT NULL
    UNION ALL SELECT line_no, ts FROM decode_stats WHERE ts IS NOT NULL
    UNION ALL SELECT line_no, ts FROM prefill_stats WHERE ts IS NOT NULL
    UNION ALL SELECT line_no, ts FROM errors WHERE ts IS NOT NULL
)
SELECT (SELECT ts FROM stamped ORDER BY line_no LIMIT 1) AS first_ts,
       (SELECT ts FROM stamped ORDER BY line_no DESC LIMIT 1) AS last_ts
