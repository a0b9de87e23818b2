"""How a run ended, and the one root cause of a fatal end.

Contract: ``derive_end_state(con, run_id, r)`` fills ``end_state`` (``served``,
``ready_idle``, ``crashed``, ``killed``, ``startup_failed``, ``truncated``), ``end_line`` and
``end_reason`` of the runs row ``r``. For a fatal end, ``end_line``/``end_reason`` are the root
cause chosen by ``root_cause`` (queries/derive/root_cause.sql): the first failure in time across
ranks and nodes, preferring records that name a cause over wrappers ("Received sigquit",
EngineDeadError) and consequences (EOFError on a peer). Everything else that reports a run's
cause (ingest summary, diagnose rules, report) reads these two columns, so one cause is shown
everywhere. A run that never became ready and whose last word is an exception that no pattern
marked fatal (a kernel AssertionError during warm-up) died of it.
"""
from __future__ import annotations

from ..db.connection import fetch_one
from .sql import sql



def _one(con, q, params=()):
    row = fetch_one(con.execute(q, list(params)))
    return row[0] if row else None


def root_cause(con, run_id: int, shutdown_line: int | None = None):
    """(line_no, kind, exc_type, message, secondary, n_fatal) of the run's root cause, or None."""
    return fetch_one(con.execute(sql("root_cause"), [run_id, shutdown_line]))


def describe(kind, exc_type, message, secondary: bool) -> str:
    head = kind or exc_type or "error"
    # "kind: message", unless the message already names it ("triton...CompilationError: at 1:0:")
    text = f"{head}: {message}" if message and str(head) not in str(message)[:200] else (message or head)
    if secondary:
        text += " (no earlier record names a root cause: only this wrapper/consequence was logged)"
    return text[:500]


def traffic(con, run_id, after_line=None, before_line=None) -> int:
    """Evidence that the server handled requests: decode/stat lines with activity, prefill lines,
    POST requests (optionally only between two lines)."""
    return _one(con, """SELECT (SELECT count(*) FROM decode_stats WHERE run_id = $1 AND line_no > coalesce($2, 0)
                                   AND line_no < coalesce($3, 9223372036854775807)
                                   AND (coalesce(gen_tok_s, 0) > 0 OR coalesce(running_reqs, 0) > 0))
                                + (SELECT count(*) FROM prefill_stats WHERE run_id = $1 AND line_no > coalesce($2, 0)
                                   AND line_no < coalesce($3, 9223372036854775807))
                                + (SELECT count(*) FROM events WHERE run_id = $1 AND kind = 'http_access'
                                   AND line_no > coalesce($2, 0) AND line_no < coalesce($3, 9223372036854775807)
                                   AND text LIKE 'POST %')""", [run_id, after_line, before_line])


def derive_end_state(con, run_id: int, r: dict, kill_markers: list[str]) -> None:
    """A fatal error before any planned shutdown decides (crashed once the server was ready or
    had served traffic, else startup_failed); errors after a planned shutdown are shutdown
    noise. Without a fatal error: an unready run ending on an exception died of it; killed
    (kill/termination notice in the tail); served / ready_idle (ready, with or without traffic),
    served also for an excerpt that shows traffic but no launch, else truncated.
    ``kill_markers``: SQL LIKE patterns of kill notices (grammar [markers] kill)."""
    shutdown = _one(con, "SELECT min(line_no) FROM events WHERE run_id = ? AND kind = 'shutdown'", [run_id])
    if shutdown is not None:  # errors raised while a planned shutdown tears the engine down did not kill it
        con.execute("UPDATE errors SET fatal = false WHERE run_id = ? AND fatal AND line_no > ?", [run_id, shutdown])
    cause = root_cause(con, run_id, shutdown)
    ready_line = r["ready_line"]
    if cause is None and ready_line is None:
        last = fetch_one(con.execute(sql("terminal_traceback"), [run_id]))
        if last:
            con.execute("UPDATE errors SET fatal = true WHERE run_id = ? AND line_no = ?", [run_id, last[0]])
            cause = (last[0], last[1], last[2], last[3], False, 1)
    kill_sql = " OR ".join("raw LIKE ?" for _ in kill_markers) or "false"
    killed = _one(con, f"""SELECT min(line_no) FROM (SELECT line_no, raw FROM lines WHERE run_id = ?
                          ORDER BY line_no DESC LIMIT 30) WHERE {kill_sql}""", [run_id, *kill_markers])
    if cause:
        first_fatal = _one(con, "SELECT min(line_no) FROM errors WHERE run_id = ? AND fatal", [run_id])
        at = min(cause[0], first_fatal or cause[0])
        was_serving = (ready_line is not None and at > ready_line) or \
            (ready_line is None and traffic(con, run_id, None, at) > 0)
        state = "crashed" if was_serving else "startup_failed"
        r["end_line"], r["end_reason"] = cause[0], describe(cause[1], cause[2], cause[3], bool(cause[4]))
    elif killed:
        state, r["end_line"], r["end_reason"] = "killed", killed, "process killed (no error line)"
    elif ready_line:
        state = "served" if traffic(con, run_id, ready_line) else "ready_idle"
        r["end_line"] = shutdown or r["last_line"]
        r["end_reason"] = "planned shutdown" if shutdown else "log ends while serving"
    elif r["engine"] in ("bench",):
        state, r["end_line"], r["end_reason"] = None, r["last_line"], None
    elif traffic(con, run_id):
        state = "served"
        r["end_line"] = shutdown or r["last_line"]
        r["end_reason"] = ("planned shutdown" if shutdown else "log ends while serving") + \
            " (traffic seen, no ready line in the log)"
    else:
        state, r["end_line"] = "truncated", r["last_line"]
        r["end_reason"] = "log ends before the server was ready (no error line)"
    r["end_state"] = state
