-- Where the server process of a run's first launch starts. Lines before the launch marker
-- (server_args=ServerArgs(...), the vLLM banner or engine config) belong to the process when a
-- pattern claims them, when they have a log line's shape (timestamp, level, `(Proc pid=N)` tag),
-- or when they are what Python prints at import (`file.py:63: FutureWarning: ...` and its indented
-- continuation); anything else (a CI job's steps, pip output, a batch script's banner, `==> file <==`)
-- is a preamble. The process starts at the first non-blank line after the last preamble line.
-- NULL when the marker is the first line or nothing before it is a preamble.
-- $1 source_id, $2 run_id; {launch_patterns} = the grammar patterns that mark a launch
WITH m AS (
  SELECT min(line_no) FILTER (WHERE pattern IN ({launch_patterns})) AS marker, min(line_no) AS first
  FROM lines_other WHERE source_id = $1 AND run_id = $2
),
pre AS (
  SELECT max(l.line_no) AS last_pre FROM lines_other l, m
  WHERE l.source_id = $1 AND l.run_id = $2 AND l.line_no < m.marker
    AND l.kind = 'unparsed' AND trim(l.raw) <> ''
    AND NOT regexp_matches(l.raw, '^\s*(?:\x1b\[[0-9;]*m)?(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d\d:\d\d:\d\d|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)')
    AND NOT regexp_matches(l.raw, '\((?:[\w.-]+ )?pid=\d+')
    AND NOT regexp_matches(l.raw, '^\s+\S|\.py:\d+: \w*Warning')
)
SELECT (SELECT min(l.line_no) FROM lines_other l WHERE l.source_id = $1 AND l.run_id = $2
          AND l.line_no > pre.last_pre AND trim(l.raw) <> '') AS start
FROM pre, m WHERE pre.last_pre IS NOT NULL AND m.marker > m.first
