"""FileFollower / PipeFollower: growing files, partial lines, \\r bars, rotation, truncation,
late appearance, pipes. No timing: each step writes, then polls once."""
from __future__ import annotations

import io
import os
import time

from logsleuth.watch.follow import FileFollower, PipeFollower, latest_update


def _write(path, data: bytes, mode: str = "ab") -> None:
    with open(path, mode) as fh:
        fh.write(data)


def test_complete_lines_and_partial_tail(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"one\ntwo\nthr")
    f = FileFollower(str(p))
    t = f.poll()
    assert t.lines == ["one", "two"] and t.first_line_no == 1
    assert t.partial == "thr" and "appeared" in t.notes
    _write(p, b"ee\nfour\n")
    t = f.poll()
    assert t.lines == ["three", "four"] and t.first_line_no == 3 and t.partial == ""
    assert f.poll().lines == [] and not f.poll().grew


def test_tqdm_line_grown_with_carriage_returns(tmp_path):
    p = tmp_path / "s.log"
    f = FileFollower(str(p))
    _write(p, b"\rCapturing batches (bs=8):   0%|          | 0/4 [00:00<?, ?it/s]")
    t = f.poll()
    assert t.lines == [] and latest_update(t.partial).endswith("0/4 [00:00<?, ?it/s]")
    _write(p, b"\rCapturing batches (bs=4):  50%|#####     | 2/4 [00:01<00:01,  1.9it/s]\r")
    t = f.poll()
    # a trailing bare \r (tqdm's next redraw not yet written) keeps the newest real update
    assert "2/4" in latest_update(t.partial)
    _write(p, b"Capturing batches (bs=1): 100%|##########| 4/4 [00:02<00:00,  1.9it/s]\nnext\n")
    t = f.poll()
    # the stored line is the whole physical line, every update in it
    assert len(t.lines) == 2 and t.lines[0].count("\r") == 3 and t.lines[1] == "next"
    assert latest_update(t.lines[0]).endswith("4/4 [00:02<00:00,  1.9it/s]")


def test_file_appearing_late(tmp_path):
    p = tmp_path / "late.log"
    f = FileFollower(str(p))
    t = f.poll()
    assert t.lines == [] and t.notes == []
    _write(p, b"hello\n")
    t = f.poll()
    assert t.lines == ["hello"] and "appeared" in t.notes


def test_rotation_reads_the_old_file_to_its_end_then_the_new_one(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"a1\na2\n")
    f = FileFollower(str(p))
    assert f.poll().lines == ["a1", "a2"]
    _write(p, b"a3\na4-partial")  # written just before the rotation
    os.rename(p, tmp_path / "s.log.1")
    _write(p, b"b1\n")
    t = f.poll()
    # nothing is lost: the rest of the old file, its unterminated last line included
    assert t.lines == ["a3", "a4-partial"] and "rotated" in t.notes and t.generation == 0
    t = f.poll()
    assert t.lines == ["b1"] and t.first_line_no == 1 and t.generation == 1


def test_truncation_starts_a_new_generation(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"x" * 50 + b"\n" + b"y" * 50 + b"\n")
    f = FileFollower(str(p))
    assert len(f.poll().lines) == 2
    _write(p, b"fresh\n", mode="wb")  # copytruncate / `>` redirect: same inode, shorter
    t = f.poll()
    assert "truncated" in t.notes
    t = f.poll()
    assert t.lines == ["fresh"] and t.first_line_no == 1 and t.generation == 1


def test_vanished_path_keeps_reading_the_open_file(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"a\n")
    f = FileFollower(str(p))
    f.poll()
    fh = open(p, "ab")
    os.unlink(p)
    fh.write(b"b\n")
    fh.flush()
    t = f.poll()
    assert t.lines == ["b"] and "vanished" in t.notes
    fh.close()


def test_crlf_lines_lose_their_cr(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"one\r\ntwo\r\n")
    assert FileFollower(str(p)).poll().lines == ["one", "two"]


def test_pipe_is_spooled_and_followed(tmp_path):
    r, w = os.pipe()
    spool = tmp_path / "stdin.log"
    f = PipeFollower(os.fdopen(r, "rb"), str(spool))
    os.write(w, b"first\nsecond\n")
    os.close(w)
    deadline = time.monotonic() + 10
    lines, notes = [], []
    while time.monotonic() < deadline and "closed" not in notes:
        t = f.poll()
        lines += t.lines
        notes += t.notes
        time.sleep(0.01)
    f.close()
    assert lines == ["first", "second"] and "closed" in notes
    assert spool.read_bytes() == b"first\nsecond\n"


def test_pipe_from_a_closed_stream_ends(tmp_path):
    f = PipeFollower(io.BytesIO(b""), str(tmp_path / "empty.log"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not f.ended:
        time.sleep(0.01)
    assert "closed" in f.poll().notes
    f.close()


def test_truncated_and_rewritten_past_the_old_size_between_polls(tmp_path):
    p = tmp_path / "s.log"
    _write(p, b"old line one\nold line two\n")
    f = FileFollower(str(p))
    assert len(f.poll().lines) == 2
    _write(p, b"a new server started here and wrote more than before\n", mode="wb")
    t = f.poll()
    assert "truncated" in t.notes
    assert f.poll().lines == ["a new server started here and wrote more than before"]
