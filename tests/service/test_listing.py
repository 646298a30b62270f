"""Listings that scale (issue 31, item 7): GET /expressions in pages with a cursor, an
expression fetched by id with one lookup, the log compacted at start to the live state, and
acknowledged notifications removed."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.service import Service, _replay, to_text
from xmlevents.service._db import Journal
from xmlevents.service._engine import Engine, Signal
from xmlevents.service._replay import Replayed, live_log, replay

from .http_server import TOKENS, A, B, thread_server
from .test_sharing import expressions, signals


def test_expressions_in_pages(tmp_path: Path) -> None:
    """Pages of 3 follow ``next`` to the end (null) with a Link header on each but the last;
    a deletion and a registration between two pages repeat and skip nothing that stays;
    another client's expressions are in none; a limit out of 1..1000 is a 400."""
    with thread_server(str(tmp_path / "s.db"), TOKENS) as base:
        client = httpx.Client(base_url=base, headers=A)
        ids = [client.post("/expressions", json={"expression": f"e{i}(x=X)"}).json()["id"]
               for i in range(7)]
        httpx.post(f"{base}/expressions", headers=B, json={"expression": "other(x=X)"})
        first = client.get("/expressions", params={"limit": 3})
        page = first.json()
        assert [e["id"] for e in page["expressions"]] == ids[:3]
        assert first.headers["link"] == f'<{page["next"]}>; rel="next"'
        client.delete(f"/expressions/{ids[4]}")  # between two pages
        late = client.post("/expressions", json={"expression": "late(x=X)"}).json()["id"]
        seen = [e["id"] for e in page["expressions"]]
        while page["next"] is not None:
            r = client.get(page["next"])
            page = r.json()
            seen += [e["id"] for e in page["expressions"]]
        assert "link" not in r.headers
        assert seen == ids[:4] + ids[5:] + [late]
        assert len(client.get("/expressions").json()["expressions"]) == 7  # default 100
        for bad in ("0", "1001", "-1", "x"):
            r = client.get("/expressions", params={"limit": bad})
            assert r.status_code == 400 and "limit" in r.json()["detail"], r.text
        one = client.get(f"/expressions/{ids[1]}").json()
        assert one["id"] == ids[1] and one["expression"] == "e1(x=X)"
        assert httpx.get(f"{base}/expressions/{ids[1]}", headers=B).status_code == 404
        assert client.get(f"/expressions/{ids[4]}").status_code == 404
        client.close()


def _row(kind: str, arg: Any, ident: str) -> tuple[str, str, Any]:
    if kind == "register":
        text = to_text(arg)
        return ("register", "alice", {"id": ident, "format": "text", "source": text,
                                      "variables": {}, "callback": None, "text": text})
    if kind == "unregister":
        return ("unregister", "alice", {"id": ident})
    etype, params = arg
    return ("signals", "alice", [{"type": etype, "params": params}])


def _log(program: list[tuple[str, Any]]) -> list[tuple[str, str, Any]]:
    """A program of registrations, unregistrations (by index among the live) and signals
    as log rows."""
    rows, live, n = [], [], 0
    for kind, arg in program:
        if kind == "register":
            n += 1
            live.append(f"x{n}")
            rows.append(_row(kind, arg, f"x{n}"))
        elif kind == "unregister":
            if live:
                rows.append(_row(kind, None, live.pop(arg % len(live))))
        else:
            rows.append(_row(kind, arg, ""))
    return rows


def _journal(rows: list[tuple[str, str, Any]]) -> Journal:
    journal = Journal(":memory:")
    journal.write(rows, [])
    return journal


def _go_on(state: Replayed, after: list[tuple[str, dict[str, Any]]]) -> list[object]:
    out: list[object] = []
    for etype, params in after:
        out.append([(d.expression, dict(d.bindings), [s.to_json() for s in d.events], d.next,
                     d.tick) for d in state.engine.signal(etype, params)])
    return out


steps = st.lists(st.one_of(st.tuples(st.just("register"), expressions()),
                           st.tuples(st.just("unregister"), st.integers(0, 7)),
                           st.tuples(st.just("signal"), signals)),
                 min_size=1, max_size=40)


@settings(max_examples=examples(150), deadline=None)
@given(steps, st.lists(signals, max_size=15), st.sampled_from(["correlate", "paper"]))
def test_the_compacted_log_gives_the_same_engine(
        program: list[tuple[str, Any]], after: list[tuple[str, dict[str, Any]]],
        join: str) -> None:
    """An engine replayed from the compacted log (the live registrations, the signals its
    stored instances hold, with their ticks, and the last tick) detects from then on exactly
    what the engine replayed from the whole history does: same expressions, bindings,
    events (ids, ticks), next and tick."""
    whole = replay(_journal(_log(program)), join=join)  # type: ignore[arg-type]
    compacted = _journal([])
    compacted.replace_log(live_log(whole)[0])
    again = replay(compacted, join=join)  # type: ignore[arg-type]
    assert again.owner == whole.owner and again.engine.tick == whole.engine.tick
    assert _go_on(again, after) == _go_on(whole, after)


