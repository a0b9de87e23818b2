-- The configuration rows of the runs {runs}, in line order (then storage order: one
-- server_args line gives many keys).
SELECT run_id, key, value, origin FROM config WHERE {runs} ORDER BY run_id, line_no, rowid
