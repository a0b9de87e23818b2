"""One watch: follow sources, track their runs, store and diagnose them, decide when to stop.

Contract: ``Watch(options, emit).run()`` polls every followed source, feeds new lines to
each source's ``SourceTracker``, passes every notice (dict; see ``phases.py`` and the
docs/watch.md) to ``emit`` in order, stores the new bytes in the database
on a background thread every ``store_every_s`` seconds (short transactions, the database
closed in between) and reports the findings of the rules as ``finding`` notices, each
once. It returns the exit code: ``EXIT_OK`` when the ``--exit-on`` condition was met or a
pipe ended, ``EXIT_FINDING`` for a finding at or above ``--exit-on finding=SEVERITY``,
``EXIT_CRASHED`` when a followed server crashed (``--exit-on crash`` or ``ready`` that
can no longer come), ``EXIT_TIMEOUT`` when ``--timeout`` passed first, and
``EXIT_INTERRUPTED`` on Ctrl-C/SIGTERM (``stop()``). Whatever was read is stored before
``run`` returns, also when interrupted.

Time: the tracker runs on log time. Between lines, log time advances with the wall clock
times ``speed`` (1 for a live server; a replay sped up 100x passes ``speed=100`` so stall
thresholds keep their meaning).
"""
from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..analysis.severity import SEVERITIES, at_or_above
from .follow import FileFollower, PipeFollower
from .observe import LineObserver
from .phases import SourceTracker

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_CRASHED = 5
EXIT_TIMEOUT = 6
EXIT_INTERRUPTED = 130


@dataclass
class WatchOptions:
    paths: list[str]
    db_path: str
    poll_s: float = 0.25
    store_every_s: float = 5.0
    exit_on: list[str] = field(default_factory=list)  # "ready", "crash", "finding=SEVERITY"
    timeout_s: float | None = None
    speed: float = 1.0
    from_end: bool = False
    status_every_s: float = 60.0  # log seconds between status notices while a server starts (0: none)
    findings: bool = True
    rules: dict = field(default_factory=dict)  # diagnose keyword arguments (rules dirs, --set ...)
    stdin: object | None = None  # binary stream for "-"
    spool_dir: str | None = None  # where a pipe is copied to (default: beside the database)


def parse_exit_on(values: list[str]) -> tuple[bool, bool, str | None]:
    """``--exit-on`` values -> (ready, crash, finding severity); ValueError names a bad one."""
    ready = crash = False
    severity = None
    for v in values:
        v = v.strip().lower()
        if v == "ready":
            ready = True
        elif v == "crash":
            crash = True
        elif v.startswith("finding"):
            sev = v.partition("=")[2] or "warning"
            if sev not in SEVERITIES:
                raise ValueError(f"--exit-on {v}: severity must be one of {', '.join(SEVERITIES)}")
            severity = sev
        else:
            raise ValueError(f"--exit-on {v}: expected ready, crash or finding=SEVERITY")
    return ready, crash, severity


def check_followable(path: str) -> None:
    """Refuse what cannot become a log (BadInputError, exit 3): a FIFO, socket or device, an
    unreadable file, binary data. A missing or empty file is fine: a server may not have
    written it yet."""
    from ..ingest.stages import check_input

    if os.path.lexists(path) and not (os.path.isfile(path) and os.path.getsize(path) == 0):
        check_input(path)


def end_of_log_rules(extra_dirs=None) -> set:
    """Rules that judge a run by where its log ends (``end_state = 'truncated'``): while the
    log still grows, every starting run "ends" at its last line, so these wait for the run
    to end or stall."""
    from ..analysis.rules import load_rules

    try:
        return {r.id for r in load_rules(extra_dirs) if "'truncated'" in r.sql}
    except Exception:  # a broken rule file is reported by the store's diagnose
        return set()


@dataclass
class Followed:
    """One followed path (or the pipe) with its observer and tracker."""
    name: str  # as shown (the path, or "-")
    path: str  # the file read (the spool file for a pipe)
    follower: FileFollower
    observer: LineObserver
    tracker: SourceTracker
    wall_last_line: float = 0.0
    wall_last_ts: float = 0.0
    last_ts_seen: object = None
    partial_fed: set = field(default_factory=set)
    partial_text: str = ""
    dirty: bool = False  # bytes arrived since the last store
    new_generation: bool = False
    rotated_to: str | None = None  # where the file went at its last rotation (stored once more)
    waiting_noted: bool = False


