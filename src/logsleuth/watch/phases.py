"""Phase tracker: what a starting or serving server is doing, from its observations.

Contract: pure logic, no I/O, no clock of its own. ``SourceTracker.feed(obs)`` takes the
observations of one followed source in line order (see ``observe.py``) and returns the
notices they cause (a new run, a phase change with the time spent in the previous phase,
weight/graph progress every 10 %, errors, the end of a run); ``check(log_now)`` returns a
``stalled`` notice when the source has been silent longer than its current phase allows,
and ``snapshot()`` the state a live view draws. Times are *log* time: the timestamps the
server printed, and for tqdm bars (which carry none) the bar's own elapsed clock anchored
on the last stamped line. The caller supplies ``log_now`` (see ``session.LogClock``).

Phases follow the startup of SGLang and vLLM (docs/sglang-log-formats.md §4-5,
docs/vllm-log-formats.md §4-6): launching → loading weights → torch.compile / JIT →
KV-cache allocation → CUDA-graph capture → ready → serving; a run ends crashed or stopped.
The tracker reads event *kinds* (the grammar's roles), never pattern names, so a grammar
that learns a new line shape moves the tracker too.
"""
from __future__ import annotations

import datetime as dt
import re
import statistics
from collections import deque
from dataclasses import dataclass, field

PHASES = ("launching", "loading_weights", "compiling", "kv_cache", "cuda_graphs", "ready", "serving")
ENDED = ("crashed", "stopped")
TITLES = {"launching": "launching", "loading_weights": "loading weights", "compiling": "torch.compile / JIT",
          "kv_cache": "KV-cache allocation", "cuda_graphs": "CUDA-graph capture", "ready": "ready",
          "serving": "serving", "crashed": "crashed", "stopped": "stopped"}
STARTUP = PHASES[:5]

#: event kind -> the phase it shows the server is in (kinds come from parsers/*.toml)
KIND_PHASE = {
    "weights_begin": "loading_weights", "weight_shards": "loading_weights", "weights_download": "loading_weights",
    "weights_format": "loading_weights",
    "dynamo_transform": "compiling", "compile": "compiling", "compile_graph": "compiling",
    "compile_cache_hit": "compiling", "jit_compile": "compiling",
    "kv_cache_memory": "kv_cache", "kv_cache_tokens": "kv_cache", "kv_blocks": "kv_cache", "memory_profiling": "kv_cache",
    "memory_profile": "kv_cache", "kv_cache_allocated": "kv_cache", "memory_pool_end": "kv_cache",
    "kv_cache_dtype": "kv_cache",
    "cuda_graph_begin": "cuda_graphs", "cuda_graph_bs": "cuda_graphs", "cuda_graph_num_tokens": "cuda_graphs",
    "cuda_graph_draft_begin": "cuda_graphs", "cuda_graph_piecewise_begin": "cuda_graphs",
    "server_ready": "ready",
}
#: kinds that mean "ready" per engine: SGLang is ready after its warm-up request ("fired up
#: and ready to roll"), seconds after uvicorn's "Application startup complete."; for vLLM
#: the uvicorn line is the ready signal
READY_KINDS = {"sglang": {"server_ready"}, "vllm": {"app_startup_complete", "server_ready"}}
#: kinds that close a phase; the server moves on to the engine's next phase
KIND_DONE = {"weights_loaded": "loading_weights", "weights_load_time": "loading_weights",
             "torch_compile": "compiling", "cuda_graph_end": "cuda_graphs"}
#: what comes after a closed phase, per engine (vLLM compiles after loading; SGLang allocates KV first)
NEXT_PHASE = {("vllm", "loading_weights"): "compiling", ("sglang", "loading_weights"): "kv_cache",
              ("vllm", "compiling"): "kv_cache", ("sglang", "compiling"): "kv_cache",
              ("vllm", "cuda_graphs"): "cuda_graphs", ("sglang", "cuda_graphs"): "cuda_graphs"}
