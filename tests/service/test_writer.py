"""The writer thread's jobs handed over in groups (issue 31, item 10): under load, one wake-up
of the writer for every job queued meanwhile and one callback into the event loop for every
job it ran, instead of a thread hand-over each way per request. Each job is still run once,
alone, in the order submitted, with its own result or exception; a request cancelled before
its job started does not have it run."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.service import Service, _json
from xmlevents.service._app import _notification, _notification_text
from xmlevents.service._db import Journal
from xmlevents.service._engine import Detection, Signal, _detected, _signal
from xmlevents.service._json import dumps, signal_json


@settings(max_examples=15, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_jobs_run_in_order_with_their_own_outcome(tmp_path_factory: pytest.TempPathFactory,
                                                  fails: list[bool]) -> None:
    """Jobs submitted at once (a group for the writer) run in the order submitted, in the
    writer thread, and each request gets its own job's result or exception."""
    db = str(tmp_path_factory.mktemp("w") / "w.db")
    ran: list[int] = []
    threads: set[str] = set()

    def job(i: int) -> int:
        ran.append(i)
        threads.add(threading.current_thread().name)
        if fails[i]:
            raise ValueError(i)
        return i * 10

    async def run() -> list[int | BaseException]:
        service = Service(db)
        try:
            return await asyncio.gather(*(service.write(lambda i=i: job(i))  # type: ignore[misc]
                                          for i in range(len(fails))), return_exceptions=True)
        finally:
            await service.stop()

    outcomes = asyncio.run(run())
    assert ran == list(range(len(fails)))
    assert len(threads) == 1 and next(iter(threads)).startswith("xmlevents-writer")
    for i, (fail, out) in enumerate(zip(fails, outcomes, strict=True)):
        if fail:
            assert isinstance(out, ValueError) and out.args == (i,)
        else:
            assert out == i * 10


def test_a_cancelled_request_does_not_have_its_job_run(tmp_path: Path) -> None:
    """While the writer is busy, a request that gives up (its client went away) before its
    job started: the job is not run, and the jobs after it are."""
    ran: list[str] = []
    busy, release = threading.Event(), threading.Event()

    def block() -> None:
        busy.set()
        release.wait(10)

    async def run() -> str:
        service = Service(str(tmp_path / "c.db"))
        try:
            first = asyncio.ensure_future(service.write(block))
            await asyncio.get_running_loop().run_in_executor(None, busy.wait, 10)
            gone = asyncio.ensure_future(service.write(lambda: ran.append("gone")))
            kept = asyncio.ensure_future(service.write(lambda: ran.append("kept") or "ok"))
            await asyncio.sleep(0)
            gone.cancel()
            release.set()
            await first
            return await kept
        finally:
            await service.stop()

    assert asyncio.run(run()) == "ok"
    assert ran == ["kept"]


_values = st.one_of(st.text(), st.integers(), st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False))
_signals = st.builds(
    Signal, st.integers(1, 10**6).map(lambda t: f"s{t}"), st.text(min_size=1),
    st.dictionaries(st.text(), _values, max_size=4), st.integers(1, 10**6),
    st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers()))


@settings(max_examples=examples(200), deadline=None)
@given(st.text(min_size=1), st.dictionaries(st.text(), _values, max_size=4),
       st.lists(_signals, max_size=3, unique_by=lambda s: s.id),
       st.one_of(st.none(), st.text(min_size=1)), st.booleans())
def test_a_notification_is_stored_as_its_json(expression: str, bindings: dict[str, Any],
                                              events: list[Signal], nxt: str | None,
                                              fallback: bool) -> None:
    """The writer's hand-made text of a notification (issue 31, item 10) is
    :func:`dumps` of it, character for character (non-ASCII, floats, booleans, times), with
    the C encoder built once or, where Python has none, without it. (A signal's id names one
    signal: the text of each is kept by id.)"""
    detection = Detection(expression, bindings, tuple(events), nxt, 1)
    with pytest.MonkeyPatch.context() as patch:
        if fallback:
            patch.setattr(_json, "_encode", None)
        assert _notification_text(detection, {}) == dumps(_notification(detection))


@settings(max_examples=examples(200), deadline=None)
@given(_signals, st.booleans())
def test_a_kept_signal_is_stored_as_its_json(signal: Signal, fallback: bool) -> None:
    """A compacted log's kept signal, written by hand (issue 31, item 10), is :func:`dumps`
    of the signal's JSON without its id, character for character; with the id, of
    :meth:`Signal.to_json`."""
    body = signal.to_json()
    with pytest.MonkeyPatch.context() as patch:
        if fallback:
            patch.setattr(_json, "_encode", None)
        assert signal_json(signal) == dumps(body)
        del body["id"]
        assert signal_json(signal, ident=False) == dumps(body)


@settings(max_examples=examples(100), deadline=None)
@given(_signals, st.dictionaries(st.text(), _values, max_size=3),
       st.one_of(st.none(), st.text(min_size=1)))
def test_the_engines_fast_constructors_make_the_same_values(signal: Signal,
                                                            bindings: dict[str, Any],
                                                            nxt: str | None) -> None:
    """The engine's own constructors of a signal and a detection (issue 31, item 10) make
    what the dataclasses' make: equal, shown alike, frozen."""
    made = _signal(signal.id, signal.type, signal.params, signal.ts, signal.time)
    assert made == signal and repr(made) == repr(signal)
    detection = Detection("x1", bindings, (signal,), nxt, signal.ts)
    again = _detected("x1", bindings, (signal,), nxt, signal.ts)
    assert again == detection and repr(again) == repr(detection)
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.tick = 0  # type: ignore[misc]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["alice", "bob"]), st.text(max_size=3),
                          st.sampled_from([None, "http://example.com/hook"])),
                max_size=700),
       st.sampled_from([None, 9, 999]))
def test_notifications_are_stored_many_rows_a_statement(
        tmp_path_factory: pytest.TempPathFactory, notes: list[tuple[str, str, str | None]],
        values: int | None) -> None:
    """A request's notifications and deliveries inserted many rows a statement (issue 31,
    item 10) are every row, in order, with their cursors — whatever the connection's limit
    of values a statement (``values``: lowered to 9, two rows of four, and SQLite's old
    999)."""
    journal = Journal(str(tmp_path_factory.mktemp("n") / "n.db"))
    try:
        if values is not None:
            journal._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, values)
        journal.write([("signals", "alice", "[]")], [])
        rows = [(c, e, {"n": i}, url) for i, (c, e, url) in enumerate(notes)]
        for _ in range(2):  # the second request's cursors follow the first's
            cursors = journal.write([("signals", "alice", "[]")], rows)
            assert cursors == (list(range(cursors[0], cursors[0] + len(rows))) if rows else [])
        stored = journal._db.execute("SELECT cursor, client, expression, body "
                                     "FROM notifications ORDER BY cursor").fetchall()
        assert stored == [(k + 1, c, e, dumps(b)) for k, (c, e, b, _)
                          in enumerate(rows + rows)]
        due = journal._db.execute("SELECT cursor, url, client FROM deliveries "
                                  "ORDER BY cursor").fetchall()
        assert due == [(k + 1, url, c) for k, (c, _, _, url) in enumerate(rows + rows)
                       if url is not None]
    finally:
        journal.close()
