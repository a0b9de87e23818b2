-- The first line of a source's non-periodic lines that a host probe matches (parsers/hosts.toml).
SELECT regexp_extract(raw, $re, 1) AS host FROM lines_other WHERE regexp_matches(raw, $re) LIMIT 1
