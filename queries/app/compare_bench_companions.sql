-- compare_bench_companions: benchmark runs that carry the label of one of the selected server
-- runs (they are compared with it). $run_ids: the selected runs.
SELECT r.run_id
FROM runs r JOIN sources s USING (source_id)
WHERE (r.engine = 'bench' OR s.kind = 'bench')
  AND r.label IN (SELECT sr.label FROM runs sr JOIN sources ss USING (source_id)
                  WHERE list_contains($run_ids, sr.run_id) AND sr.label IS NOT NULL
                    AND sr.engine IS DISTINCT FROM 'bench' AND ss.kind IS DISTINCT FROM 'bench')
ORDER BY r.run_id
