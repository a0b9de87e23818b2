-- Known upstream issues considered for each run: which entries' signatures a run shows, and how
-- each condition of the entry compares with the run's facts. Read by analysis/known_match.py.
-- The two '-- @' lines are replaced by known_match.py with one SELECT per entry over `cand`
-- (each regex a constant, so DuckDB compiles it once instead of once per line).
-- Parameters: $entries (JSON list of the matchable entries, flattened by known_issues.py; the
-- entry's wanted values are named w_*), $any_regex (every signature and `also` regex as one
-- alternation: one regex pass over the lines), $content_patterns (line patterns that carry
-- user text: request logs, prompts; never searched), $run_ids (INTEGER[]; NULL = every run).
-- Returns one row per (entry, run, condition) for each entry whose signature the run shows:
-- id, run_id, line_no (first signature line), n_lines, cond, want, seen, state (agrees |
-- contradicts | unknown); an entry with no condition but its engine still has the engine row.
-- Lines are searched in lines_other only: lines_bulk holds the per-request and periodic stats
-- lines (and the prompts of request logs); figures of stats lines come typed from run_rollup /
-- spec_stats (signature.metric).
WITH ent AS (
  SELECT unnest(from_json($entries, '[{"id":"VARCHAR","engines":["VARCHAR"],"regex":"VARCHAR","also":"VARCHAR",
    "also_within":"BIGINT","also_anywhere":"BOOLEAN","metric":"VARCHAR","value_min":"DOUBLE","value_max":"DOUBLE",
    "min_lines":"BIGINT","w_gpu_sm":["VARCHAR"],"w_gpu_vendor":["VARCHAR"],"w_gpu_name":"VARCHAR",
    "w_interconnect":["VARCHAR"],"w_version_min":"VARCHAR","w_version_max":"VARCHAR","w_fixed_in":"VARCHAR",
    "w_built_before":"DATE","w_min_tp":"INTEGER","w_max_tp":"INTEGER","w_min_ep":"INTEGER","w_spec":"BOOLEAN",
    "w_spec_method":["VARCHAR"],"w_draft_model":"VARCHAR","w_attention_backend":["VARCHAR"],"w_cuda_graph":"BOOLEAN",
    "w_model":"VARCHAR","w_end_state":["VARCHAR"],"w_config":[{"key":"VARCHAR","re":"VARCHAR"}]}]')) AS e
),
k AS MATERIALIZED (SELECT e.* FROM ent),
sel AS (SELECT run_id FROM runs WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)),
cand AS MATERIALIZED (  -- the few lines any signature could match: one regex pass over the small line store
  SELECT l.run_id, l.line_no, l.raw FROM lines_other l
  WHERE l.run_id IN (SELECT run_id FROM sel)
    AND (l.pattern IS NULL OR NOT list_contains($content_patterns, l.pattern))
    AND regexp_matches(l.raw, $any_regex)
),
sig AS MATERIALIZED (  -- generated: one SELECT per entry with its regex as a constant (compiled once)
  SELECT s.* FROM (
    -- @signatures
  ) s JOIN k USING (id)
  WHERE (k.value_min IS NULL AND k.value_max IS NULL)
     OR s.value BETWEEN coalesce(k.value_min, -1e300) AND coalesce(k.value_max, 1e300)
),
also_lines AS (  -- generated likewise: the lines of each entry's `also` regex
  -- @also
),
also_seen AS (  -- the entry's second line: after a signature line (within also_within), or anywhere
  SELECT DISTINCT s.id, s.run_id
  FROM sig s JOIN k USING (id) JOIN also_lines a ON a.id = s.id AND a.run_id = s.run_id
  WHERE coalesce(k.also_anywhere, false)
     OR (a.line_no >= s.line_no AND a.line_no <= s.line_no + coalesce(k.also_within, 1000000000))
),
line_hits AS (
  SELECT s.id, s.run_id, min(s.line_no) AS line_no, count(*) AS n_lines
  FROM sig s JOIN k USING (id)
  WHERE k.also IS NULL OR EXISTS (SELECT 1 FROM also_seen a WHERE a.id = s.id AND a.run_id = s.run_id)
  GROUP BY s.id, s.run_id, k.min_lines
  HAVING count(*) >= coalesce(k.min_lines, 1)
),
metrics AS (  -- typed per-run figures standing for the signatures of stats lines
  SELECT run_id, 'mean_accept_len' AS metric, mean_accept_len AS value, first_spec_line AS line_no
  FROM run_rollup WHERE mean_accept_len IS NOT NULL AND run_id IN (SELECT run_id FROM sel)
  UNION ALL
  SELECT run_id, 'zero_accept_lines', count(*), min(line_no)
  FROM spec_stats WHERE accept_len <= 1.0005 AND run_id IN (SELECT run_id FROM sel)
  GROUP BY run_id
),
metric_hits AS (
  SELECT k.id, m.run_id, m.line_no, 1 AS n_lines
  FROM metrics m JOIN k ON k.metric = m.metric
  WHERE m.value BETWEEN coalesce(k.value_min, -1e300) AND coalesce(k.value_max, 1e300)
),
hits AS MATERIALIZED (SELECT * FROM line_hits UNION ALL SELECT * FROM metric_hits),
vkeys AS (  -- versions as comparable lists of integers: 0.5.10.post1 -> [0, 5, 10, 1]
  SELECT id,
         list_transform(regexp_extract_all(w_version_min, '\d+'), lambda x: CAST(x AS INTEGER)) AS vmin,
         list_transform(regexp_extract_all(w_version_max, '\d+'), lambda x: CAST(x AS INTEGER)) AS vmax,
         list_transform(regexp_extract_all(w_fixed_in, '\d+'), lambda x: CAST(x AS INTEGER)) AS vfix
  FROM k
),
hk AS (
  SELECT h.id, h.run_id, h.line_no, h.n_lines, k.*, v.vmin, v.vmax, v.vfix,
         r.engine AS r_engine, upper(r.gpu_sm) AS r_sm, lower(r.gpu_vendor) AS r_vendor, r.gpu_name AS r_gpu_name,
         lower(r.gpu_interconnect) AS r_interconnect, r.engine_version AS r_version,
         CASE WHEN r.engine_version IS NOT NULL THEN list_transform(regexp_extract_all(
              regexp_extract(r.engine_version, '^v?(\d+(?:\.\d+)*(?:\.?post\d+)?)', 1), '\d+'),
              lambda x: CAST(x AS INTEGER)) END AS r_vkey,
         regexp_matches(coalesce(r.engine_version, ''), '(?i)rc\d|dev') AS r_prerelease,
         r.started_at AS r_started, s.year_basis AS r_year_basis,
         r.tp_size AS r_tp, r.ep_size AS r_ep, lower(r.spec_method) AS r_spec, r.spec_draft_model AS r_draft,
         lower(r.attention_backend) AS r_attn, r.cuda_graph AS r_cuda_graph, r.end_state AS r_end_state,
         nullif(concat_ws(' ', r.model, r.model_arch, r.served_model_name), '') AS r_model
  FROM hits h JOIN k USING (id) JOIN vkeys v USING (id) JOIN runs r USING (run_id) LEFT JOIN sources s USING (source_id)
),
cfg AS (  -- the configuration values the entries ask about (the last value printed for the key)
  SELECT c.run_id, c.key, lower(trim(arg_max(c.value, c.line_no), '''" ')) AS value
  FROM config c
  WHERE c.run_id IN (SELECT run_id FROM hits)
    AND c.key IN (SELECT DISTINCT unnest(list_transform(w_config, lambda x: x.key)) FROM k)
  GROUP BY c.run_id, c.key
),
conds AS (
  SELECT id, run_id, 'engine' AS cond, array_to_string(engines, '/') AS want, r_engine AS seen,
         CASE WHEN r_engine IS NULL THEN 'unknown' WHEN list_contains(engines, r_engine) THEN 'agrees' ELSE 'contradicts' END AS state
  FROM hk
  UNION ALL
  SELECT id, run_id, 'gpu_sm', array_to_string(w_gpu_sm, '/'), r_sm,
         CASE WHEN r_sm IS NULL THEN 'unknown' WHEN list_contains(w_gpu_sm, r_sm) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_gpu_sm IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'gpu_vendor', array_to_string(w_gpu_vendor, '/'), r_vendor,
         CASE WHEN r_vendor IS NULL THEN 'unknown' WHEN list_contains(w_gpu_vendor, r_vendor) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_gpu_vendor IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'gpu_name', w_gpu_name, r_gpu_name,
         CASE WHEN r_gpu_name IS NULL THEN 'unknown' WHEN regexp_matches(r_gpu_name, w_gpu_name) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_gpu_name IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'interconnect', array_to_string(w_interconnect, '/'), r_interconnect,
         CASE WHEN r_interconnect IS NULL THEN 'unknown' WHEN list_contains(w_interconnect, r_interconnect) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_interconnect IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'version', concat_ws(' to ', coalesce(w_version_min, 'any'), coalesce(w_version_max, 'latest')), r_version,
         CASE WHEN r_vkey IS NULL OR len(r_vkey) = 0 THEN 'unknown'
              WHEN (vmin IS NULL OR r_vkey >= vmin)
                   AND (vmax IS NULL OR r_vkey[1:len(vmax)] <= vmax) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_version_min IS NOT NULL OR w_version_max IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'fixed', 'before ' || w_fixed_in, r_version,
         CASE WHEN r_vkey IS NULL OR len(r_vkey) = 0 THEN 'unknown'
              WHEN r_vkey < vfix THEN 'agrees'
              WHEN r_prerelease AND r_vkey[1:len(vfix)] = vfix THEN 'unknown'  -- a release candidate of the fix release
              ELSE 'contradicts' END
  FROM hk WHERE w_fixed_in IS NOT NULL
  UNION ALL  -- a run logged before the fix was merged cannot contain it; later logs say nothing
  SELECT id, run_id, 'build date', 'before ' || CAST(w_built_before AS VARCHAR), CAST(CAST(r_started AS DATE) AS VARCHAR),
         CASE WHEN r_started IS NOT NULL AND r_started < w_built_before
                   AND coalesce(r_year_basis, '') NOT ILIKE '%mtime%' THEN 'agrees' ELSE 'unknown' END
  FROM hk WHERE w_built_before IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'tp_size', concat_ws(' to ', coalesce(CAST(w_min_tp AS VARCHAR), '1'), coalesce(CAST(w_max_tp AS VARCHAR), 'any')),
         CAST(r_tp AS VARCHAR),
         CASE WHEN r_tp IS NULL THEN 'unknown'
              WHEN r_tp >= coalesce(w_min_tp, 1) AND r_tp <= coalesce(w_max_tp, 1000000) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_min_tp IS NOT NULL OR w_max_tp IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'ep_size', 'at least ' || w_min_ep, CAST(r_ep AS VARCHAR),
         CASE WHEN r_ep IS NULL THEN 'unknown' WHEN r_ep >= w_min_ep THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_min_ep IS NOT NULL
  UNION ALL  -- spec_method is NULL when the run shows no speculative decoding
  SELECT id, run_id, 'spec', CASE WHEN w_spec THEN 'on' ELSE 'off' END, coalesce(r_spec, 'off'),
         CASE WHEN (r_spec IS NOT NULL) = w_spec THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_spec IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'spec_method', array_to_string(w_spec_method, '/'), coalesce(r_spec, 'off'),
         CASE WHEN list_contains(w_spec_method, r_spec) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_spec_method IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'draft_model', w_draft_model, r_draft,
         CASE WHEN r_draft IS NULL THEN 'unknown' WHEN regexp_matches(r_draft, w_draft_model) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_draft_model IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'attention_backend', array_to_string(w_attention_backend, '/'), r_attn,
         CASE WHEN r_attn IS NULL THEN 'unknown' WHEN list_contains(w_attention_backend, r_attn) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_attention_backend IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'cuda_graph', CAST(w_cuda_graph AS VARCHAR), CAST(r_cuda_graph AS VARCHAR),
         CASE WHEN r_cuda_graph IS NULL THEN 'unknown' WHEN r_cuda_graph = w_cuda_graph THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_cuda_graph IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'model', w_model, r_model,
         CASE WHEN r_model IS NULL THEN 'unknown' WHEN regexp_matches(r_model, w_model) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_model IS NOT NULL
  UNION ALL
  SELECT id, run_id, 'end_state', array_to_string(w_end_state, '/'), r_end_state,
         CASE WHEN r_end_state IS NULL THEN 'unknown' WHEN list_contains(w_end_state, r_end_state) THEN 'agrees' ELSE 'contradicts' END
  FROM hk WHERE w_end_state IS NOT NULL
  UNION ALL
  SELECT hc.id, hc.run_id, 'config ' || hc.w.key, hc.w.re, cfg.value,
         CASE WHEN cfg.value IS NULL THEN 'unknown' WHEN regexp_matches(cfg.value, hc.w.re) THEN 'agrees' ELSE 'contradicts' END
  FROM (SELECT id, run_id, unnest(w_config) AS w FROM hk WHERE w_config IS NOT NULL) hc
  LEFT JOIN cfg ON cfg.run_id = hc.run_id AND cfg.key = hc.w.key
)
SELECT c.id, c.run_id, h.line_no, h.n_lines, c.cond, c.want, c.seen, c.state
FROM conds c JOIN hits h USING (id, run_id)
ORDER BY c.run_id, c.id, c.cond
