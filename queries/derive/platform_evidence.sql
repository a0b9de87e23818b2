-- What each run of {runs} says about the platform it ran on: vLLM's "Automatically detected
-- platform X" event (how = 'event'), and the first line matching each platform's marker list
-- of the grammars ([markers] platform_<name>; {cases} is one WHEN per platform, {any} their
-- union). Notices and configuration lines are in lines_other (lines_bulk holds stats and
-- request lines only; the frame derive_starts gives each run's first line). One row per (run, platform): (run_id, platform, how, first line, its text).
SELECT run_id, lower(text) AS platform, 'event' AS how, min(line_no) AS line_no, arg_min(text, line_no) AS said
FROM events_other WHERE {runs} AND kind = 'platform' AND text IS NOT NULL
GROUP BY run_id, lower(text)
UNION ALL
SELECT run_id, platform, 'line' AS how, min(line_no), arg_min(raw, line_no)
FROM (SELECT l.run_id, l.line_no, l.raw, CASE {cases} END AS platform
      FROM lines_other l JOIN derive_starts d ON l.run_id = d.run_id
      -- start-up is where a platform is named: the run's first 50,000 lines bound the text scan
      WHERE {runs@l} AND l.line_no < d.first_line + 50000 AND ({any}))
WHERE platform IS NOT NULL
GROUP BY run_id, platform
