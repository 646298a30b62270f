"""The log's compactions in a forked child (``service/_compaction.py``; issue 31, item 10):
the rows it writes replace the log's up to the mark made at the fork; a change that fails
while it runs cancels it; a child that fails leaves the log as it was; a killed service's
files are removed at the next start."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from xmlevents.service import Service, _compaction, _replay
from xmlevents.service._db import read_rows, write_rows

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")

ANY = "anonymous"


async def _signalled(db: str, count: int) -> Service:
    """A started service over ``db`` (compaction in a child) with ``c(x=X)`` registered and
    ``count`` c's signalled, one a request; the caller stops it."""
    service = Service(db, compaction="process")
    service.start()
    await service.register(ANY, "text", "c(x=X)", {}, None)
    for i in range(count):
        await service.signal(ANY, [("c", {"x": i}, None)])
    return service


def _slow_looks(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Looks past 20 entries (10,000 in service), each sleeping ``seconds`` in its child
    first, while the writer goes on."""
    monkeypatch.setattr(_replay, "COMPACT_MIN", 20)

    def slow(state: _replay.Replayed) -> Any:
        time.sleep(seconds)
        return _replay.look(state)

    monkeypatch.setattr(_compaction, "look", slow)


def _log(db: str) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT kind, body FROM log ORDER BY seq").fetchall()
    con.close()
    return [(k, b) for k, b in rows]


async def _detected(service: Service) -> list[Any]:
    notes = await service.read(lambda j: j.notifications(ANY, None, 1000))
    return [(n.body["bindings"], [e["tick"] for e in n.body["events"]]) for n in notes]


def test_rows_logged_while_the_child_looks_replay_after_its_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child slowed down (its look sleeps) while the writer logs more signals: the log
    ends as the child's rows, then the rows logged meanwhile, and a restart detects with
    them what the service would have (the b's complete the a's the child kept, and the a's
    logged after the fork)."""
    _slow_looks(monkeypatch, 0.3)  # in the child: the writer goes on meanwhile
    db = str(tmp_path / "s.db")

    async def first() -> int:
        service = Service(db, compaction="process")
        service.start()
        try:
            await service.register(ANY, "text", "SEQ(a(x=X), b(x=X))", {}, None)
            await service.register(ANY, "text", "c(x=X)", {}, None)
            for i in range(5):
                await service.signal(ANY, [("a", {"x": i}, None)])
            background = service._compactions
            assert background is not None
            # c's until a look that will compact runs: the first (at 21 entries) finds the
            # log under 20 entries more than the live state (7), the second compacts
            for i in range(500):
                await service.signal(ANY, [("c", {"x": i}, None)])
                if background.running and background.looked:
                    break
                if background.running:  # let the child's look end
                    await asyncio.sleep(0.02)
            assert background.running and background.looked == 1
            for i in range(5, 8):  # logged while the child looks
                await service.signal(ANY, [("a", {"x": i}, None)])
            return service._compactions.compacted
        finally:
            await service.stop()  # waits for the child and takes its rows

    assert asyncio.run(first()) == 0  # not taken yet when the last change was answered
    kinds = [k for k, _ in _log(db)]
    assert kinds[:3] == ["register", "register", "kept"], kinds
    assert "clock" in kinds and kinds.count("signals") == 3, kinds  # the a's 5-7 after it
    assert not [f for f in os.listdir(tmp_path) if ".compact-" in f]

    async def second() -> list[Any]:
        service = Service(db, compaction="process")
        service.start()
        try:
            await service.signal(ANY, [("b", {"x": x}, None) for x in (0, 4, 6)])
            return [d for d in await _detected(service) if "X" in d[0]]
        finally:
            await service.stop()

    got = asyncio.run(second())
    assert [b for b, _ in got][-3:] == [{"X": 0}, {"X": 4}, {"X": 6}], got


def test_a_ctrl_c_to_the_process_group_does_not_end_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT and SIGTERM sent to a running child (a terminal's Ctrl-C reaches the whole
    group) leave it to finish: the stop that follows takes its outcome."""
    _slow_looks(monkeypatch, 1.5)  # past the 60 requests below, under any load
    db = str(tmp_path / "s.db")

    async def go() -> int:
        service = await _signalled(db, 60)
        try:
            background = service._compactions
            assert background is not None and background._running is not None
            os.kill(background._running.pid, signal.SIGINT)
            os.kill(background._running.pid, signal.SIGTERM)
        finally:
            await service.stop()
        return background.looked + background.compacted  # its outcome taken

    assert asyncio.run(go()) == 1


def test_a_change_that_fails_while_the_child_looks_cancels_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine rebuilt after a failed change (the writer's next job) kills the child and
    removes its file: the log is not replaced, and the service goes on."""
    _slow_looks(monkeypatch, 5)
    db = str(tmp_path / "s.db")

    async def go() -> tuple[int, int]:
        service = await _signalled(db, 30)
        try:
            background = service._compactions
            assert background is not None and background.running
            pid = background._running.pid  # type: ignore[union-attr]
            monkeypatch.setattr(_compaction, "look", _replay.look)  # the next child's at once
            service._failed()  # as a change failed after it reached the engine
            await service.signal(ANY, [("c", {"x": 99}, None)])
            assert background._running is None or background._running.pid != pid
            with pytest.raises(ChildProcessError):  # killed, and reaped
                os.waitpid(pid, os.WNOHANG)
            return len(_log(db)), background.compacted
        finally:
            await service.stop()

    rows, compacted = asyncio.run(go())
    assert compacted == 0 and rows == 32  # nothing replaced: 1 registration, 31 signals
    assert not [f for f in os.listdir(tmp_path) if ".compact-" in f]


def test_a_child_that_fails_leaves_the_log(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """A look that raises in the child: a warning, the log as it was, and the next look
    only once the log has grown again."""
    monkeypatch.setattr(_replay, "COMPACT_MIN", 20)

    def broken(state: _replay.Replayed) -> Any:
        raise MemoryError

    monkeypatch.setattr(_compaction, "look", broken)
    db = str(tmp_path / "s.db")

    async def go() -> None:
        await (await _signalled(db, 40)).stop()

    with caplog.at_level("WARNING", logger="xmlevents.service"):
        asyncio.run(go())
    assert len(_log(db)) == 41
    assert any("its child process ended with status" in r.message for r in caplog.records)


def test_a_killed_services_files_are_removed_at_start(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    Service(db).close()
    for name in ("s.db.compact-1-1", "s.db.compact-1-2.part"):
        (tmp_path / name).write_bytes(b"left")
    (tmp_path / "other.db.compact-1-1").write_bytes(b"not ours")
    Service(db).close()
    assert sorted(os.listdir(tmp_path)) == sorted(
        f for f in os.listdir(tmp_path) if ".compact-" not in f or f.startswith("other"))
    assert (tmp_path / "other.db.compact-1-1").exists()


def test_rows_round_trip_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    rows: list[tuple[str, str, Any]] = [("register", "c", {"id": "x1"}), ("kept", "", "[]"),
                                        ("clock", "", {"tick": 3})]
    write_rows(str(tmp_path / "r"), rows)
    assert read_rows(str(tmp_path / "r")) == [("register", "c", '{"id":"x1"}'),
                                              ("kept", "", "[]"), ("clock", "", '{"tick":3}')]
    with pytest.raises(FileExistsError):  # a new file, never one that is there
        write_rows(str(tmp_path / "r"), rows)
    import marshal
    (tmp_path / "f").write_bytes(marshal.dumps([("a", "b")]))
    with pytest.raises(sqlite3.DatabaseError, match="not a compacted log"):
        read_rows(str(tmp_path / "f"))
