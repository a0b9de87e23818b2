-- How many hosts the sources of a dataset come from.
SELECT count(DISTINCT host) FROM sources