@pytest.mark.parametrize("compaction", ["thread", "process"])
def test_the_log_is_compacted_as_it_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          compaction: str) -> None:
    """With compactions past 100 entries (10,000 in service), a service that sees 20
    registrations deleted again and 300 signals keeps a log in proportion to its live state
    while it runs (the two live expressions, the signal one of them holds, the clock, and
    what came since the last compaction; a child's look is waited for after each request,
    ``test_compaction.py`` lets them overlap); restarted, it goes on detecting as before
    (ids, ticks) and has removed the acknowledged notifications but the newest (cursors are
    never given twice): here all of them, the newest not acknowledged."""
    monkeypatch.setattr(_replay, "COMPACT_MIN", 100)
    db = str(tmp_path / "s.db")

    def rows() -> int:
        con = sqlite3.connect(db)
        (count,) = con.execute("SELECT COUNT(*) FROM log").fetchone()
        con.close()
        return int(count)

    async def first() -> int:
        service = Service(db, compaction=compaction)  # type: ignore[arg-type]
        service.start()
        try:
            for i in range(20):
                ident = await service.register("anonymous", "text", f"gone{i}(x=X)", {}, None)
                await service.unregister("anonymous", ident)
            await service.register("anonymous", "text", "SEQ(a(x=X), b(x=X))", {}, None)
            await service.register("anonymous", "text", "c(x=X)", {}, None)
            await service.signal("anonymous", [("a", {"x": 1}, None)])
            background = service._compactions

            def settle() -> None:  # a child's look taken before the next request
                if background is not None:
                    background.poll(service.writes, service._state, wait=True)

            for i in range(300):
                await service.signal("anonymous", [("c", {"x": i}, None)])
                await service.write(settle)
            await service.delete_notifications("anonymous", 299)
            assert background is None or background.compacted >= 2
            return rows()
        finally:
            await service.stop()

    async def second() -> list[Any]:
        service = Service(db)
        service.start()
        try:
            await service.signal("anonymous", [("b", {"x": 1}, None)])
            notes = await service.read(lambda j: j.notifications("anonymous", None, 10))
            return [(n.cursor, n.body["bindings"], [e["tick"] for e in n.body["events"]])
                    for n in notes]
        finally:
            await service.stop()

    running = asyncio.run(first())
    assert running <= 4 + 100 + 1, running  # of 342 entries
    got = asyncio.run(second())
    con = sqlite3.connect(db)
    left = con.execute("SELECT MIN(cursor), COUNT(*) FROM notifications").fetchone()
    kinds = [k for (k,) in con.execute("SELECT kind FROM log ORDER BY seq")]
    con.close()
    assert kinds[:4] == ["register", "register", "kept", "clock"]
    assert got == [(300, {"X": 299}, [301]), (301, {"X": 1}, [1, 302])]
    assert left == (300, 2)  # 1-299 acknowledged and removed; 300, 301 not acknowledged


def test_looks_at_the_log_are_amortized(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A log of which half stays live (each ``a`` an initiator kept, each ``b`` completing
    it) is never compactable; the writer looks at it (walking the stored instances) only
    once it has grown by the live state since its last look, not after every change once it
    passed the threshold (issue 31, item 10: 500 looks here before, a quadratic cost)."""
    monkeypatch.setattr(_replay, "COMPACT_MIN", 20)
    looks: list[int] = []
    real = _replay._kept

    def counted(engine: Engine) -> dict[int, Signal]:
        out = real(engine)
        looks.append(len(out))
        return out

    monkeypatch.setattr(_replay, "_kept", counted)

    async def run(compaction: str) -> tuple[int, int]:
        service = Service(str(tmp_path / f"{compaction}.db"),
                          compaction=compaction)  # type: ignore[arg-type]
        service.start()
        try:
            await service.register("anonymous", "text", "SEQ(a(x=X), b(x=X))", {}, None)
            for i in range(500):
                await service.signal("anonymous", [("a", {"x": i}, None),
                                                   ("b", {"x": i}, None)])
        finally:
            await service.stop()
        background = service._compactions
        return (0, 0) if background is None else (background.compacted, background.looked)

    asyncio.run(run("thread"))
    assert looks[-1] > 400, looks  # the live state: the a's kept
    assert len(looks) <= 12, looks  # start, then each time the log grew by the live state
    # in a child process (whose walks this process does not see): as few looks, none of
    # which compacted
    looks.clear()
    compacted, looked = asyncio.run(run("process"))
    assert len(looks) == 1 and compacted == 0 and 1 <= looked <= 11, (looks, looked)
