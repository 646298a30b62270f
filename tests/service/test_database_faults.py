"""The database off the event loop (issue 31, item 3, first half): a database another program
holds, or one that cannot grow, fails the change it was asked for and nothing else.

Before, SQLite's calls ran in the event loop with its 5 s busy wait, and a failed write was
followed by a rebuild of the engine from the whole log in the request: GET /health waited
with every other request. Now a writer thread and a reader thread hold the two connections,
the busy wait is 1 s, a busy database fails before the engine is touched (503 with
``Retry-After``), and a change that fails after it reached the engine (a full disk: 507) has
the engine rebuilt by the writer thread after the failed request is answered."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from xmlevents.service import Service
from xmlevents.service._app import _database_problem
from xmlevents.service._db import BUSY_TIMEOUT, Journal

from .http_server import free_port, served_by

TOKEN = "s3cret-a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SEQ = "SEQ(a(x=X), b(x=X))"


def _event(kind: str, x: int) -> dict[str, Any]:
    return {"type": kind, "params": {"x": x}}


@pytest.mark.slow  # a real server started; the database held for 3 s
def test_a_database_held_by_another_program(tmp_path: Path) -> None:
    """While another connection holds the database's write lock for 3 s: POST /events
    answers 503 with Retry-After after about BUSY_TIMEOUT and applies nothing; GET /health
    and GET /notifications answer at once all along (the event loop and the reader never
    wait for SQLite's lock). Released, the service goes on as if the refused event had never
    been sent."""
    db = str(tmp_path / "s.db")
    with served_by(db, [f"alice={TOKEN}"], free_port(), tmp_path / "server.log") as (base, _):
        client = httpx.Client(base_url=base, headers=AUTH, timeout=30.0)
        ident = client.post("/expressions", json={"expression": SEQ}).json()["id"]
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # as a backup or the sqlite3 shell may
        answers: list[tuple[httpx.Response, float]] = []

        def post() -> None:
            started = time.monotonic()
            with httpx.Client(base_url=base, headers=AUTH, timeout=30.0) as poster:
                r = poster.post("/events", json=_event("a", 1))
            answers.append((r, time.monotonic() - started))

        try:
            posting = threading.Thread(target=post)
            posting.start()
            waits = []
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                started = time.monotonic()
                assert client.get("/health").status_code == 200
                assert client.get("/notifications").status_code == 200
                waits.append(time.monotonic() - started)
                time.sleep(0.1)
            posting.join(30)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        [(refused, took)] = answers
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["content-type"] == "application/problem+json"
        assert "busy" in refused.json()["detail"]
        assert BUSY_TIMEOUT * 0.9 <= took < BUSY_TIMEOUT + 2.5, took
        assert max(waits) < 0.8, f"/health and /notifications waited up to {max(waits):.2f} s"
        # the refused a(x=1) is nowhere: b(x=1) completes nothing; a(x=2), b(x=2) does
        assert client.post("/events", json=_event("b", 1)).status_code == 202
        assert client.post("/events", json=[_event("a", 2), _event("b", 2)]).status_code == 202
        notes = client.get("/notifications").json()["notifications"]
        assert [(n["expression"], n["bindings"]) for n in notes] == [(ident, {"X": 2})]
        client.close()
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log
    assert "POST /events: Service Unavailable (database is locked)" in log, log


def test_a_write_that_fails_after_the_engine_saw_it(tmp_path: Path) -> None:
    """The database cannot grow (SQLite's page limit, as a full disk): a batch of signals
    fails with SQLite's "database or disk is full", which the service answers 507; the
    engine had seen the batch and is rebuilt from the log by the writer thread, so the
    signals are gone from it too (a later b(x=0) completes nothing)."""
    db = str(tmp_path / "s.db")

    async def run() -> tuple[list[Any], sqlite3.Error]:
        service = Service(db)
        service.start()
        try:
            await service.register("anonymous", "text", SEQ, {}, None)

            def cap() -> None:  # the next page the database needs is refused
                pages = service.journal._db.execute("PRAGMA page_count").fetchone()[0]
                service.journal._db.execute(f"PRAGMA max_page_count={pages}")

            await service.write(cap)
            batch = [("a", {"x": i, "pad": "p" * 2000}, None) for i in range(50)]
            with pytest.raises(sqlite3.OperationalError) as full:
                await service.signal("anonymous", batch)
            await service.write(lambda: service.journal._db.execute(
                "PRAGMA max_page_count=1073741823"))
            await service.signal("anonymous", [("b", {"x": 0, "pad": "p" * 2000}, None)])
            await service.signal("anonymous", [("a", {"x": 7}, None), ("b", {"x": 7}, None)])
            notes = await service.read(lambda j: j.notifications("anonymous", None, 100))
            return [n.body["bindings"] for n in notes], full.value
        finally:
            await service.stop()

    bindings, error = asyncio.run(run())
    assert "database or disk is full" in str(error)
    assert bindings == [{"X": 7}]
    problem = _database_problem(error)
    assert problem is not None and problem.status == 507
    # the log holds the registration and the two requests that were accepted, not the batch
    journal = Journal(db)
    try:
        assert [e.kind for e in journal.log()] == ["register", "signal", "signal", "signal"]
    finally:
        journal.close()


def test_only_busy_and_full_are_the_databases_problems() -> None:
    """Other SQLite errors are not worded as a busy or full database (they stay 500s)."""
    assert _database_problem(sqlite3.OperationalError("database is locked")) is not None
    assert _database_problem(sqlite3.OperationalError("no such table: log")) is None
    assert _database_problem(sqlite3.DatabaseError("file is not a database")) is None