#: tqdm bar description -> phase
BAR_PHASE = [(re.compile(r"shard|checkpoint|weights", re.I), "loading_weights"),
             (re.compile(r"captur|cuda ?graph|cudagraph", re.I), "cuda_graphs"),
             (re.compile(r"compil", re.I), "compiling")]
STOP_KINDS = {"shutdown", "process_exit", "job_cancelled"}
#: config keys naming the model and the tensor-parallel size (SGLang server_args, vLLM args/config)
MODEL_KEYS = ("model_path", "model", "model_tag")
TP_KEYS = ("tp_size", "tensor_parallel_size")

#: silence (log seconds) that is still normal in a phase without a moving bar; generous on
#: purpose: a false "stalled" is what makes people kill healthy servers
MIN_GAP = {"launching": 180.0, "loading_weights": 180.0, "compiling": 420.0, "kv_cache": 180.0,
           "cuda_graphs": 300.0}
BAR_GAP_FACTOR = 5.0  # a bar is stalled after this many of its typical update intervals
BAR_MIN_GAP = 30.0
HISTORY_GAP_FACTOR = 1.5  # ... or after 1.5x the whole phase of the previous run of this model
SERVING_GAP = 120.0  # with requests in flight, a scheduler that prints nothing this long is stuck
SPARK_WINDOW_S = 600.0  # sparklines show the last 10 minutes


def _meaning_of_accept_len(value: float) -> str:
    return (f"{value:.2f} tokens per verify step: each step emits the bonus token plus "
            f"{max(value - 1, 0):.2f} accepted draft tokens on average (1.0 = no draft accepted)")


@dataclass
class Bar:
    phase: str
    desc: str
    n: int
    total: int
    t0: dt.datetime  # log time of the bar's start (elapsed 0)
    elapsed_s: float
    remaining_s: float | None
    updates: deque = field(default_factory=lambda: deque(maxlen=256))  # (elapsed_s, n) of recent updates
    last_decile: int = -1

    @property
    def rate_s_per_item(self) -> float | None:
        if self.n <= 0 or self.elapsed_s <= 0:
            return None
        return self.elapsed_s / self.n

    @property
    def eta_s(self) -> float | None:
        rate = self.rate_s_per_item
        if rate is None:
            return self.remaining_s
        return max(self.total - self.n, 0) * rate

    def typical_gap(self) -> float | None:
        ups = list(self.updates)
        moves = [b[0] - a[0] for a, b in zip(ups, ups[1:]) if b[1] > a[1]]
        return statistics.median(moves) if moves else self.rate_s_per_item


@dataclass
class RunState:
    run: int  # ordinal within the source (1-based)
    launch_line: int
    started: dt.datetime | None
    engine: str
    phase: str = "launching"
    phase_since: dt.datetime | None = None
    phase_times: dict = field(default_factory=dict)  # phase -> seconds spent (closed phases)
    model: str | None = None
    tp_size: int | None = None
    bars: dict = field(default_factory=dict)  # phase -> Bar (newest)
    weights_gb: float | None = None  # weight bytes (GB) when known (this run or a previous one)
    weight_gb_source: str = ""
    last_line_no: int = 0
    last_text: str = ""
    last_ts: dt.datetime | None = None
    serving: dict = field(default_factory=dict)  # latest running/queued/tok/s/kv/accept
    series: dict = field(default_factory=lambda: {k: deque(maxlen=600) for k in
                                                  ("gen_tok_s", "running_reqs", "queued_reqs", "kv_usage", "accept_len")})
    graph_steps: deque = field(default_factory=lambda: deque(maxlen=200))  # cuda_graph flag of recent busy decodes
    single_stream: deque = field(default_factory=lambda: deque(maxlen=2000))  # gen tok/s at one running request
    errors: list = field(default_factory=list)
    ended: str | None = None
    mem_usage_gb: list = field(default_factory=list)  # per-rank weight memory at weights_loaded
    status_mark: int = 0  # status notices given so far (one per status interval)


