"""`logsleuth watch`: follow starting or serving servers live (the library's ``watch`` package).

Contract: parse options -> one ``Watch`` -> render its notices and snapshots. A terminal
gets a rich Live view (one panel per run); otherwise (``--plain``, or stdout not a TTY)
one line per notice on stdout, text or ``--format jsonl``. Notes go to stderr. Exit codes
are the watch's own (README "Live watch"): 0 condition met / input ended, 1 finding at or
above ``--exit-on finding=SEV``, 5 a followed server crashed, 6 ``--timeout`` (or the
input ended before the condition), 130 Ctrl-C/SIGTERM; 2 and 3 as everywhere.
"""
from __future__ import annotations

import enum
import os
import signal
import sys
from typing import List, Optional

import typer

from .inert import inert, plain_json


class WatchFormat(str, enum.Enum):
    """Plain output: one line of text, or one JSON object, per notice."""

    text = "text"
    jsonl = "jsonl"


def _line(n: dict) -> str:
    """One plain-text line for a notice."""
    ev = n.get("event")
    who = f"{n.get('source', '')}"
    if n.get("run") is not None:
        who += f" run {n['run']}"
    text = inert(n.get("text", "")).strip()
    if ev == "run":
        model = f" {n['model']}" if n.get("model") else ""
        tp = f" TP {n['tp_size']}" if n.get("tp_size") else ""
        return f"{who}: launched{model}{tp} (line {n.get('line')})"
    if ev == "phase":
        prev = (f" after {n.get('previous_title', n.get('previous'))} {n['previous_s']:.0f} s"
                if n.get("previous_s") is not None else "")
        extra = f"; {n['compare']}" if n.get("compare") else ""
        ready = f"; ready {n['time_to_ready_s']:.0f} s after launch" if n.get("time_to_ready_s") else ""
        return f"{who}: {n['title']}{prev}{ready}{extra} (line {n.get('line')})"
    if ev in ("progress", "status"):
        since = f" [{n['since_launch_s']:.0f} s since launch]" if n.get("since_launch_s") is not None else ""
        return f"{who}: {text}{since}"
    if ev == "stalled":
        return f"{who}: STALLED: {inert(n.get('message', ''))}"
    if ev == "resumed":
        return f"{who}: resumed (line {n.get('line')})"
    if ev == "finding":
        return (f"{who}: {n['severity'].upper()} {n['rule_id']}: {inert(n['title'])}"
                f" (line {n.get('line')}: {inert(n.get('evidence') or '').strip()[:160]})")
    if ev == "error":
        return f"{who}: {'fatal ' if n.get('fatal') else ''}error line {n.get('line')}: {text[:200]}"
    if ev == "end":
        return f"{who}: {n['state']} during {n.get('during', '?')} (line {n.get('line')}: {text[:160]})"
    if ev in ("rotated", "truncated"):
        return f"{who}: file {ev}; following the new file"
    if ev == "watching":
        return f"watching {', '.join(n.get('sources', []))} (database {n.get('db')})"
    if ev == "timeout":
        return f"timeout after {n.get('after_s')} s"
    if ev == "input_ended":
        return f"{who}: input ended"
    return f"{who}: {text or ev}"


