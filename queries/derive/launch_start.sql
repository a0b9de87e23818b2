-- Where the server process of a run's first launch starts. Lines before the launch marker
-- (server_args=ServerArgs(...), the vLLM banner or engine config) belong to the process when a
-- pattern claims them, when they carry a `(Proc pid=N)` tag, when they are what Python prints at
-- import (`file.py:63: FutureWarning: ...` and its indented continuation), or when they have the
-- log-line shape (timestamp and level layout) that the engine's own lines of this run use after the
-- marker. Anything else is a preamble: a CI job's steps, pip output, a batch script's banner,
-- `==> file <==`, and the log lines of another tool (a helper script's Python logging
-- `2026-03-10 14:02:11,532 - ci - INFO - ...` or `[14:00:32] ...` in front of SGLang's
-- `[2026-03-10 14:02:20] ...`; a timestamp alone does not make a line the server's).
-- The process starts at the first non-blank line after the last preamble line.
-- NULL when the marker is the first line or nothing before it is a preamble.
-- $1 source_id, $2 run_id; {launch_patterns} = the grammar patterns that mark a launch
WITH m AS (
  SELECT min(line_no) FILTER (WHERE pattern IN ({launch_patterns})) AS marker, min(line_no) AS first
  FROM lines_other WHERE source_id = $1 AND run_id = $2
),
shape(name, re) AS (  -- line layouts of the engines (ANSI colour and a process tag stripped first)
  VALUES ('sglang', '^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d'),
         ('sglang_time_only', '^\[\d\d:\d\d:\d\d'),
         ('vllm', '^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:'),
         ('iso', '^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d')  -- a runtime's prefix, a logging config's format
),
bare AS (  -- the text without colour codes, after a `(Proc pid=N)` tag
  SELECT l.line_no, l.kind, l.raw,
         regexp_replace(regexp_replace(l.raw, '\x1b\[[0-9;?]*[A-Za-z]', '', 'g'),
                        '^\s*(?:\([\w.-]+(?: [\w.-]+)? pid=\d+[^)]*\)\s*)?', '') AS text
  FROM lines_other l, m WHERE l.source_id = $1 AND l.run_id = $2 AND l.line_no < m.marker + 2000
),
used AS (  -- the layouts of the lines the grammars claimed in the first 2000 lines from the marker
  SELECT DISTINCT s.name FROM shape s, m,
    (SELECT text FROM bare, m WHERE bare.line_no >= m.marker AND bare.kind <> 'unparsed') b
  WHERE regexp_matches(b.text, s.re)
),
pre AS (
  SELECT max(b.line_no) AS last_pre FROM bare b, m
  WHERE b.line_no < m.marker AND b.kind = 'unparsed' AND trim(b.raw) <> ''
    AND NOT EXISTS (SELECT 1 FROM shape s JOIN used USING (name) WHERE regexp_matches(b.text, s.re))
    AND NOT regexp_matches(b.raw, '\((?:[\w.-]+ )?pid=\d+')
    AND NOT regexp_matches(b.raw, '^\s+\S|\.py:\d+: \w*Warning')
)
SELECT (SELECT min(l.line_no) FROM lines_other l WHERE l.source_id = $1 AND l.run_id = $2
          AND l.line_no > pre.last_pre AND trim(l.raw) <> '') AS start
FROM pre, m WHERE pre.last_pre IS NOT NULL AND m.marker > m.first
