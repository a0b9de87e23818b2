-- fleet: the same root cause on many hosts. The cause is a failed run's end reason with its
-- numbers, hex ids and paths masked, so one kernel fault on eight hosts is one cluster.
WITH failed AS (
  SELECT s.host, s.date, r.run_id, r.end_state, r.end_reason,
         regexp_replace(regexp_replace(regexp_replace(coalesce(r.end_reason, r.end_state),
           '0x[0-9a-fA-F]+', '<hex>', 'g'), '(/[^ /:]+)+', '<path>', 'g'), '[0-9]+', '<n>', 'g') AS cause
  FROM runs r JOIN sources s USING (source_id)
  WHERE r.end_state IN ('crashed', 'startup_failed')
)
SELECT cause, count(DISTINCT host) AS hosts, count(*) AS runs,
       string_agg(DISTINCT host, ', ' ORDER BY host) AS host_list,
       min(date) AS first_date, max(date) AS last_date, any_value(end_reason) AS example
FROM failed GROUP BY cause HAVING count(DISTINCT host) >= $min_hosts
ORDER BY hosts DESC, cause