class Watch:
    def __init__(self, options: WatchOptions, emit: Callable[[dict], None], store=None,
                 clock: Callable[[], float] = time.monotonic):
        from .store import Store

        self.o = options
        self.emit = emit
        self.clock = clock
        self.ready_exit, self.crash_exit, self.finding_exit = parse_exit_on(options.exit_on)
        self.store = store if store is not None else Store(options.db_path, dict(options.rules), options.findings)
        self.history = None
        self.sources: list[Followed] = []
        self._dirs: list[str] = []
        self._stop = threading.Event()
        self._interrupted = False
        self._findings_seen: set = set()
        self._deferred: list = []  # end-of-log findings held while their run still writes
        self._end_rules: set = set()
        self.findings: list[dict] = []  # newest first
        self._store_q: queue.Queue = queue.Queue()
        self._store_req = threading.Event()
        self._store_thread: threading.Thread | None = None
        self._started = clock()
        self._last_store = clock()
        self._exit: int | None = None

    # -- set-up -------------------------------------------------------------------------
    def _add(self, name: str, follower: FileFollower) -> Followed:
        f = Followed(name, follower.path, follower, LineObserver(), SourceTracker(name, history=self.history))
        f.wall_last_line = self.clock()
        self.sources.append(f)
        return f

    def setup(self) -> None:
        try:
            self.history = self.store.history()
        except Exception as exc:  # an unreadable database is reported by the first store
            self.history = None
            self.emit({"event": "note", "text": f"no earlier runs to compare with: {exc}"})
        self._end_rules = end_of_log_rules(self.o.rules.get("extra_dirs"))
        LineObserver().observe(["[2000-01-01 00:00:00] warm-up"], 1)  # compiles the grammars' regexes once
        for p in self.o.paths:
            if p == "-":
                spool_dir = self.o.spool_dir or str(Path(self.o.db_path).resolve().parent)
                spool = os.path.join(spool_dir, f"watch-stdin-{time.strftime('%Y%m%d-%H%M%S')}.log")
                self._add("-", PipeFollower(self.o.stdin, spool))
                self.emit({"event": "note", "text": f"stdin is copied to {spool} and stored from there"})
            elif os.path.isdir(p):
                self._dirs.append(p)
            else:
                check_followable(p)
                self._add(p, FileFollower(p, from_start=not self.o.from_end))
        self._scan_dirs()
        self.emit({"event": "watching", "sources": [s.name for s in self.sources] + self._dirs,
                   "db": self.o.db_path})

    def _scan_dirs(self) -> None:
        from ..intake.paths import LOG_SUFFIXES

        known = {s.path for s in self.sources}
        for d in self._dirs:
            for f in sorted(Path(d).rglob("*")):
                if (f.is_file() and not f.name.startswith(".") and str(f) not in known
                        and f.suffix.lower() in LOG_SUFFIXES and f.suffix.lower() != ".gz"):
                    self._add(str(f), FileFollower(str(f), from_start=not self.o.from_end))

    # -- the loop -----------------------------------------------------------------------
    def stop(self) -> None:
        """Ctrl-C / SIGTERM: finish the current poll, store what was read, return 130."""
        self._interrupted = True
        self._stop.set()

    def run(self, on_poll: Callable[["Watch"], None] | None = None) -> int:
        self.setup()
        self._store_thread = threading.Thread(target=self._store_loop, daemon=True, name="logsleuth-watch-store")
        self._store_thread.start()
        polls = 0
        try:
            while not self._stop.is_set():
                self.poll_once()
                polls += 1
                if self._dirs and polls % 8 == 0:
                    self._scan_dirs()
                if on_poll:
                    on_poll(self)
                if self._exit is not None:
                    break
                if self.o.timeout_s is not None and self.clock() - self._started >= self.o.timeout_s:
                    self.emit({"event": "timeout", "after_s": self.o.timeout_s})
                    self._exit = EXIT_TIMEOUT
                    break
                self._stop.wait(self.o.poll_s)
        finally:
            self._finish()
        if self._interrupted and self._exit is None:
            return EXIT_INTERRUPTED
        return self._exit if self._exit is not None else EXIT_OK

    def poll_once(self) -> None:
        now = self.clock()
        for src in list(self.sources):
            self._poll_source(src, now)
        self._drain_findings()
        if self.clock() - self._last_store >= self.o.store_every_s and any(s.dirty for s in self.sources):
            self._last_store = self.clock()
            self._store_req.set()

    def _poll_source(self, src: Followed, now: float) -> None:  # noqa: C901 (one branch per thing a followed file can do)
        tail = src.follower.poll()
        tr = src.tracker
        if tail.lines:
            self._feed(src, src.observer.observe(tail.lines, tail.first_line_no), complete=True)
            last = tail.lines[-1]
            tr.note_line(tail.first_line_no + len(tail.lines) - 1, last.rsplit("\r", 1)[-1][:300])
        if tail.partial != src.partial_text:
            src.partial_text = tail.partial
            if tail.partial:
                line_no = src.follower.lines_done + 1
                obs = [o for o in src.observer.observe_partial(tail.partial, line_no)
                       if (o.line_no, o.kind, o.text) not in src.partial_fed]
                for o in obs:
                    src.partial_fed.add((o.line_no, o.kind, o.text))
                self._feed(src, obs, complete=False)
                tr.note_line(line_no, tail.partial.rsplit("\r", 1)[-1][:300])
        # the moment the lines were taken in: the watcher's own processing time is not the
        # server's silence (it counts times the replay speed)
        done = self.clock()
        if tail.grew:
            src.dirty = True
            src.wall_last_line = done
            self._emit_all(tr.resumed())
        if tr.last_ts is not None and tr.last_ts != src.last_ts_seen:
            src.last_ts_seen, src.wall_last_ts = tr.last_ts, done
        self._on_notes(src, tail.notes)
        if src.follower.position == 0 and src.follower.generation == 0 and not tail.grew and not src.waiting_noted \
                and not os.path.exists(src.path):
            src.waiting_noted = True
            self._emit_all([{"event": "note", "source": src.name, "text": "waiting for the file to appear"}])
        # stall check on log time
        now = self.clock()
        silent = max(now - src.wall_last_line, 0.0) * self.o.speed
        log_now = self.log_now(src, now)
        self._emit_all(tr.check(log_now, silent))
        self._emit_all(tr.status(log_now, self.o.status_every_s))

    def _on_notes(self, src: Followed, notes: list[str]) -> None:
        """What the follower noticed about the file: a new generation, the pipe's end, a
        refused replacement, an over-long line, the file gone."""
        tr = src.tracker
        for note in notes:
            if note in ("rotated", "truncated"):
                if note == "rotated":
                    from .follow import find_rotated

                    moved = find_rotated(src.path, src.follower.previous_ino)
                    if moved:
                        src.rotated_to = moved
                self._emit_all(tr.new_generation(note))
                src.partial_fed.clear()
                src.partial_text = ""
                src.new_generation = True
                src.dirty = True
            elif note == "closed":
                self._emit_all([{"event": "input_ended", "source": src.name}])
                if all(isinstance(s.follower, PipeFollower) and s.follower.ended for s in self.sources):
                    if self._exit is None:
                        self._exit = EXIT_TIMEOUT if (self.ready_exit or self.crash_exit or self.finding_exit) else EXIT_OK
            elif note == "long_line":
                self._emit_all([{"event": "note", "source": src.name,
                                 "text": "a line passed 64 KiB without its newline: it is cut there, and the "
                                         "file is stored again once the line ends"}])
            elif note.startswith("refused: "):
                self._emit_all([{"event": "note", "source": src.name,
                                 "text": f"{note.removeprefix('refused: ')}: not followed, nothing of it stored"}])
            elif note == "vanished":
                self._emit_all([{"event": "note", "source": src.name, "text": "file vanished; waiting for it to come back"}])

    def log_now(self, src: Followed, now: float | None = None):
        import datetime as dt

        ts = src.tracker.last_ts
        if ts is None:
            return None
        now = self.clock() if now is None else now
        return ts + dt.timedelta(seconds=(now - src.wall_last_ts) * self.o.speed)

    def _feed(self, src: Followed, observations, complete: bool) -> None:
        tr = src.tracker
        if complete and src.partial_fed:
            # a line first seen growing: its updates up to the newest one already fed were
            # live once (or skipped between polls); feed only what came after
            lines = {k[0] for k in src.partial_fed}
            last_fed = max((i for i, o in enumerate(observations)
                            if (o.line_no, o.kind, o.text) in src.partial_fed), default=None)
            if last_fed is not None:
                observations = [o for i, o in enumerate(observations)
                                if i > last_fed or o.line_no not in lines]
            src.partial_fed = {k for k in src.partial_fed if k[0] > src.follower.lines_done}
        for o in observations:
            self._emit_all(tr.feed(o))

    def _emit_all(self, notices: list[dict]) -> None:
        for n in notices:
            self.emit(n)
            self._check_exit(n)

    def _check_exit(self, n: dict) -> None:
        if self._exit is not None:
            return
        ev = n.get("event")
        if ev == "end" and n.get("state") == "crashed" and (self.crash_exit or self.ready_exit):
            self._exit = EXIT_CRASHED
        elif ev == "phase" and n.get("phase") in ("ready", "serving") and self.ready_exit:
            self._exit = EXIT_OK
        elif ev == "finding" and self.finding_exit:
            if at_or_above(n.get("severity", "info"), self.finding_exit):
                self._exit = EXIT_FINDING

    # -- storing and findings -----------------------------------------------------------
    def _store_loop(self) -> None:
        while not self._stop.is_set():
            if not self._store_req.wait(0.2):
                continue
            self._store_req.clear()
            self._store_now()

    def _store_now(self) -> None:
        dirty = [s for s in self.sources if s.dirty and s.follower.position > 0 or s.new_generation]
        if not dirty:
            return
        for s in dirty:
            s.dirty = False
        rotated = {s.path: s.rotated_to for s in dirty if s.rotated_to}
        for s in dirty:
            s.new_generation, s.rotated_to = False, None
        # the lines this sync stores at least (it reads each file to its end): a finding it
        # gives is about the log up to there
        covered = {s.path: s.tracker.last_line_no for s in dirty}
        try:
            # only the file the follower vetted and reads is stored: a path swapped for a link or
            # another user's file since (even an instant ago) is not
            vetted = {s.path: s.follower for s in dirty}
            found = self.store.sync([s.path for s in dirty if os.path.exists(s.path)], rotated,
                                    admit=lambda p: vetted[p].vetted_now())
        except Exception as exc:  # keep watching; say why nothing was stored this time (retried next time)
            self._store_q.put({"event": "note", "text": f"could not store: {str(exc).splitlines()[0]}"})
            for s in dirty:
                s.dirty = True
                s.rotated_to = s.rotated_to or rotated.get(s.path)
            return
        if self.history is not None:
            from .history import model_key

            # the hardware the database learned for a watched run narrows its comparisons
            for rows in list(self.store.stored_runs.values()):
                for r in rows:
                    if r.get("gpu_name") and r.get("model"):
                        self.history.gpu.setdefault(model_key(r["model"]), r["gpu_name"])
        for f in found:
            self._store_q.put(("finding", f, covered.get(f.get("path"))))

    def _drain_findings(self) -> None:
        items, self._deferred = list(self._deferred), []
        while True:
            try:
                items.append(self._store_q.get_nowait())
            except queue.Empty:
                break
        for item in items:
            if isinstance(item, dict):
                self._emit_all([item])
                continue
            f, covered = item[1], item[2]
            src = next((s for s in self.sources if s.path == f.get("path")), None)
            run_state = None
            if src is not None and f.get("line_no") is not None:
                runs = [r for r in src.tracker.runs if r.launch_line <= f["line_no"]]
                run_state = runs[-1] if runs else None
            run = run_state.run if run_state else None
            # once per rule and run: its line and numbers move as the log grows
            key = (f["rule_id"], f.get("path"), src.follower.generation if src else 0, run)
            if key in self._findings_seen:
                continue
            if f["rule_id"] in self._end_rules and run_state is not None and (
                    not run_state.ended and not (src.tracker.stalled and run_state is src.tracker.current)
                    or covered is not None and covered < src.tracker.last_line_no):
                # judged on "the log ends here": premature while the run still writes; held
                # (newest version only) until the run ends or stalls, and until a store has
                # seen every line read so far (a version from an earlier store judged an
                # earlier end: the stall was seen later, at lines it never saw)
                self._deferred = [d for d in self._deferred if d[3] != key] + [(item[0], f, covered, key)]
                continue
            self._findings_seen.add(key)
            ev = (f.get("evidence_lines") or [{}])[0]
            notice = {"event": "finding", "source": src.name if src else f.get("path"), "run": run,
                      "severity": f["severity"], "rule_id": f["rule_id"], "title": f["title"],
                      "line": f.get("line_no"), "evidence": f.get("evidence") or ev.get("text"), "fix": f.get("fix")}
            self.findings.insert(0, notice)
            self._emit_all([notice])

    def _finish(self) -> None:
        self._stop.set()
        if self._store_thread is not None:
            self._store_thread.join()
        # a last poll and store: everything read so far ends up in the database
        for src in self.sources:
            tail = src.follower.poll()
            if tail.lines or tail.grew:
                src.dirty = True
        self._store_now()
        self._drain_findings()
        for src in self.sources:
            src.follower.close()

    # -- for views ----------------------------------------------------------------------
    def snapshots(self, max_runs_per_source: int = 2) -> list[dict]:
        now = self.clock()
        out = []
        for src in self.sources:
            log_now = self.log_now(src, now)
            for run in src.tracker.runs[-max_runs_per_source:]:
                snap = src.tracker.snapshot(run, log_now)
                snap["silent_s"] = round((now - src.wall_last_line) * self.o.speed, 1)
                snap["findings"] = [f for f in self.findings if f.get("source") == src.name and f.get("run") == run.run]
                out.append(snap)
            if not src.tracker.runs:
                out.append({"source": src.name, "run": None, "phase": "waiting", "title": "waiting for a launch",
                            "last_line": src.tracker.last_line_no, "compare": [], "findings": []})
        return out
