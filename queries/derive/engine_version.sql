-- The exact engine version a log prints beats the format-era range inferred from line shapes.
-- SGLang server logs print no version of their own; it shows up in what surrounds the launch:
-- `pip install` output (`Successfully installed ... sglang-0.5.6.post2`), `sglang==0.5.6.post2`
-- pins, `python -m sglang.check_env` (`sglang: 0.5.6.post2`), image tags
-- (`lmsysorg/sglang:v0.5.6.post2-cu129`), `sglang version 0.5.6.post2`. vLLM prints a banner
-- (read elsewhere); the same probes serve as its fallback. The most frequent printed version wins.
-- $1 source_id, $2 run_id, $3 engine name ('sglang' | 'vllm')
SELECT v, count(*) AS n FROM (
  SELECT regexp_extract(raw, '(?i)\b' || $3 || '(?:==|-|: ?v?|:v| version:? v?| v)(\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.dev\d+)?)\b', 1) AS v
  FROM lines_other
  WHERE source_id = $1 AND (run_id = $2 OR run_id IS NULL) AND raw ILIKE '%' || $3 || '%'
) WHERE v <> ''
GROUP BY v ORDER BY n DESC, v DESC LIMIT 1
