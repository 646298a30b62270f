"""SQLite in a committer process (issue 31, item 10): the writer hands each change to it and
goes on; a request is still answered only once its change is committed, a failed change
refuses the changes sent after it until the engine is rebuilt from the log, a killed
committer is replaced, and the database ends as the writer thread alone would leave it."""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xmlevents.service import CommitterGone, Limits, Service
from xmlevents.service import _replay as replay_module
from xmlevents.service._app import _database_problem

from .http_server import free_port, served_by

SEQ = "SEQ(a(x=X), b(x=X))"
ANY = "anonymous"
RETAINED = 5  # the retention quota of the workloads below: reached, so that it discards

# --- the same database either way ---------------------------------------------------------

_op = st.one_of(
    st.tuples(st.just("register"), st.sampled_from([SEQ, "SEQ(b(x=X), a(x=X))", "ANY(a, c)"]),
              st.booleans()),
    st.tuples(st.just("unregister"), st.integers(0, 5)),
    st.tuples(st.just("signal"), st.lists(st.tuples(st.sampled_from("abc"),
                                                    st.integers(0, 3)), min_size=1,
                                          max_size=12)),
    st.tuples(st.just("ack"), st.integers(0, 40)),
)


def _run(db: str, committer: str, ops: list[tuple[Any, ...]],
         compaction: str = "thread") -> list[object]:
    """The workload ``ops`` on a service over ``db``: what each request answered. With
    ``compaction="process"``, a compaction's child is waited for after each request, so
    that its log is replaced where the writer thread's own compaction would replace it."""
    async def go() -> list[object]:
        service = Service(db, limits=Limits(max_retained=RETAINED),
                          committer=committer,  # type: ignore[arg-type]
                          compaction=compaction)  # type: ignore[arg-type]
        answers: list[object] = []
        idents: list[str] = []

        def settle() -> None:
            if service._compactions is not None:
                service._compactions.poll(service.writes, service._state, wait=True)

        try:
            for op in ops:
                await service.write(settle)
                try:
                    if op[0] == "register":
                        callback = "http://example.org/hook" if op[2] else None
                        idents.append(await service.register(ANY, "text", op[1], {}, callback))
                        answers.append("registered")
                    elif op[0] == "unregister" and op[1] < len(idents):
                        await service.unregister(ANY, idents.pop(op[1]))
                        answers.append("unregistered")
                    elif op[0] == "signal":
                        answers.append(await service.signal(
                            ANY, [(t, {"x": x}, None) for t, x in op[1]]))
                    elif op[0] == "ack":
                        answers.append(await service.delete_notifications(ANY, op[1]))
                except Exception as exc:  # compared between the two runs
                    answers.append(type(exc).__name__)
            answers.append(sorted(service.retained.items()))
        finally:
            await service.stop()
        return answers

    return asyncio.run(go())


def _tables(db: str) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as c:
        return {
            "log": c.execute("SELECT kind, client, body FROM log ORDER BY seq").fetchall(),
            "notifications": c.execute("SELECT cursor, client, expression, body, deleted FROM "
                                       "notifications ORDER BY cursor").fetchall(),
            "deliveries": c.execute("SELECT cursor, url, attempts, client FROM deliveries "
                                    "ORDER BY cursor").fetchall(),
            "expressions": c.execute("SELECT id, client, body FROM expressions ORDER BY id"
                                     ).fetchall(),
            "discards": c.execute("SELECT client, low, high, count FROM discards "
                                  "ORDER BY client, low").fetchall()}


@pytest.mark.slow  # two services and a committer process an example
@settings(max_examples=6, deadline=None)
@given(st.lists(_op, min_size=1, max_size=25))
@example([("register", SEQ, True), ("register", "ANY(a, c)", False),
          ("signal", [("a", 1), ("b", 1), ("c", 0), ("a", 2), ("b", 2)]),
          ("signal", [("c", 1), ("c", 2), ("c", 3), ("a", 3), ("b", 3)]), ("ack", 4),
          ("register", "SEQ(b(x=X), a(x=X))", True), ("signal", [("b", 0), ("a", 0)] * 3),
          ("unregister", 1), ("signal", [("c", 0), ("a", 5), ("b", 5)] * 2), ("ack", 40),
          ("signal", [("a", 0), ("b", 0)] * 4)])
def test_the_committer_process_leaves_what_the_writer_thread_leaves(
        tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[Any, ...]]) -> None:
    """One workload (registrations with and without webhooks, unregistrations, signals,
    acknowledgements, the retention quota's discards, compactions) through each committer,
    and with the compactions in the writer thread or in a child process (waited for): the
    same answers, and the same log, notifications, deliveries and expressions."""
    results = []
    for committer, compaction in (("thread", "thread"), ("process", "thread"),
                                  ("process", "process"), ("thread", "process")):
        db = str(tmp_path_factory.mktemp(committer + compaction) / "s.db")
        with pytest.MonkeyPatch.context() as m:
            m.setattr(replay_module, "COMPACT_MIN", 4)  # compactions while it runs
            # expression ids numbered (random otherwise), to compare the runs row for row
            m.setattr(secrets, "token_hex", _counter())
            answers = _run(db, committer, ops, compaction)
        results.append((answers, _tables(db)))
    for other in results[1:]:
        assert other[0] == results[0][0]
        for table in results[0][1]:
            assert other[1][table] == results[0][1][table], table


