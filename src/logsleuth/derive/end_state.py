"""How a run ended, and the one root cause of a fatal end.

Contract: ``derive_end_states(con, rows, shutdowns, kill_markers, interrupt_markers)`` fills
``end_state`` (``served``, ``ready_idle``, ``completed``, ``crashed``, ``killed``,
``startup_failed``, ``truncated``), ``end_line``, ``end_reason``, ``mode`` (``server``,
``offline`` or None) and ``end_phase`` of every runs row of ``rows`` (run id -> row dict holding
``ready_line``, ``last_line`` and ``engine``), with a fixed number of statements whatever the
number of runs. A run that never became ready and was told to stop (SIGTERM, Ctrl-C: grammar
[markers] interrupt) is ``killed``, not ``startup_failed``: the interrupt's traceback and the
wrappers it sets off in child processes are not the server's own error. An offline run
(queries/derive/run_mode.sql: no HTTP server, an offline result or progress bar) that
finished without a fatal error is ``completed``. ``end_phase`` is the start-up phase an unready
run ended in (queries/derive/startup_phases.toml). For a fatal end, ``end_line``/``end_reason`` are the root cause chosen by
queries/derive/root_cause.sql: the first failure in time across ranks and nodes, preferring
records that name a cause over wrappers ("Received sigquit", EngineDeadError) and consequences
(EOFError on a peer). Everything else that reports a run's cause (ingest summary, diagnose
rules, report) reads these two columns, so one cause is shown everywhere. A run that never
became ready and whose last word is an exception that no pattern marked fatal (a kernel
AssertionError during warm-up) died of it. Errors after a planned shutdown are shutdown noise:
their fatal flag is cleared.
"""
from __future__ import annotations

import polars as pl

from .sql import data, near, run_set


def describe(kind, exc_type, message, secondary: bool) -> str:
    head = kind or exc_type or "error"
    # "kind: message", unless the message already names it ("triton...CompilationError: at 1:0:")
    text = f"{head}: {message}" if message and str(head) not in str(message)[:200] else (message or head)
    if secondary:
        text += " (no earlier record names a root cause: only this wrapper/consequence was logged)"
    return text[:500]


def _frame(data: dict) -> pl.DataFrame:
    return pl.DataFrame(data, schema={k: pl.Int64 for k in data})


def traffic(con, bounds: dict[int, tuple[int | None, int | None]]) -> dict[int, int]:
    """Evidence that each server handled requests (queries/derive/traffic.sql): run id ->
    number of decode lines with activity, prefill lines and POST requests strictly between
    the bounds (after, before) given for it (None: no bound); runs without any are left out."""
    if not bounds:
        return {}
    ids = list(bounds)
    frame = _frame({"run_id": ids, "after_line": [bounds[r][0] for r in ids],
                    "before_line": [bounds[r][1] for r in ids]})
    return dict(run_set(con, "traffic", runs=ids, frames={"derive_traffic": frame}))


def _kill_lines(con, rows: dict, kill_markers: list[str]) -> dict[int, int | None]:
    """The first kill notice among the last 30 lines of each run (None: none)."""
    kill_sql = " OR ".join("l.raw LIKE ?" for _ in kill_markers) or "false"
    ids = list(rows)
    frame = _frame({"run_id": ids, "last_line": [rows[r]["last_line"] for r in ids]})
    found = {rid: (n, killed) for rid, n, killed in run_set(
        con, "kill_tail", runs=ids, frames={"derive_runs": frame}, params=kill_markers,
        fmt={"kill": kill_sql, "near": near("line_no", {r: (rows[r]["last_line"] - 30, None) for r in ids})})}
    out = {}
    for rid in ids:
        n, killed = found.get(rid, (0, None))
        if n < min(30, rows[rid]["n_lines"]):  # its last 30 lines are not the 30 numbered last: read them
            killed = run_set(con, "tail_of_run", fmt={"kill": kill_sql.replace("l.raw", "raw")},
                             params=[rid, *kill_markers])[0][0]
        out[rid] = killed
    return out