class SourceTracker:
    """Tracks the runs of one followed source (a file, its rotations, or a pipe)."""

    def __init__(self, source: str, engine_hint: str | None = None, history=None):
        self.source = source
        self.engine = engine_hint or "unknown"
        self.history = history  # watch.history.History or None
        self.runs: list[RunState] = []
        self.last_ts: dt.datetime | None = None  # newest stamped log time
        self.last_line_no = 0
        self.last_text = ""
        self.stalled: dict | None = None
        self.generation = 0

    # -- helpers --------------------------------------------------------------------
    @property
    def current(self) -> RunState | None:
        return self.runs[-1] if self.runs else None

    def _notice(self, event: str, run: RunState | None, **kw) -> dict:
        out = {"event": event, "source": self.source}
        if run is not None:
            out["run"] = run.run
            out["phase"] = run.phase
        out.update({k: v for k, v in kw.items() if v is not None})
        return out

    def _enter(self, run: RunState, phase: str, ts: dt.datetime | None, line_no: int, text: str) -> list[dict]:
        if phase == run.phase or run.ended:
            return []
        order = PHASES.index
        # a late line of an earlier phase (another rank finishing) does not move the run back
        if phase in PHASES and run.phase in PHASES and order(phase) < order(run.phase):
            return []
        prev, spent = run.phase, None
        if run.phase_since is not None and ts is not None:
            spent = max((ts - run.phase_since).total_seconds(), 0.0)
            run.phase_times[prev] = run.phase_times.get(prev, 0.0) + spent
        run.phase, run.phase_since = phase, ts or run.phase_since
        notice = self._notice("phase", run, title=TITLES[phase], previous=prev, previous_title=TITLES.get(prev, prev),
                              previous_s=round(spent, 1) if spent is not None else None,
                              line=line_no, text=text)
        cmp = self._compare_phase(run, prev, spent)
        if cmp:
            notice["compare"] = cmp
        if phase == "ready" and run.started is not None and ts is not None:
            notice["time_to_ready_s"] = round((ts - run.started).total_seconds(), 1)
        return [notice]

    def _compare_phase(self, run: RunState, phase: str, spent: float | None) -> str | None:
        if self.history is None or spent is None or run.model is None:
            return None
        ref = self.history.phase_seconds(run.model, run.tp_size, phase)
        if not ref or ref <= 0 or spent < 5:
            return None
        ratio = spent / ref
        if 0.8 <= ratio <= 1.25:
            return f"{TITLES[phase]} took {spent:.0f} s, as in the previous run of this model ({ref:.0f} s)"
        word = "slower" if ratio > 1 else "faster"
        factor = ratio if ratio > 1 else 1 / ratio
        return f"this start is {factor:.1f}x {word} than the previous run of this model at the {TITLES[phase]} phase ({spent:.0f} s vs {ref:.0f} s)"

    # -- feeding --------------------------------------------------------------------
    def new_generation(self, why: str) -> list[dict]:
        """The file was rotated or truncated: line numbers restart; an open run continues."""
        self.generation += 1
        self.last_line_no = 0
        return [self._notice(why, self.current)]

    def feed(self, obs) -> list[dict]:
        out: list[dict] = []
        if obs.engine and obs.engine not in ("none", "unknown"):
            self.engine = obs.engine
            if self.current is not None and self.current.engine in ("none", "unknown"):
                self.current.engine = obs.engine
        if obs.ts is not None and (self.last_ts is None or obs.ts >= self.last_ts):
            self.last_ts = obs.ts
        if obs.kind == "launch":
            return self._launch(obs)
        run = self.current
        if run is None:
            if obs.kind not in ("progress", "decode", "prefill", "error") and obs.kind not in KIND_PHASE:
                return out  # chatter before the launch marker (wrapper, warnings)
            # a log followed from the middle (or a format without a launch marker): track it anyway
            run = self._start_run(obs.line_no, obs.ts)
            out.append(self._notice("run", run, line=obs.line_no, text=obs.text))
        run.last_line_no, run.last_text = obs.line_no, obs.text
        if obs.ts is not None:
            run.last_ts = obs.ts
        if run.started is None and obs.ts is not None:
            run.started = obs.ts
        if run.phase_since is None and obs.ts is not None:
            run.phase_since = obs.ts
        handler = {"progress": self._progress, "decode": self._decode, "prefill": self._prefill,
                   "spec": self._spec, "error": self._error, "config": self._config}.get(obs.kind, self._event)
        out.extend(handler(run, obs))
        return out

    def _start_run(self, line_no: int, ts) -> RunState:
        run = RunState(run=len(self.runs) + 1, launch_line=line_no, started=ts, engine=self.engine,
                       phase_since=ts)
        self.runs.append(run)
        return run

    def _launch(self, obs) -> list[dict]:
        out: list[dict] = []
        run = self.current
        # vLLM prints three launch markers per launch (banner, args, engine config): one run
        if run is not None and run.phase == "launching" and not run.ended:
            self._config(run, obs)
            return out
        if run is not None and not run.ended:
            # killed without a word (bash's "Terminated", a container restart): the run ended
            # at its own last line, not at the next launch
            out.extend(self._end(run, "stopped", obs, state="superseded", at=run.last_ts,
                                 text="a new launch began before this run ended"))
        run = self._start_run(obs.line_no, obs.ts)
        self._config(run, obs)
        out.append(self._notice("run", run, line=obs.line_no, model=run.model, tp_size=run.tp_size,
                                text=obs.text[:200]))
        return out

    def _config(self, run: RunState, obs) -> list[dict]:
        cfg = obs.fields.get("config") or {}
        for key in MODEL_KEYS:
            if cfg.get(key) and not run.model:
                run.model = str(cfg[key]).strip("'\"")
        for key in TP_KEYS:
            if cfg.get(key) and not run.tp_size:
                try:
                    run.tp_size = int(float(cfg[key]))
                except (TypeError, ValueError):
                    pass
        if run.model and self.history is not None and run.weights_gb is None:
            gb = self.history.weights_gb(run.model, run.tp_size)
            if gb:
                run.weights_gb, run.weight_gb_source = gb, "previous run of this model"
        return []

    def _event(self, run: RunState, obs) -> list[dict]:
        kind = obs.kind
        out: list[dict] = []
        if kind == "weights_loaded" and obs.fields.get("value"):
            run.mem_usage_gb.append(float(obs.fields["value"]))
        if kind in STOP_KINDS:
            if not run.ended:
                out.extend(self._end(run, "stopped", obs))
            return out
        phase = KIND_PHASE.get(kind)
        if kind in READY_KINDS.get(run.engine, {"app_startup_complete", "server_ready"}):
            phase = "ready"
        if phase == "ready" and run.phase == "serving":
            return out
        ts = obs.ts or self.last_ts  # uvicorn lines carry no timestamp: the newest one seen
        if phase:
            out.extend(self._enter(run, phase, ts, obs.line_no, obs.text))
        done = KIND_DONE.get(kind)
        if done and run.phase == done:
            nxt = NEXT_PHASE.get((run.engine, done))
            if done == "loading_weights":
                bar = run.bars.get("loading_weights")
                if bar is not None:
                    bar.n = bar.total  # the bar's last update may not have been flushed
            if nxt and nxt != done:
                out.extend(self._enter(run, nxt, ts, obs.line_no, obs.text))
        return out

    def _progress(self, run: RunState, obs) -> list[dict]:
        f = obs.fields
        desc = f.get("desc", "")
        phase = next((p for rx, p in BAR_PHASE if rx.search(desc)), run.phase if run.phase in STARTUP else None)
        out: list[dict] = []
        if phase is None:
            return out
        out.extend(self._enter(run, phase, obs.ts or self.last_ts, obs.line_no, obs.text))
        elapsed = f.get("elapsed_s") or 0.0
        bar = run.bars.get(phase)
        if bar is None or f["total"] != bar.total or f["n"] < bar.n or elapsed < bar.elapsed_s:
            anchor = obs.ts or self.last_ts or run.last_ts
            if anchor is None:
                return out
            t0 = anchor - dt.timedelta(seconds=elapsed)
            if bar is not None and phase == bar.phase and f["total"] == bar.total and f["n"] == 0:
                t0 = anchor  # a bar restarting (next capture pass): anchor at its own start
            bar = Bar(phase, desc, f["n"], f["total"], t0, elapsed, f.get("remaining_s"))
            run.bars[phase] = bar
        bar.n, bar.elapsed_s, bar.remaining_s, bar.desc = f["n"], elapsed, f.get("remaining_s"), desc or bar.desc
        if not bar.updates or bar.updates[-1] != (elapsed, f["n"]):
            bar.updates.append((elapsed, f["n"]))
        now = bar.t0 + dt.timedelta(seconds=elapsed)
        if self.last_ts is None or now > self.last_ts:
            self.last_ts = now
        run.last_ts = max(run.last_ts or now, now)
        decile = int(10 * bar.n / bar.total) if bar.total else 0
        if decile > bar.last_decile:
            bar.last_decile = decile
            out.append(self._progress_notice(run, bar, obs.line_no))
        return out

    def progress_info(self, run: RunState, bar: Bar) -> dict:
        info = {"what": TITLES[bar.phase], "done": bar.n, "total": bar.total, "elapsed_s": round(bar.elapsed_s, 1)}
        eta = bar.eta_s
        if eta is not None:
            info["eta_s"] = round(eta, 1)
        rate = bar.rate_s_per_item
        if rate:
            info["s_per_item"] = round(rate, 2)
        if bar.phase == "loading_weights" and rate and run.weights_gb and bar.total:
            info["gb_per_s"] = round(run.weights_gb / bar.total / rate, 2)
            info["weights_gb"] = round(run.weights_gb, 1)
            info["weights_gb_from"] = run.weight_gb_source
        if self.history is not None and run.model and bar.phase == "loading_weights" and eta is not None:
            ref = self.history.phase_seconds(run.model, run.tp_size, "loading_weights")
            if ref:
                projected = bar.elapsed_s + eta
                info["previous_s"] = round(ref, 1)
                info["projected_s"] = round(projected, 1)
        # "moving": the bar advanced and the source is not silent beyond the bar's own pace
        moving = len(bar.updates) >= 2 and bar.n > bar.updates[0][1] and self.stalled is None
        info["moving"] = moving
        return info

    def _progress_notice(self, run: RunState, bar: Bar, line_no: int) -> dict:
        info = self.progress_info(run, bar)
        return self._notice("progress", run, line=line_no, text=progress_sentence(info), **info)

    def _decode(self, run: RunState, obs) -> list[dict]:
        f = obs.fields
        if f.get("tp_rank") not in (None, 0) or f.get("dp_rank") not in (None, 0):
            return []  # the primary rank speaks for the scheduler
        out: list[dict] = []
        if run.phase in STARTUP + ("ready",) and (f.get("running_reqs") or 0) > 0:
            out.extend(self._enter(run, "serving", obs.ts or self.last_ts, obs.line_no, obs.text))
        ts = obs.ts or self.last_ts
        for key in ("gen_tok_s", "running_reqs", "queued_reqs", "kv_usage", "accept_len"):
            if f.get(key) is not None:
                run.serving[key] = f[key]
                run.series[key].append((ts, float(f[key])))
        if f.get("cuda_graph") is not None and (f.get("running_reqs") or 0) > 0:
            run.graph_steps.append(bool(f["cuda_graph"]))
        if f.get("running_reqs") == 1 and f.get("gen_tok_s"):
            run.single_stream.append(float(f["gen_tok_s"]))
        return out

    def _prefill(self, run: RunState, obs) -> list[dict]:
        f = obs.fields
        for key in ("running_reqs", "queued_reqs", "kv_usage"):
            if f.get(key) is not None:
                run.serving[key] = f[key]
        return []

    def _spec(self, run: RunState, obs) -> list[dict]:
        if obs.fields.get("accept_len") is not None:
            run.serving["accept_len"] = obs.fields["accept_len"]
            run.series["accept_len"].append((obs.ts or self.last_ts, float(obs.fields["accept_len"])))
        return []

    def _error(self, run: RunState, obs) -> list[dict]:
        f = obs.fields
        run.errors.append({"line": obs.line_no, "text": obs.text, "fatal": bool(f.get("fatal"))})
        out = [self._notice("error", run, line=obs.line_no, fatal=bool(f.get("fatal")),
                            kind=f.get("error_kind"), text=obs.text[:300])]
        if f.get("fatal") and not run.ended:
            out.extend(self._end(run, "crashed", obs))
        return out

    def _end(self, run: RunState, phase: str, obs, state: str | None = None, at=None,
             text: str | None = None) -> list[dict]:
        ts = at or obs.ts or self.last_ts
        if run.phase_since is not None and ts is not None:
            run.phase_times[run.phase] = run.phase_times.get(run.phase, 0.0) + max((ts - run.phase_since).total_seconds(), 0)
        prev = run.phase
        run.ended = phase
        run.phase = phase
        return [self._notice("end", run, state=state or phase, during=TITLES.get(prev, prev), line=obs.line_no,
                             text=text if text is not None else obs.text[:300])]

    # -- time passing -----------------------------------------------------------------
    def note_line(self, line_no: int, text: str) -> None:
        """Any line arrived (claimed or not): the source is alive."""
        self.last_line_no, self.last_text = line_no, text

    def expected_gap(self, run: RunState) -> float | None:
        """Longest silence (log seconds) that is still normal in the run's current state."""
        if run.ended:
            return None
        if run.phase in ("ready", "serving"):
            busy = (run.serving.get("running_reqs") or 0) > 0 or (run.serving.get("queued_reqs") or 0) > 0
            return SERVING_GAP if busy and run.phase == "serving" else None  # an idle server prints nothing
        gap = MIN_GAP.get(run.phase, 180.0)
        bar = run.bars.get(run.phase)
        if bar is not None and bar.n < bar.total:
            typical = bar.typical_gap()
            if typical:
                gap = max(BAR_MIN_GAP, BAR_GAP_FACTOR * typical)
        elif self.history is not None and run.model:
            ref = self.history.phase_seconds(run.model, run.tp_size, run.phase)
            if ref:
                gap = max(gap, HISTORY_GAP_FACTOR * ref)
        return gap

    def check(self, log_now: dt.datetime | None, silent_s: float) -> list[dict]:
        """``silent_s``: log seconds since the last line of this source arrived."""
        run = self.current
        if run is None or log_now is None:
            return []
        gap = self.expected_gap(run)
        if gap is None or silent_s <= gap:
            return []
        if self.stalled is not None:
            return []
        self.stalled = {"phase": run.phase, "since_line": self.last_line_no}
        bar = run.bars.get(run.phase)
        where = f" at {bar.n}/{bar.total}" if bar is not None and bar.n < bar.total else ""
        return [self._notice("stalled", run, title=TITLES.get(run.phase, run.phase), silent_s=round(silent_s, 1),
                             expected_s=round(gap, 1), line=self.last_line_no, text=self.last_text[:300],
                             message=f"no new line for {silent_s:.0f} s during {TITLES.get(run.phase, run.phase)}{where}"
                                     f" (expected at most {gap:.0f} s); last line {self.last_line_no}: {self.last_text[:160]}")]

    def resumed(self) -> list[dict]:
        if self.stalled is None:
            return []
        self.stalled = None
        return [self._notice("resumed", self.current, line=self.last_line_no, text=self.last_text[:200])]

    def status(self, log_now: dt.datetime | None, every_s: float) -> list[dict]:
        """While a run starts: a ``status`` notice at each multiple of ``every_s`` log seconds
        since its launch (what a person checking in at minute 4 wants to read)."""
        run = self.current
        if run is None or run.ended or run.phase not in STARTUP or every_s <= 0 or log_now is None \
                or run.started is None or self.stalled is not None:
            return []
        since = (log_now - run.started).total_seconds()
        mark = int(since // every_s)
        if mark < 1 or mark <= run.status_mark:
            return []
        run.status_mark = mark
        notice = self._notice("status", run, title=TITLES[run.phase], since_launch_s=round(since, 1))
        if run.phase_since is not None:
            notice["in_phase_s"] = round(max((log_now - run.phase_since).total_seconds(), 0.0), 1)
        bar = run.bars.get(run.phase)
        if bar is not None and bar.n < bar.total:
            info = self.progress_info(run, bar)
            notice.update(info)
            notice["text"] = progress_sentence(info)
        else:
            notice["text"] = f"{TITLES[run.phase]} for {fmt_duration(notice.get('in_phase_s'))}"
        return [notice]

    # -- for views --------------------------------------------------------------------
    def snapshot(self, run: RunState, log_now: dt.datetime | None) -> dict:
        snap = {"source": self.source, "run": run.run, "phase": run.phase, "title": TITLES.get(run.phase, run.phase),
                "model": run.model, "tp_size": run.tp_size, "engine": run.engine,
                "phase_times": {TITLES[k]: round(v, 1) for k, v in run.phase_times.items() if k in TITLES},
                "last_line": run.last_line_no, "stalled": bool(self.stalled) and run is self.current}
        if run.phase_since is not None and log_now is not None and not run.ended:
            snap["in_phase_s"] = round(max((log_now - run.phase_since).total_seconds(), 0.0), 1)
        bar = run.bars.get(run.phase)
        if bar is not None and not run.ended:
            snap["progress"] = self.progress_info(run, bar)
            snap["progress_text"] = progress_sentence(snap["progress"])
        if run.serving:
            snap["serving"] = dict(run.serving)
        if run.graph_steps:
            snap["cuda_graph_share"] = round(sum(run.graph_steps) / len(run.graph_steps), 3)
        acc = run.serving.get("accept_len")
        if acc is not None:
            snap["accept_len_meaning"] = _meaning_of_accept_len(float(acc))
        if run.single_stream:
            snap["single_stream_tok_s"] = round(statistics.median(run.single_stream), 2)
        snap["compare"] = self.compare_lines(run)
        if log_now is not None:
            snap["series"] = {k: [v for t, v in s if t is not None and (log_now - t).total_seconds() <= SPARK_WINDOW_S]
                              for k, s in run.series.items() if s}
        return snap

    def compare_lines(self, run: RunState) -> list[str]:
        if self.history is None or run.model is None:
            return []
        out = []
        for phase in STARTUP:
            spent = run.phase_times.get(phase)
            text = self._compare_phase(run, phase, spent) if spent else None
            if text:
                out.append(text)
        if run.single_stream:
            best = self.history.best_single_stream(run.model, run.tp_size)
            mine = statistics.median(run.single_stream)
            if best:
                diff = (mine - best) / best
                if abs(diff) >= 0.05:
                    out.append(f"single-stream {abs(diff):.0%} {'below' if diff < 0 else 'above'} the best run "
                               f"({mine:.1f} vs {best:.1f} tok/s)")
                else:
                    out.append(f"single-stream on par with the best run ({mine:.1f} vs {best:.1f} tok/s)")
        return out


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def progress_sentence(info: dict) -> str:
    parts = [f"{info['what']} {info['done']}/{info['total']}"]
    if info.get("gb_per_s"):
        parts.append(f"{info['gb_per_s']:.1f} GB/s")
    elif info.get("s_per_item"):
        parts.append(f"{info['s_per_item']:.1f} s/item")
    if info.get("eta_s") is not None and info["done"] < info["total"]:
        parts.append(f"about {fmt_duration(info['eta_s'])} left")
    if info.get("moving") and info["done"] < info["total"]:
        parts.append("not a hang: the bar is moving")
    if info.get("previous_s"):
        parts.append(f"previous run of this model: {fmt_duration(info['previous_s'])} for this phase")
    return ", ".join(parts)