def _panel(snap: dict):
    """One run as a rich panel (all log text through ``inert``/Text, never markup)."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from ..watch.phases import fmt_duration
    from .output import sparkline

    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    phase = Text(snap.get("title", "?"), style="bold red" if snap.get("phase") in ("crashed",) else "bold cyan")
    if snap.get("in_phase_s") is not None:
        phase.append(f"  for {fmt_duration(snap['in_phase_s'])}", style="")
    grid.add_row("phase", phase)
    times = snap.get("phase_times") or {}
    if times:
        grid.add_row("so far", Text("  ".join(f"{k} {fmt_duration(v)}" for k, v in times.items())))
    prog = snap.get("progress")
    if prog:
        width = 30
        filled = int(width * prog["done"] / prog["total"]) if prog.get("total") else 0
        bar = Text("█" * filled + "░" * (width - filled) + f" {prog['done']}/{prog['total']}")
        grid.add_row("progress", bar)
        grid.add_row("", Text(inert(snap.get("progress_text", ""))))
    if snap.get("stalled"):
        grid.add_row("STALLED", Text(f"no new line for {fmt_duration(snap.get('silent_s'))} "
                                     f"(last line {snap.get('last_line')})", style="bold red"))
    serving = snap.get("serving") or {}
    series = snap.get("series") or {}
    if serving:
        def fmt(key, label, digits=1):
            v = serving.get(key)
            return f"{label} {v:.{digits}f}" if isinstance(v, (int, float)) else None
        parts = [p for p in (fmt("running_reqs", "running", 0), fmt("queued_reqs", "queued", 0),
                             fmt("gen_tok_s", "gen tok/s"), fmt("kv_usage", "KV", 2)) if p]
        if snap.get("cuda_graph_share") is not None:
            parts.append(f"CUDA graph {snap['cuda_graph_share']:.0%} of busy steps")
        grid.add_row("serving", Text("  ".join(parts)))
        for key, label in (("gen_tok_s", "gen tok/s"), ("running_reqs", "running"), ("queued_reqs", "queued"),
                           ("kv_usage", "KV usage"), ("accept_len", "accept len")):
            if len(series.get(key, [])) > 1:
                vals = series[key]
                grid.add_row(label, Text(f"{sparkline(vals, 40)}  {min(vals):.1f}–{max(vals):.1f}"))
        if snap.get("accept_len_meaning"):
            grid.add_row("", Text(snap["accept_len_meaning"]))
        if snap.get("single_stream_tok_s"):
            grid.add_row("1-stream", Text(f"{snap['single_stream_tok_s']:.1f} tok/s (median at one running request)"))
    for line in snap.get("compare") or []:
        grid.add_row("vs before", Text(inert(line)))
    findings = snap.get("findings") or []
    for f in findings[:6]:
        sev = f["severity"]
        style = {"critical": "bold red", "error": "red", "warning": "yellow"}.get(sev, "")
        t = Text(f"{sev} ", style=style)
        t.append(f"{f['rule_id']}: {inert(f['title'])}")
        t.append(f"\n  line {f.get('line')}: {inert(f.get('evidence') or '').strip()[:200]}", style="dim")
        grid.add_row("finding" if f is findings[0] else "", t)
    source = snap.get("source", "")
    title_bits = [inert(os.path.basename(source) if len(source) > 30 else source)]
    if snap.get("run") is not None:
        title_bits.append(f"run {snap['run']}")
    if snap.get("model"):
        title_bits.append(inert(snap["model"]))
    if snap.get("tp_size"):
        title_bits.append(f"TP {snap['tp_size']}")
    if snap.get("engine") and snap["engine"] not in ("unknown", "none"):
        title_bits.append(snap["engine"])
    return Panel(grid, title=Text(" · ".join(title_bits)), title_align="left",
                 border_style="red" if snap.get("stalled") or snap.get("phase") == "crashed" else "blue")


def watch(
    ctx: typer.Context,
    paths: List[str] = typer.Argument(..., help="Log files, folders of logs, or - for a pipe (docker logs -f NAME | logsleuth watch -)."),
    plain: bool = typer.Option(False, "--plain", help="One line per state change and finding instead of the live view (automatic when stdout is not a terminal)."),
    fmt: WatchFormat = typer.Option(WatchFormat.text, "--format", help="Plain output: a text line or a JSON object per notice."),
    exit_on: List[str] = typer.Option([], "--exit-on", help="Stop when: ready, crash, or finding=SEVERITY (repeatable)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Stop after this many seconds (exit 6)."),
    poll: float = typer.Option(0.5, "--poll", help="Seconds between looks at the files."),
    store_every: float = typer.Option(5.0, "--store-every", help="Seconds between stores into the database (and rule runs)."),
    status_every: float = typer.Option(60.0, "--status-every", help="While a server starts, a status line every this many (log) seconds; 0 for none."),
    speed: float = typer.Option(1.0, "--speed", help="The log is a replay running this many times faster than it was written (scales stall thresholds)."),
    from_end: bool = typer.Option(False, "--from-end", help="Skip what the files already hold; follow only new lines."),
    no_findings: bool = typer.Option(False, "--no-findings", help="Do not run the diagnose rules."),
    rules_dir: List[str] = typer.Option([], "--rules-dir", help="Extra folder of rule files."),
    set_: List[str] = typer.Option([], "--set", help="Override a rule parameter: RULE.PARAM=VALUE."),
):
    """Follow growing server logs live: phase, progress with ETA, stalls, findings; stores everything."""
    from ..db.connection import default_db_path
    from ..errors import BadInputError, UsageError
    from ..watch.session import Watch, WatchOptions, parse_exit_on

    db = ctx.find_root().params.get("db")  # the global --db (or LOGSLEUTH_DB)

    fmt = fmt.value
    try:
        parse_exit_on(exit_on)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for value, name in ((poll, "--poll"), (store_every, "--store-every"), (speed, "--speed")):
        if value <= 0:
            raise UsageError(f"{name} {value:g}: must be positive")
    if paths.count("-") > 1:
        raise UsageError("- (stdin) can be given once")
    if "-" in paths and sys.stdin.isatty():
        raise BadInputError("-: stdin is a terminal; pipe a log into it (docker logs -f NAME | logsleuth watch -)")
    live = not plain and fmt == "text" and sys.stdout.isatty()
    out = sys.stdout
    rules = {"extra_dirs": rules_dir or None, "sets": set_ or None}
    options = WatchOptions(paths=list(paths), db_path=db or default_db_path(), poll_s=poll,
                           store_every_s=store_every, exit_on=list(exit_on), timeout_s=timeout, speed=speed,
                           from_end=from_end, status_every_s=status_every, findings=not no_findings,
                           rules={k: v for k, v in rules.items() if v}, stdin=sys.stdin.buffer if "-" in paths else None)

    def emit(notice: dict) -> None:
        if live:
            if notice.get("event") == "note":
                sys.stderr.write(f"{inert(notice.get('text', ''))}\n")
            return
        out.write((plain_json(notice, default=str) if fmt == "jsonl" else _line(notice)) + "\n")
        out.flush()

    w = Watch(options, emit)
    presses = {"n": 0}

    def on_signal(signum, frame):  # first: stop cleanly and store; second Ctrl-C: give up now
        presses["n"] += 1
        if presses["n"] > 1:
            raise KeyboardInterrupt
        w.stop()

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        if live:
            from rich.console import Console, Group
            from rich.live import Live
            from rich.text import Text

            console = Console(file=out)

            def view(watcher):
                snaps = watcher.snapshots()
                if not snaps:
                    return Text("waiting for input ...")
                return Group(*[_panel(s) for s in snaps])

            with Live(Text("starting ..."), console=console, refresh_per_second=4, transient=False) as lv:
                rc = w.run(on_poll=lambda watcher: lv.update(view(watcher)))
                lv.update(view(w))
        else:
            rc = w.run()
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    if rc == 130:
        sys.stderr.write("stopped; everything read so far is stored\n")
    raise typer.Exit(rc)


def register(app) -> None:
    """Add ``logsleuth watch`` to the typer app (one line in cli/app.py)."""
    app.command("watch")(watch)