def _counter() -> Any:
    counter = itertools.count()
    return lambda n: f"{next(counter):016x}"


# --- answered after the commit; a failure; a killed committer -------------------------------

def test_a_change_is_answered_only_once_committed(tmp_path: Path) -> None:
    """While the committer process is stopped (SIGSTOP) a signal is not answered and its log
    row is not in the database; once it runs again, both."""
    db = str(tmp_path / "s.db")

    async def go() -> None:
        service = Service(db, committer="process")
        try:
            await service.register(ANY, "text", SEQ, {}, None)
            assert service._pipe is not None
            os.kill(service._pipe.pid, signal.SIGSTOP)
            try:
                task = asyncio.ensure_future(service.signal(ANY, [("a", {"x": 1}, None)]))
                await asyncio.sleep(0.5)
                assert not task.done()
                assert _kinds(db) == ["register"]
            finally:
                os.kill(service._pipe.pid, signal.SIGCONT)
            assert await asyncio.wait_for(task, 10) == 1
            assert _kinds(db) == ["register", "signals"]
        finally:
            await service.stop()

    asyncio.run(go())


def _kinds(db: str) -> list[str]:
    with sqlite3.connect(db) as c:
        return [k for (k,) in c.execute("SELECT kind FROM log ORDER BY seq")]


@pytest.mark.slow  # the database held for BUSY_TIMEOUT
def test_a_failed_change_refuses_those_sent_after_it_until_the_engine_is_rebuilt(
        tmp_path: Path) -> None:
    """Another program holds the database: the change the committer was given fails busy,
    and the change sent after it (computed by an engine that had applied the first) is
    refused with the same error; released, the engine is rebuilt from the log, so that
    neither refused event counts: b(x=1) after a refused a(x=1) detects nothing."""
    db = str(tmp_path / "s.db")

    async def go() -> None:
        service = Service(db, committer="process")
        try:
            await service.register(ANY, "text", SEQ, {}, None)
            holder = sqlite3.connect(db, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            try:
                first = asyncio.ensure_future(service.signal(ANY, [("a", {"x": 1}, None)]))
                second = asyncio.ensure_future(service.signal(ANY, [("a", {"x": 2}, None)]))
                outcomes = await asyncio.gather(first, second, return_exceptions=True)
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            for outcome in outcomes:
                assert isinstance(outcome, sqlite3.OperationalError), outcome
                problem = _database_problem(outcome)
                assert problem is not None and problem.status == 503
            assert await service.signal(ANY, [("b", {"x": 1}, None), ("b", {"x": 2}, None)]) == 2
            assert service.retained.get(ANY, 0) == 0
            assert await service.signal(ANY, [("a", {"x": 3}, None), ("b", {"x": 3}, None)]) == 2
            assert service.retained == {ANY: 1}
            assert _kinds(db) == ["register", "signals", "signals"]
        finally:
            await service.stop()

    asyncio.run(go())


def test_a_killed_committer_is_replaced_and_nothing_answered_is_lost(tmp_path: Path) -> None:
    """The committer process killed: the change in flight is refused with a 503 (nothing
    applied), a new committer takes over, and every change answered is in the log."""
    db = str(tmp_path / "s.db")

    async def go() -> None:
        service = Service(db, committer="process")
        try:
            await service.register(ANY, "text", SEQ, {}, None)
            assert await service.signal(ANY, [("a", {"x": 1}, None)]) == 1
            assert service._pipe is not None
            first = service._pipe.pid
            os.kill(first, signal.SIGKILL)
            deadline = time.monotonic() + 10
            answered = refused = 0
            while time.monotonic() < deadline:
                try:
                    await service.signal(ANY, [("c", {"x": 0}, None)])
                    answered += 1
                    if refused:
                        break
                except CommitterGone as exc:
                    problem = _database_problem(exc)
                    assert problem is not None and problem.status == 503
                    refused += 1
            assert refused >= 1 and answered >= 1
            assert service._pipe.pid != first
            assert await service.signal(ANY, [("b", {"x": 1}, None)]) == 1
            assert service.retained == {ANY: 1}  # a(x=1), answered before the kill, counts
            assert _kinds(db) == ["register", "signals"] + ["signals"] * answered + ["signals"]
        finally:
            await service.stop()

    asyncio.run(go())


@pytest.mark.slow  # a real server
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG: Linux")
def test_the_committer_dies_with_a_killed_server(tmp_path: Path) -> None:
    """``kill -9`` of ``xmlevents serve``: its committer process ends with it (no
    transaction of a dead service commits after another has opened the database), and a
    new server starts on the database at once (``--committer thread``: without one)."""
    db = str(tmp_path / "s.db")
    with served_by(db, [], free_port(), tmp_path / "a.log") as (base, proc):
        assert httpx.post(f"{base}/expressions", json={"expression": SEQ}).status_code == 201
        children = _children(proc.pid)
        assert len(children) == 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{children[0]}") and time.monotonic() < deadline:
            with open(f"/proc/{children[0]}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break  # ended; its parent's parent reaps it
            time.sleep(0.05)
        else:
            assert not os.path.exists(f"/proc/{children[0]}"), "the committer outlived it"
    with served_by(db, [], free_port(), tmp_path / "b.log",
                   extra=["--committer", "thread"]) as (base, proc):
        assert _children(proc.pid) == []
        assert len(httpx.get(f"{base}/expressions").json()["expressions"]) == 1


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            found += map(int, f.read().split())
    return found
