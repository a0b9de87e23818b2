-- lines: every physical input line, exactly once (the schema's `lines` table).
-- Stored in two tables so that text searches stay fast on multi-GB logs: lines_bulk holds the
-- high-volume periodic lines (decode/prefill/spec stats and HTTP access lines, the patterns
-- marked bulk in parsers/*.toml), lines_other everything else. Search raw text in lines_other.
SELECT * FROM lines_other
UNION ALL
SELECT * FROM lines_bulk
