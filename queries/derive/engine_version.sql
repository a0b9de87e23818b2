-- The exact engine version a log prints beats the format-era range inferred from line shapes.
-- SGLang server logs print no version of their own; it shows up in what surrounds the launch:
-- `pip install` output (`Successfully installed ... sglang-0.5.6.post2`), `sglang==0.5.6.post2`
-- pins, `python -m sglang.check_env` (`sglang: 0.5.6.post2`), image tags
-- (`lmsysorg/sglang:v0.5.6.post2-cu129`), `sglang version 0.5.6.post2`. vLLM prints a banner
-- (read elsewhere); the same probes serve as its fallback. The most frequent printed version wins
-- (lines of the run, or of no run, in the run's source).
-- For every (source_id, run_id) of the frame derive_pairs; {sources} filters the sources;
-- $1 engine name ('sglang' | 'vllm')
WITH found AS (
  SELECT p.run_id, regexp_extract(l.raw, '(?i)\b' || $1 || '(?:==|-|: ?v?|:v| version:? v?| v)(\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.dev\d+)?)\b', 1) AS v
  FROM lines_other l JOIN derive_pairs p ON l.source_id = p.source_id AND (l.run_id = p.run_id OR l.run_id IS NULL)
  WHERE {sources@l} AND l.raw ILIKE '%' || $1 || '%'
)
SELECT run_id, v FROM (SELECT run_id, v, count(*) AS n FROM found WHERE v <> '' GROUP BY ALL)
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY n DESC, v DESC) = 1
