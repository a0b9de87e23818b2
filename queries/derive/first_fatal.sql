-- The first line of a fatal record of each run of {runs} (after the fatal flags were settled).
SELECT run_id, min(line_no) FROM errors WHERE {runs} AND fatal GROUP BY run_id
