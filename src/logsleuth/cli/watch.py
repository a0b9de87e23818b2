"""`logsleuth watch`: follow starting or serving servers live (the library's ``watch`` package).

Contract: parse options -> one ``Watch`` -> render its notices and snapshots. A terminal
gets a rich Live view (one panel per run); otherwise (``--plain``, or stdout not a TTY)
one line per notice on stdout, text or ``--format jsonl``. Notes go to stderr. Exit codes
are the watch's own (docs/watch.md): 0 condition met / input ended, 1 finding at or
above ``--exit-on finding=SEV``, 5 a followed server crashed, 6 ``--timeout`` (or the
input ended before the condition), 130 Ctrl-C/SIGTERM; 2 and 3 as everywhere.
"""
from __future__ import annotations

import os
import signal
import sys
from types import MappingProxyType
from typing import List, Optional

import typer

from ..inert import inert, plain_json
from .output import choices


WatchFormat = choices("WatchFormat", "text jsonl", "Plain output: one line of text, or one JSON object, per notice.")

#: notices whose line is a template of their fields (``who`` and the inert ``text`` and
#: ``message`` added; a missing field prints as None)
_TEMPLATES = MappingProxyType({
    "stalled": "{who}: STALLED: {message}",
    "resumed": "{who}: resumed (line {line})",
    "rotated": "{who}: file rotated; following the new file",
    "truncated": "{who}: file truncated; following the new file",
    "timeout": "timeout after {after_s} s",
    "input_ended": "{who}: input ended",
})


class _Fields(dict):
    def __missing__(self, key):
        return None


def _line(n: dict) -> str:
    """One plain-text line for a notice."""
    ev = n.get("event")
    who = f"{n.get('source', '')}"
    if n.get("run") is not None:
        who += f" run {n['run']}"
    text = inert(n.get("text", "")).strip()
    if ev in _TEMPLATES:
        return _TEMPLATES[ev].format_map(_Fields(n, who=who, text=text, message=inert(n.get("message", ""))))
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
    if ev == "finding":
        return (f"{who}: {n['severity'].upper()} {n['rule_id']}: {inert(n['title'])}"
                f" (line {n.get('line')}: {inert(n.get('evidence') or '').strip()[:160]})")
    if ev == "error":
        return f"{who}: {'fatal ' if n.get('fatal') else ''}error line {n.get('line')}: {text[:200]}"
    if ev == "end":
        return f"{who}: {n['state']} during {n.get('during', '?')} (line {n.get('line')}: {text[:160]})"
    if ev == "watching":
        return f"watching {', '.join(n.get('sources', []))} (database {n.get('db')})"
    return f"{who}: {text or ev}"


