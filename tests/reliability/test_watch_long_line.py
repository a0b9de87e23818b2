"""`watch` on a line that grows without a newline: memory stays bounded (the line is cut at
the line cap, 64 KiB) and --timeout is honoured within a second."""
from __future__ import annotations

import threading
import time

from logsleuth.watch.follow import FileFollower

LINE_CAP = 64 * 1024
from logsleuth.watch.session import Watch, WatchOptions


def _rss_mib() -> float:
    with open("/proc/self/status") as fh:
        return next(int(ln.split()[1]) / 1024 for ln in fh if ln.startswith("VmRSS:"))


def test_the_follower_keeps_at_most_the_line_cap_of_a_growing_line(tmp_path):
    p = tmp_path / "s.log"
    p.write_bytes(b"first\n")
    f = FileFollower(str(p))
    assert f.poll().lines == ["first"]
    block = b"x" * (1 << 20)
    with open(p, "ab") as fh:
        for _ in range(20):
            fh.write(block)
            fh.flush()
            t = f.poll()
            assert len(t.partial.encode()) <= LINE_CAP
        fh.write(b"tail\nnext\n")
    lines = []
    while t := f.poll():
        if not t.lines and not t.grew:
            break
        lines += t.lines
    assert lines[-1] == "next" and len(lines) == 2
    assert lines[0] == "x" * LINE_CAP  # cut at the cap, like ingest cuts a stored line


def test_watch_on_an_endless_line_is_bounded_and_times_out_on_time(tmp_path):
    p = tmp_path / "s.log"
    p.write_bytes(b"[2026-02-03 10:00:00] INFO start\n")
    stop = threading.Event()

    def writer():  # ~40 MB/s of one line, never a newline
        block = b"y" * (4 << 20)
        with open(p, "ab") as fh:
            while not stop.is_set():
                fh.write(block)
                fh.flush()
                time.sleep(0.1)
    base = _rss_mib()
    peak = [base]

    def sampler():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.02)
    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=sampler, daemon=True)]
    for t in threads:
        t.start()
    timed_out = []
    t0 = time.monotonic()

    def emit(n):
        if n.get("event") == "timeout":
            timed_out.append(time.monotonic() - t0)
    w = Watch(WatchOptions(paths=[str(p)], db_path=str(tmp_path / "w.duckdb"), poll_s=0.1, store_every_s=1,
                           timeout_s=4, findings=False), emit)
    try:
        rc = w.run()
    finally:
        elapsed = time.monotonic() - t0
        stop.set()
        for t in threads:
            t.join(5)
    assert timed_out and timed_out[0] < 4 + 1, timed_out  # the loop sees its deadline within a second
    assert elapsed < 4 + 4, elapsed  # then one last store of what was read (never of the endless line)
    assert rc != 0  # the timeout's code
    assert peak[0] - base < 300, (base, peak[0])
