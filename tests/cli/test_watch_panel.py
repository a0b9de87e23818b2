"""The live view of `logsleuth watch` (one rich panel per run), drawn from a snapshot:
every part shows, and log text stays inert (no markup, no escape sequences)."""
from __future__ import annotations

import io

from rich.console import Console

from logsleuth.cli.watch import _line, _panel

SNAPSHOT = {
    "title": "serving", "phase": "serving", "in_phase_s": 12, "phase_times": {"weights": 3},
    "progress": {"done": 3, "total": 10}, "progress_text": "Loading shard [link=http://x]3[/link]",
    "stalled": True, "silent_s": 30, "last_line": 9,
    "serving": {"running_reqs": 2, "gen_tok_s": 55.5, "kv_usage": 0.3}, "cuda_graph_share": 0.9,
    "series": {"gen_tok_s": [1.0, 2.0, 3.0], "queued_reqs": [0]}, "single_stream_tok_s": 40.0,
    "compare": ["ready 20 s faster than run 1"],
    "findings": [{"severity": "critical", "rule_id": "oom", "title": "out of \x1b[31mmemory", "line": 3,
                  "evidence": "torch.OutOfMemoryError"}],
    "source": "server.log", "run": 1, "model": "org/model", "tp_size": 2, "engine": "sglang",
}


def _text(renderable) -> str:
    buf = io.StringIO()
    Console(file=buf, width=120, color_system=None).print(renderable)
    return buf.getvalue()


def test_panel_shows_every_part():
    out = _text(_panel(SNAPSHOT))
    for part in ("server.log · run 1 · org/model · TP 2 · sglang", "serving  for 12s", "weights 3s", "3/10",
                 "STALLED", "no new line for 30s (last line 9)", "running 2  gen tok/s 55.5  KV 0.30",
                 "CUDA graph 90% of busy steps", "1.0–3.0", "40.0 tok/s", "ready 20 s faster", "critical oom",
                 "line 3: torch.OutOfMemoryError"):
        assert part in out, part
    assert "queued" not in out  # a series of one value draws no sparkline


def test_panel_and_lines_keep_log_text_inert():
    out = _text(_panel(SNAPSHOT))
    assert "[link=http://x]3[/link]" in out and "\x1b" not in out
    line = _line({"event": "stalled", "source": "a.log", "run": 2, "message": "quiet \x1b]0;title\x07"})
    assert line.startswith("a.log run 2: STALLED: quiet ") and "\x1b" not in line and "\x07" not in line
    assert _line({"event": "timeout", "after_s": 5}) == "timeout after 5 s"
