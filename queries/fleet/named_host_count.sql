-- How many hosts the sources name (the report's fleet page needs two: sources whose host
-- nobody named are 'unknown', which is no second host).
SELECT count(DISTINCT host) FROM sources WHERE host <> $unknown
