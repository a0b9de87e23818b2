-- SGLang's format era from line shapes only some releases printed: for each source of
-- {sources}, how many sampled lines match each probe ({probes}: one count(*) FILTER per probe of
-- the grammar's [[version_probe]] list, regex or LIKE). The sample is every unclaimed or
-- non-bulk line and the first 50,000 bulk (stats) lines ({bulk}: a window per source, or a LIMIT
-- for one large source): one SGLang version writes one
-- format, so the first 50,000 stats lines tell as well as the 12 million of a 2 GB log.
WITH sample AS (
  SELECT source_id, raw FROM lines_other WHERE {sources}
  UNION ALL
  (SELECT source_id, raw FROM lines_bulk WHERE {sources}
   {bulk})
)
SELECT source_id, {probes} FROM sample GROUP BY source_id
