-- The host of each source of a database: what one host probe ($re, parsers/hosts.toml) finds
-- in the first of its non-periodic lines that the probe matches.
SELECT source_id, arg_min(regexp_extract(raw, $re, 1), line_no) AS host
FROM lines_other WHERE regexp_matches(raw, $re) GROUP BY source_id
