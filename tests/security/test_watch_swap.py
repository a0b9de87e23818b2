"""`watch` reads only what it was given: a watched path replaced by a link elsewhere, by a
file of another owner or by one the user may not read is not followed and nothing of it is
stored; the database it creates is readable by its owner only."""
from __future__ import annotations

import os
import stat

import duckdb
import pytest

from logsleuth.watch.session import Watch, WatchOptions

SECRET = "TOP-SECRET-CONTENT root-only line"
LOG = ["[2026-02-03 10:00:00] INFO server starting", "[2026-02-03 10:00:01] INFO loading weights"]


def _watch(tmp_path, swap) -> tuple[list[dict], str]:
    live = tmp_path / "live.log"
    live.write_text("\n".join(LOG) + "\n")
    db = str(tmp_path / "w.duckdb")
    notices: list[dict] = []
    w = Watch(WatchOptions(paths=[str(live)], db_path=db, poll_s=0.01, store_every_s=0.05, findings=False),
              notices.append)
    polls = []

    def on_poll(watch):
        polls.append(1)
        if len(polls) == 3:
            os.rename(live, tmp_path / "old.log")
            swap(live)
        if len(polls) == 3 + 40:
            watch.stop()
    w.run(on_poll)
    return notices, db


def _stored(db: str) -> list[str]:
    con = duckdb.connect(db, read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT raw FROM lines").fetchall()]
    finally:
        con.close()


def _secret(tmp_path, mode=0o600, owner=None):
    secret = tmp_path / "elsewhere" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    if owner is not None:
        os.chown(secret, owner, owner)
    secret.chmod(mode)
    return secret


def _assert_refused(notices, db, says: str):
    texts = [n.get("text", "") for n in notices if n.get("event") == "note"]
    assert any(says in t and "not followed" in t for t in texts), notices
    stored = _stored(db)
    assert not any(SECRET in s for s in stored), stored
    assert all(line in stored for line in LOG)  # what was there before the swap is kept


def test_a_path_replaced_by_a_link_is_not_followed(tmp_path):
    secret = _secret(tmp_path)
    notices, db = _watch(tmp_path, lambda live: live.symlink_to(secret))
    _assert_refused(notices, db, "replaced by a link")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another owner needs root")
def test_a_path_replaced_by_a_file_of_another_owner_is_not_followed(tmp_path):
    def swap(live):
        live.write_text(SECRET + "\n")
        os.chown(live, 54321, 54321)
    notices, db = _watch(tmp_path, swap)
    _assert_refused(notices, db, "another user")


def test_a_path_replaced_by_an_unreadable_file_is_not_followed(tmp_path):
    def swap(live):
        live.write_text(SECRET + "\n")
        live.chmod(0)  # root could read it anyway: the permission is what counts
    notices, db = _watch(tmp_path, swap)
    _assert_refused(notices, db, "not readable")


def test_an_ordinary_rotation_is_still_followed(tmp_path):
    notices, db = _watch(tmp_path, lambda live: live.write_text("[2026-02-03 10:00:02] INFO after rotation\n"))
    assert "[2026-02-03 10:00:02] INFO after rotation" in _stored(db)
    assert not any("not followed" in n.get("text", "") for n in notices)


def test_the_database_and_its_wal_are_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        _, db = _watch(tmp_path, lambda live: live.write_text("x\n"))
    finally:
        os.umask(old)
    for p in (db, db + ".wal"):
        if os.path.exists(p):
            assert stat.S_IMODE(os.stat(p).st_mode) & 0o077 == 0, (p, oct(os.stat(p).st_mode))