def derive_end_states(con, rows: dict[int, dict], shutdowns: dict[int, int | None], kill_markers: list[str],
                      interrupt_markers: list[str] = ()) -> None:
    """A fatal error before any planned shutdown decides (crashed once the server was ready or
    had served traffic, else startup_failed); errors after a planned shutdown are shutdown
    noise. Without a fatal error: an unready run ending on an exception died of it; killed
    (kill/termination notice in the tail); served / ready_idle (ready, with or without traffic),
    served also for an excerpt that shows traffic but no launch, else truncated.
    ``shutdowns``: run id -> its first planned-shutdown line; ``kill_markers``: SQL LIKE
    patterns of kill notices (grammar [markers] kill); ``interrupt_markers``: those of a stop
    request (SIGTERM, Ctrl-C)."""
    if not rows:
        return
    ids = list(rows)
    shut = {rid: shutdowns.get(rid) for rid in ids}
    causes = _causes(con, rows, ids, shut)
    killed = _kill_lines(con, rows, kill_markers)
    unready = [rid for rid in ids if rows[rid]["ready_line"] is None]
    stopped = _interrupt_lines(con, unready, interrupt_markers)
    for rid, line in stopped.items():  # told to stop while starting: what followed is its consequence
        if not killed[rid] and (rid not in causes or causes[rid][4] or causes[rid][0] >= line):
            causes.pop(rid, None)
            killed[rid] = -line  # negative: an interrupt, not a kill notice
    modes = _modes(con, ids)
    first_fatal = dict(run_set(con, "first_fatal", runs=list(causes))) if causes else {}
    # which traffic each run's state depends on (at most one question per run)
    bounds, at = {}, {}
    for rid in ids:
        r, cause = rows[rid], causes.get(rid)
        if cause:
            at[rid] = min(cause[0], first_fatal.get(rid) or cause[0])
            if r["ready_line"] is None:
                bounds[rid] = (None, at[rid])
        elif killed[rid]:
            pass
        elif r["ready_line"]:
            bounds[rid] = (r["ready_line"], None)
        elif r["engine"] not in ("bench",):
            bounds[rid] = (None, None)
    seen = traffic(con, bounds)
    for rid in ids:
        rows[rid]["mode"], done = modes.get(rid, (None, None))
        _decide(rows[rid], causes.get(rid), killed[rid], at.get(rid), seen.get(rid, 0), shut[rid], done)
    _end_phases(con, rows)


def _interrupt_lines(con, ids: list[int], markers) -> dict[int, int]:
    """Run id -> the first line saying the process was told to stop (queries/derive/interrupt_line.sql)."""
    if not ids or not markers:
        return {}
    likes = " OR ".join("raw LIKE ?" for _ in markers)
    return dict(run_set(con, "interrupt_line", runs=ids, fmt={"interrupt": likes}, params=list(markers)))


def _modes(con, ids: list[int]) -> dict[int, tuple]:
    """Run id -> (mode, the line that shows an offline job done or None), for the runs that
    show how they ran (queries/derive/run_mode.sql): a server's evidence wins."""
    out = {}
    for rid, server, offline, done in run_set(con, "run_mode", runs=ids):
        out[rid] = ("server", None) if server else ("offline", done) if offline else (None, None)
    return out


def _end_phases(con, rows: dict[int, dict]) -> None:
    """``end_phase`` of the runs that ended without becoming ready (killed, failed or cut off
    while starting): the phase of their last milestone at or before their end line."""
    ends = {rid: r["end_line"] for rid, r in rows.items()
            if r["ready_line"] is None and r["end_state"] in ("killed", "startup_failed", "truncated")
            and r["end_line"] is not None}
    for r in rows.values():
        r["end_phase"] = "launching" if r["run_id"] in ends else None
    if not ends:
        return
    kinds = [(kind, phase) for phase, ks in data("startup_phases")["phases"].items() for kind in ks]
    phase_frame = pl.DataFrame(kinds, schema={"kind": pl.Utf8, "phase": pl.Utf8}, orient="row")
    frame = _frame({"run_id": list(ends), "end_line": list(ends.values())})
    for rid, phase in run_set(con, "end_phase", runs=list(ends),
                              frames={"derive_end": frame, "derive_phase": phase_frame}):
        rows[rid]["end_phase"] = phase
    titles = data("startup_phases")["titles"]
    for rid in ends:
        r = rows[rid]
        if r["end_state"] == "killed":  # a kill notice or a stop request: say what it interrupted
            r["end_reason"] += f", while {titles.get(r['end_phase'], r['end_phase'])}"


