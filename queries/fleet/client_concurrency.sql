-- fleet: the concurrency a benchmark client was set to on each host (any source of the host:
-- the client's own log or a result block inside the server log) and, as evidence, the line of
-- its result block that says so (else the block's first line).
WITH b AS (
  SELECT s.host, b.source_id, b.line_no, b.last_line, CAST(b.max_concurrency AS BIGINT) AS max_concurrency
  FROM bench_results b JOIN sources s USING (source_id)
  WHERE b.max_concurrency IS NOT NULL AND isfinite(b.max_concurrency)
  QUALIFY row_number() OVER (PARTITION BY s.host ORDER BY b.max_concurrency DESC, b.source_id, b.line_no) = 1
), said AS (
  SELECT b.host, min(l.line_no) AS line_no
  FROM b JOIN lines l ON l.source_id = b.source_id
   AND l.line_no BETWEEN b.line_no AND coalesce(b.last_line, b.line_no)
  WHERE l.raw ILIKE '%concurrency:%' GROUP BY b.host
)
SELECT b.host, b.max_concurrency, b.source_id, coalesce(said.line_no, b.line_no) AS line_no
FROM b LEFT JOIN said USING (host)
