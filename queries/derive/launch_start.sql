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
-- No row when the marker is the first line or nothing before it is a preamble.
-- For every (source_id, run_id) of the frame derive_pairs; {sources} filters the sources;
-- {launch_patterns} = the grammar patterns that mark a launch
WITH own AS (
  SELECT l.source_id, l.run_id, l.line_no, l.kind, l.raw, l.pattern
  FROM lines_other l JOIN derive_pairs p USING (source_id, run_id) WHERE {sources}
),
m AS (
  SELECT source_id, run_id, min(line_no) FILTER (WHERE pattern IN ({launch_patterns})) AS marker,
         min(line_no) AS first
  FROM own GROUP BY ALL
),
shape(name, re) AS (  -- line layouts of the engines (ANSI colour and a process tag stripped first)
  VALUES ('sglang', '^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d'),
         ('sglang_time_only', '^\[\d\d:\d\d:\d\d'),
         ('vllm', '^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:'),
         ('iso', '^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d')  -- a runtime's prefix, a logging config's format
),
bare AS (  -- the text without colour codes, after a `(Proc pid=N)` tag
  SELECT o.source_id, o.run_id, o.line_no, o.kind, o.raw, m.marker,
         regexp_replace(regexp_replace(o.raw, '\x1b\[[0-9;?]*[A-Za-z]', '', 'g'),
                        '^\s*(?:\([\w.-]+(?: [\w.-]+)? pid=\d+[^)]*\)\s*)?', '') AS text
  FROM own o JOIN m USING (source_id, run_id) WHERE o.line_no < m.marker + 2000
),
used AS (  -- the layouts of the lines the grammars claimed in the first 2000 lines from the marker
  SELECT DISTINCT b.source_id, b.run_id, s.name FROM bare b, shape s
  WHERE b.line_no >= b.marker AND b.kind <> 'unparsed' AND regexp_matches(b.text, s.re)
),
pre AS (
  SELECT b.source_id, b.run_id, max(b.line_no) AS last_pre FROM bare b
  WHERE b.line_no < b.marker AND b.kind = 'unparsed' AND trim(b.raw) <> ''
    AND NOT EXISTS (SELECT 1 FROM used u JOIN shape s USING (name)
                    WHERE u.source_id = b.source_id AND u.run_id = b.run_id AND regexp_matches(b.text, s.re))
    AND NOT regexp_matches(b.raw, '\((?:[\w.-]+ )?pid=\d+')
    AND NOT regexp_matches(b.raw, '^\s+\S|\.py:\d+: \w*Warning')
  GROUP BY ALL
)
SELECT pre.source_id, pre.run_id, min(o.line_no) AS start
FROM pre JOIN m USING (source_id, run_id)
  JOIN own o ON o.source_id = pre.source_id AND o.run_id = pre.run_id AND o.line_no > pre.last_pre AND trim(o.raw) <> ''
WHERE m.marker > m.first
GROUP BY ALL
