-- fleet: decode throughput at matched load, per host, peer group and band of running requests.
-- $run_ids, $hosts, $groups: one entry per server run (its host and peer group, fleet/peers.py);
-- $band_labels, $band_lows, $band_highs: the bands of `compare` (analysis/compare.py BANDS);
-- $level_step, $min_level_lines, $min_peers: queries/fleet/fleet.toml.
-- Every primary-rank stats line with running requests and a generation rate sits on a load
-- level: its running count on a log scale of step $level_step (1, 2, 3 ... apart; about 5 % apart
-- at hundreds). A line at one running request counts only inside a steady single-stream stretch:
-- the reports before and after it also at one request, no prompt throughput in it and no prefill
-- line since the report before (ramp-up and drain around a prefill are not single-stream speed).
-- A host is at a level when it held it: $min_level_lines lines there (a ramp or a drain passes
-- through levels in one report each; those lines are left out). The reference of a level is
-- the median, over the group's hosts at that level, of each host's median; a line is compared with it when $min_peers hosts have lines at that level. Per host
-- and band: its lines, the compared ones, the median of their ratios to the reference, the host's
-- and the reference's median tok/s, the most hosts a compared level had, the running counts
-- seen, and the compared line nearest the median ratio as evidence.
WITH u AS (
  SELECT unnest($run_ids) AS run_id, unnest($hosts) AS host, unnest($groups) AS grp
), bands AS (
  SELECT unnest($band_labels) AS band, unnest($band_lows) AS lo, unnest($band_highs) AS hi,
         generate_subscripts($band_labels, 1) AS band_no
), d AS (
  SELECT u.host, u.grp, p.run_id, p.source_id, p.line_no, p.running_reqs AS running, p.gen_tok_s,
         coalesce(p.prompt_tok_s, 0) AS prompt_tok_s,
         lag(p.running_reqs) OVER w AS prev_running, lead(p.running_reqs) OVER w AS next_running,
         lag(p.line_no) OVER w AS prev_line
  FROM decode_primary p JOIN u USING (run_id)
  WHERE p.primary_rank
  WINDOW w AS (PARTITION BY p.run_id, coalesce(p.dp_rank, 0), coalesce(p.engine_idx, 0) ORDER BY p.line_no)
), pre AS (
  SELECT run_id, line_no FROM prefill_stats
  WHERE primary_rank IS NOT FALSE AND run_id IN (SELECT run_id FROM u)
), candidates AS (
  SELECT * FROM d
  WHERE running = 1 AND gen_tok_s > 0 AND prev_running = 1 AND next_running = 1 AND prompt_tok_s = 0
), single AS (  -- the last prefill line before each candidate (an ASOF join: no pairs of lines)
  SELECT c.* FROM candidates c
  ASOF LEFT JOIN pre ON c.run_id = pre.run_id AND c.line_no > pre.line_no
  WHERE pre.line_no IS NULL OR pre.line_no < c.prev_line
), lv AS (
  SELECT *, CAST(round(ln(running) / ln(1 + $level_step)) AS INTEGER) AS level
  FROM (SELECT * FROM d WHERE running >= 2 AND gen_tok_s > 0 UNION ALL SELECT * FROM single)
), host_level AS (
  SELECT grp, host, level, median(gen_tok_s) AS med FROM lv GROUP BY ALL HAVING count(*) >= $min_level_lines
), ref AS (
  SELECT grp, level, median(med) AS ref, count(*) AS n_hosts FROM host_level GROUP BY ALL
), lines AS (
  SELECT lv.*, b.band, b.band_no, r.ref, r.n_hosts, r.n_hosts >= $min_peers AS compared,
         lv.gen_tok_s / r.ref AS ratio
  FROM lv JOIN host_level USING (grp, host, level) JOIN ref r USING (grp, level)
  JOIN bands b ON lv.running >= b.lo AND (b.hi IS NULL OR lv.running <= b.hi)
), per AS (
  SELECT grp, host, band, band_no, count(*) AS n_lines, count(*) FILTER (WHERE compared) AS n_compared,
         median(ratio) FILTER (WHERE compared) AS ratio,
         median(gen_tok_s) FILTER (WHERE compared) AS host_tok_s,
         median(ref) FILTER (WHERE compared) AS peer_tok_s,
         max(n_hosts) FILTER (WHERE compared) AS n_peers,
         min(running) AS min_running, max(running) AS max_running
  FROM lines GROUP BY ALL
), evidence AS (
  SELECT l.grp, l.host, l.band,
         arg_min(l.source_id, (abs(l.ratio - per.ratio), l.source_id, l.line_no)) AS source_id,
         arg_min(l.line_no, (abs(l.ratio - per.ratio), l.source_id, l.line_no)) AS line_no
  FROM lines l JOIN per USING (grp, host, band)
  WHERE l.compared GROUP BY ALL
)
SELECT per.grp, per.host, per.band, per.band_no, per.n_lines, per.n_compared,
       round(per.ratio, 3) AS ratio, round(per.host_tok_s, 1) AS host_tok_s, round(per.peer_tok_s, 1) AS peer_tok_s,
       per.n_peers, per.min_running, per.max_running, e.source_id AS evidence_source_id, e.line_no AS evidence_line
FROM per LEFT JOIN evidence e USING (grp, host, band)
ORDER BY per.grp, per.host, per.band_no
