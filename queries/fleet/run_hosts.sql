-- fleet: the host of every run (findings are counted per host).
SELECT r.run_id, s.host FROM runs r JOIN sources s USING (source_id)