def _panel(snap: dict):
    """One run as a rich panel (all log text through ``inert``/Text, never markup)."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for label, text in _phase_rows(snap) + _serving_rows(snap) + _finding_rows(snap):
        grid.add_row(label, text)
    return Panel(grid, title=Text(_panel_title(snap)), title_align="left",
                 border_style="red" if snap.get("stalled") or snap.get("phase") == "crashed" else "blue")


def _phase_rows(snap: dict) -> list:
    """(label, Text) rows: phase and time in it, phase times so far, progress bar, stall."""
    from rich.text import Text

    from ..watch.phases import fmt_duration

    phase = Text(snap.get("title", "?"), style="bold red" if snap.get("phase") in ("crashed",) else "bold cyan")
    if snap.get("in_phase_s") is not None:
        phase.append(f"  for {fmt_duration(snap['in_phase_s'])}", style="")
    rows = [("phase", phase)]
    times = snap.get("phase_times") or {}
    if times:
        rows.append(("so far", Text("  ".join(f"{k} {fmt_duration(v)}" for k, v in times.items()))))
    prog = snap.get("progress")
    if prog:
        width = 30
        filled = int(width * prog["done"] / prog["total"]) if prog.get("total") else 0
        rows.append(("progress", Text("█" * filled + "░" * (width - filled) + f" {prog['done']}/{prog['total']}")))
        rows.append(("", Text(inert(snap.get("progress_text", "")))))
    if snap.get("stalled"):
        rows.append(("STALLED", Text(f"no new line for {fmt_duration(snap.get('silent_s'))} "
                                     f"(last line {snap.get('last_line')})", style="bold red")))
    return rows


#: serving figures shown as sparklines: (series key, label)
_SERIES = (("gen_tok_s", "gen tok/s"), ("running_reqs", "running"), ("queued_reqs", "queued"),
           ("kv_usage", "KV usage"), ("accept_len", "accept len"))
#: serving figures on the "serving" line: (key, label, digits)
_SERVING = (("running_reqs", "running", 0), ("queued_reqs", "queued", 0), ("gen_tok_s", "gen tok/s", 1),
            ("kv_usage", "KV", 2))


def _serving_rows(snap: dict) -> list:
    """(label, Text) rows while serving: current figures, sparklines, single-stream speed."""
    from rich.text import Text

    from .output import sparkline

    serving = snap.get("serving") or {}
    if not serving:
        return []
    parts = [f"{label} {serving[key]:.{digits}f}" for key, label, digits in _SERVING
             if isinstance(serving.get(key), (int, float))]
    if snap.get("cuda_graph_share") is not None:
        parts.append(f"CUDA graph {snap['cuda_graph_share']:.0%} of busy steps")
    rows = [("serving", Text("  ".join(parts)))]
    series = snap.get("series") or {}
    rows += [(label, Text(f"{sparkline(vals, 40, resolution=0.05)}  {min(vals):.1f}–{max(vals):.1f}"))  # as printed
             for key, label in _SERIES if len(vals := series.get(key, [])) > 1]
    if snap.get("accept_len_meaning"):
        rows.append(("", Text(snap["accept_len_meaning"])))
    if snap.get("single_stream_tok_s"):
        rows.append(("1-stream", Text(f"{snap['single_stream_tok_s']:.1f} tok/s (median at one running request)")))
    return rows


def _finding_rows(snap: dict) -> list:
    """(label, Text) rows: comparison with earlier runs, then up to six findings."""
    from rich.text import Text

    rows = [("vs before", Text(inert(line))) for line in snap.get("compare") or []]
    for i, f in enumerate((snap.get("findings") or [])[:6]):
        sev = f["severity"]
        t = Text(f"{sev} ", style={"critical": "bold red", "warning": "yellow"}.get(sev, ""))
        t.append(f"{f['rule_id']}: {inert(f['title'])}")
        t.append(f"\n  line {f.get('line')}: {inert(f.get('evidence') or '').strip()[:200]}", style="dim")
        rows.append(("finding" if i == 0 else "", t))
    return rows


def _panel_title(snap: dict) -> str:
    """source · run · model · TP · engine (log text made inert)."""
    source = snap.get("source", "")
    bits = [inert(os.path.basename(source) if len(source) > 30 else source)]
    if snap.get("run") is not None:
        bits.append(f"run {snap['run']}")
    if snap.get("model"):
        bits.append(inert(snap["model"]))
    if snap.get("tp_size"):
        bits.append(f"TP {snap['tp_size']}")
    if snap.get("engine") and snap["engine"] not in ("unknown", "none"):
        bits.append(snap["engine"])
    return " · ".join(bits)


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
    from ..watch.session import Watch, WatchOptions

    db = ctx.find_root().params.get("db")  # the global --db (or LOGSLEUTH_DB)

    fmt = fmt.value
    _check_options(paths, exit_on, poll=poll, store_every=store_every, speed=speed)
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

    rc = _run(Watch(options, emit), live, out)
    if rc == 130:  # a clean stop, said once: the entry point's interrupt message would add a second
        sys.stderr.write("stopped; everything read so far is stored\n")
        sys.exit(rc)
    raise typer.Exit(rc)


def _check_options(paths: list[str], exit_on: list[str], **positive: float) -> None:
    """Usage errors (exit 2) and an unusable stdin (exit 3) before anything is opened."""
    from ..errors import BadInputError, UsageError
    from ..watch.session import parse_exit_on

    try:
        parse_exit_on(exit_on)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for name, value in positive.items():
        if value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} {value:g}: must be positive")
    if paths.count("-") > 1:
        raise UsageError("- (stdin) can be given once")
    if "-" in paths and sys.stdin.isatty():
        raise BadInputError("-: stdin is a terminal; pipe a log into it (docker logs -f NAME | logsleuth watch -)")


def _run(w, live: bool, out) -> int:
    """Run the watch until its exit condition: the first Ctrl-C/SIGTERM stops it cleanly
    (what was read is stored), a second gives up at once. ``live``: a rich Live view of
    one panel per run, redrawn on every poll."""
    presses = {"n": 0}

    def on_signal(signum, frame):
        presses["n"] += 1
        if presses["n"] > 1:
            raise KeyboardInterrupt
        w.stop()

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        if not live:
            return w.run()
        from rich.console import Console, Group
        from rich.live import Live
        from rich.text import Text

        def view(watcher):
            snaps = watcher.snapshots()
            return Group(*[_panel(s) for s in snaps]) if snaps else Text("waiting for input ...")

        from .color import console_options, mode

        with Live(Text("starting ..."), console=Console(file=out, **console_options(mode())), refresh_per_second=4,
                  transient=False) as lv:
            rc = w.run(on_poll=lambda watcher: lv.update(view(watcher)))
            lv.update(view(w))
        return rc
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


def register(app) -> None:
    """Add ``logsleuth watch`` to the typer app (one line in cli/app.py)."""
    app.command("watch")(watch)