def _causes(con, rows: dict[int, dict], ids: list[int], shut: dict) -> dict:
    """Run id -> (line_no, kind, exc_type, message, secondary, n_fatal) of its root cause, for
    the runs that have one; fatal flags set right on the way (shutdown noise cleared, the
    terminal traceback of an unready run marked)."""
    stopped = [rid for rid in ids if shut[rid] is not None]
    if stopped:  # errors raised while a planned shutdown tears the engine down did not kill it
        run_set(con, "", runs=stopped, frames={"derive_shutdown": _frame(
            {"run_id": stopped, "shutdown_line": [shut[r] for r in stopped]})},
            text="UPDATE errors SET fatal = false FROM derive_shutdown s WHERE {runs@errors} "
                 "AND errors.run_id = s.run_id AND errors.fatal AND errors.line_no > s.shutdown_line")
    causes = {row[0]: row[1:] for row in run_set(
        con, "root_cause", runs=ids,
        frames={"derive_runs": _frame({"run_id": ids, "shutdown_line": [shut[r] for r in ids]})})}
    unready = [rid for rid in ids if rid not in causes and rows[rid]["ready_line"] is None]
    if unready:
        last = {row[0]: row[1:] for row in run_set(con, "terminal_traceback", runs=unready)}
        if last:
            marked = list(last)
            run_set(con, "", runs=marked, frames={"derive_marked": _frame(
                {"run_id": marked, "line_no": [last[r][0] for r in marked]})},
                text="UPDATE errors SET fatal = true FROM derive_marked m WHERE {runs@errors} "
                     "AND errors.run_id = m.run_id AND errors.line_no = m.line_no")
            for rid, (line_no, kind, exc_type, message) in last.items():
                causes[rid] = (line_no, kind, exc_type, message, False, 1)
    return causes


def _decide(r: dict, cause, killed_line, at, seen: int, shutdown, done=None) -> None:
    """Fill end_state, end_line and end_reason of one runs row from what was found
    (``killed_line`` negative: the line of an interrupt; ``done``: where an offline job
    shows it finished)."""
    ready_line = r["ready_line"]
    if cause:
        was_serving = (ready_line is not None and at > ready_line) or (ready_line is None and seen > 0)
        state = "crashed" if was_serving else "startup_failed"
        r["end_line"], r["end_reason"] = cause[0], describe(cause[1], cause[2], cause[3], bool(cause[4]))
    elif killed_line:
        state, r["end_line"] = "killed", abs(killed_line)
        r["end_reason"] = "process killed (no error line)" if killed_line > 0 else \
            "told to stop (SIGTERM / Ctrl-C) before the server was ready"
    elif r.get("mode") == "offline" and (done or shutdown):
        state, r["end_line"] = "completed", shutdown or r["last_line"]
        r["end_reason"] = "offline job finished" + (" (planned shutdown)" if shutdown else "")
    elif ready_line:
        state = "served" if seen else "ready_idle"
        r["end_line"] = shutdown or r["last_line"]
        r["end_reason"] = "planned shutdown" if shutdown else "log ends while serving"
    elif r["engine"] in ("bench",):
        state, r["end_line"], r["end_reason"] = None, r["last_line"], None
    elif seen:
        state = "served"
        r["end_line"] = shutdown or r["last_line"]
        r["end_reason"] = ("planned shutdown" if shutdown else "log ends while serving") + \
            " (traffic seen, no ready line in the log)"
    else:
        state, r["end_line"] = "truncated", r["last_line"]
        r["end_reason"] = "log ends before the server was ready (no error line)"
    r["end_state"] = state
