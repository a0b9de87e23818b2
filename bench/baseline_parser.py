"""A straightforward per-line Python ``re`` parser: the comparison point for ``logsleuth ingest``.

It does what a typical hand-written script does: for each line, peel the header with one
regex, try each known line kind (SGLang decode/prefill, vLLM periodic stats and
SpecDecoding, milestones, HTTP access, errors) in order with a compiled regex, convert the
captures to numbers and append a tuple to a per-kind list. It stores nothing in a
database, so it is a generous baseline.

Usage: ``python bench/baseline_parser.py FILE`` prints one line with the counts per kind.
"""
from __future__ import annotations

import re
import sys
from collections import Counter

SGL_HEADER = re.compile(
    r"^(?:\((?P<proc>[\w.-]+) pid=(?P<pid>\d+)[^)]*\) ?)?(?:\[(?:(?P<date>\d{4}-\d\d-\d\d) )?"
    r"(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)(?: DP(?P<dp>\d+))?(?: TP(?P<tp>\d+))?(?: EP\d+)?\] )?(?P<msg>.*)$")
VLLM_HEADER = re.compile(
    r"^(?:\((?P<proc>[^()]*?) ?pid=(?P<pid>\d+)[^)]*\) )?(?:(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"(?P<md>\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d) \[?(?P<file>[^\]\s]+?):(?P<lineno>\d+)\] )?(?P<msg>.*)$")

KINDS: list[tuple[str, re.Pattern, dict]] = [
    ("decode", re.compile(
        r"Decode batch(?: \[\d+\])?[.,]? #running-req: (?P<running>\d+), #token: (?P<tokens>\d+), "
        r"token usage: (?P<usage>[\d.]+), (?:accept len: (?P<accept_len>[\d.]+), )?(?:accept rate: (?P<accept_rate>[\d.]+), )?"
        r"(?:cuda graph: (?P<graph>True|False), )?gen throughput \(token/s\): (?P<gen>[\d.]+), #queue-req: (?P<queued>\d+)"),
     {"running": int, "tokens": int, "usage": float, "accept_len": float, "accept_rate": float, "gen": float,
      "queued": int}),
    ("prefill", re.compile(
        r"Prefill batch(?: \[\d+\])?[.,]? #new-seq: (?P<new_seq>\d+), #new-token: (?P<new_tok>\d+), "
        r"#cached-token: (?P<cached>\d+), (?:cache hit rate: [\d.]+%, )?token usage: (?P<usage>[\d.]+), "
        r"#running-req: (?P<running>\d+), #queue-req: (?P<queued>\d+)"),
     {"new_seq": int, "new_tok": int, "cached": int, "usage": float, "running": int, "queued": int}),
    ("vllm_stats", re.compile(
        r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
        r"Running: (?P<running>\d+) reqs, (?:Swapped: \d+ reqs, )?(?:Pending|Waiting): (?P<waiting>\d+) reqs, "
        r"GPU KV cache usage: (?P<kv>[\d.]+)%(?:, Prefix cache hit rate: (?P<hit>[\d.]+)%)?"),
     {"prompt": float, "gen": float, "running": int, "waiting": int, "kv": float, "hit": float}),
    ("spec", re.compile(
        r"SpecDecoding metrics: Mean acceptance length: (?P<mal>[\d.]+), .*?Accepted: (?P<acc>\d+) tokens, "
        r"Drafted: (?P<drafted>\d+) tokens, Per-position acceptance rate: (?P<pp>[\d., ]+), "
        r"Avg Draft acceptance rate: (?P<rate>[\d.]+)%"),
     {"mal": float, "acc": int, "drafted": int, "rate": float}),
    ("http", re.compile(r'(?P<client>[\d.]+:\d+) - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d+)'),
     {"status": int}),
    ("retract", re.compile(r"#retracted_reqs: (?P<n>\d+), #new_token_ratio: (?P<a>[\d.]+) -> (?P<b>[\d.]+)"),
     {"n": int, "a": float, "b": float}),
    ("server_args", re.compile(r"^server_args=ServerArgs\((?P<args>.*)\)$"), {}),
    ("engine_config", re.compile(r"Initializing an? (?:V\d )?LLM engine \(v(?P<version>[^)]+)\) with config: (?P<cfg>.*)"),
     {}),
    ("weights", re.compile(r"Load weight end\. .*?avail mem=(?P<avail>[\d.]+) GB.*?mem usage=(?P<usage>[\d.]+) GB"),
     {"avail": float, "usage": float}),
    ("graph", re.compile(r"Capture cuda graph end\. Time elapsed: (?P<s>[\d.]+) s"), {"s": float}),
    ("ready", re.compile(r"The server is fired up and ready to roll|Application startup complete"), {}),
    ("error", re.compile(r"(?P<exc>\w+(?:Error|Exception)): (?P<message>.*)$|hit an exception|fatal error"), {}),
    ("traceback", re.compile(r"^(?:\(\S+ pid=\d+\) )?(?:Traceback \(most recent call last\):|  File \")"), {}),
]


def parse(path: str) -> Counter:
    out: dict[str, list] = {k: [] for k, _, _ in KINDS}
    counts: Counter = Counter()
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(1 << 16)
    header = VLLM_HEADER if ("INFO " in head and "Decode batch" not in head) else SGL_HEADER
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\r\n")
            m = header.match(line)
            msg = m.group("msg") if m else line
            for kind, rx, conv in KINDS:
                k = rx.search(msg)
                if k:
                    row = {key: (conv[key](v) if key in conv and v is not None else v)
                           for key, v in k.groupdict().items()}
                    out[kind].append((m.group("time") if m else None, row))
                    counts[kind] += 1
                    break
            else:
                counts["other"] += 1
    return counts


def main(argv=None) -> int:
    argv = argv if argv is not None else sys.argv[1:]
    counts = parse(argv[0])
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())), f"lines={sum(counts.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
