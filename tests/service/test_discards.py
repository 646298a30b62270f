"""The retention quota's discards folded into ranges by the log's compactions (issue 31,
item 7): the database follows what clients keep, and ``GET /notifications``'s
``"discarded"`` still counts what was discarded after any cursor, checked against a model
that remembers every discarded cursor."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xmlevents.service import _db
from xmlevents.service._db import Journal

CLIENTS = ("alice", "bob", "carol")

# One step on the database: notifications stored for clients, a quota's discard (or one as
# the service made them before the ranges: rows marked, folded by the next purge), a client's
# acknowledgement, or a purge (a compaction's).
steps = st.lists(st.one_of(
    st.tuples(st.just("store"), st.lists(st.sampled_from(CLIENTS), min_size=1, max_size=6)),
    st.tuples(st.sampled_from(["discard", "marked"]), st.sampled_from(CLIENTS),
              st.integers(1, 4)),
    st.tuples(st.just("delete"), st.sampled_from(CLIENTS), st.integers(0, 3)),
    st.tuples(st.just("purge"))), min_size=1, max_size=40)


class Model:
    """Every notification's owner and state, kept for ever: the count of the paper-free
    definition ("how many of the client's notifications after ``after`` were discarded")."""

    def __init__(self) -> None:
        self.owner: dict[int, str] = {}
        self.state: dict[int, int] = {}  # 0 kept, 1 acknowledged, 2 discarded

    def discarded(self, client: str, after: int) -> int:
        return sum(1 for c, who in self.owner.items()
                   if who == client and c > after and self.state[c] == 2)


def mark(journal: Journal, client: str, count: int) -> None:
    """A discard as the service made it before the ranges: the rows marked only."""
    journal._db.execute(
        "UPDATE notifications SET deleted = 2 WHERE cursor IN (SELECT cursor FROM "
        "notifications WHERE client = ? AND deleted = 0 ORDER BY cursor LIMIT ?)",
        (client, count))


def run(journal: Journal, model: Model, plan: list[tuple[object, ...]]) -> None:
    for step in plan:
        if step[0] == "store":
            owners = step[1]
            assert isinstance(owners, list)
            cursors = journal.write([("signals", "x", "[]")],
                                    [(who, "e", "{}", None) for who in owners])
            model.owner.update(zip(cursors, owners, strict=True))
            model.state.update(dict.fromkeys(cursors, 0))
        elif step[0] in ("discard", "marked"):
            client, count = step[1], step[2]
            assert isinstance(client, str) and isinstance(count, int)
            if step[0] == "discard":
                journal.begin()
                journal.discard_oldest(client, count)
                journal._db.execute("COMMIT")
            else:
                mark(journal, client, count)
            oldest = sorted(c for c, who in model.owner.items()
                            if who == client and model.state[c] == 0)[:count]
            model.state.update(dict.fromkeys(oldest, 2))
        elif step[0] == "delete":
            client, back = step[1], step[2]
            assert isinstance(client, str) and isinstance(back, int)
            mine = sorted(c for c, who in model.owner.items() if who == client)
            if mine:
                through = mine[max(0, len(mine) - 1 - back)]
                journal.delete_notifications(client, through)
                model.state.update({c: 1 for c in mine
                                    if c <= through and model.state[c] == 0})
        else:
            journal.purge()


def check(journal: Journal, model: Model, *, exact: bool) -> None:
    for client in CLIENTS:
        for after in [None, *range(0, max(model.owner, default=0) + 2)]:
            got = journal.discarded(client, after)
            want = model.discarded(client, -1 if after is None else after)
            if exact:
                assert got == want, (client, after)
            else:  # merged ranges count whole: never less, never more than all of them
                assert want <= got <= model.discarded(client, -1), (client, after)


@settings(max_examples=60, deadline=None)
@given(plan=steps)
def test_the_count_of_discards_survives_their_purge(tmp_path_factory: pytest.TempPathFactory,
                                                    plan: list[tuple[object, ...]]) -> None:
    """However stores, discards, acknowledgements and purges interleave, ``discarded`` after
    every cursor is the model's, before and after a last purge; a discard leaves no row but
    the newest notification, nor does a purge of the rows an older version marked, and a
    purge leaves no acknowledged one (no delivery waits here)."""
    journal = Journal(str(tmp_path_factory.mktemp("d") / "s.db"))
    model = Model()
    run(journal, model, plan)
    check(journal, model, exact=True)
    journal.purge()
    check(journal, model, exact=True)
    newest = max(model.owner, default=0)
    left = journal._db.execute("SELECT cursor FROM notifications WHERE deleted != 0 "
                               "AND cursor != ?", (newest,)).fetchall()
    assert left == []
    journal.close()


# the monkeypatch sets the same value for every example
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=steps)
def test_a_client_keeps_a_bounded_number_of_ranges(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        plan: list[tuple[object, ...]]) -> None:
    """With at most 2 ranges a client, the oldest merged: never more, and the count never
    below the model's (a merged range counts whole where ``after`` falls inside it)."""
    monkeypatch.setattr(_db, "DISCARD_RANGES", 2)
    journal = Journal(str(tmp_path_factory.mktemp("d") / "s.db"))
    model = Model()
    run(journal, model, [*plan, ("purge",)])
    check(journal, model, exact=False)
    most = journal._db.execute(
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM discards GROUP BY client)").fetchone()
    assert (most[0] or 0) <= 2
    journal.close()


def test_a_client_that_never_reads_does_not_grow_the_database(tmp_path: Path) -> None:
    """A client at its quota that never acknowledges: 200 requests of 50 notifications
    interleaved with another client's, each over the quota of 100, purged every 10 requests.
    The notifications' table holds the kept ones (and the few since the last purge), the
    ranges stay few, and every count is exact."""
    journal = Journal(str(tmp_path / "s.db"))
    model = Model()
    plan: list[tuple[object, ...]] = []
    for request in range(200):
        plan += [("store", ["alice"] * 50), ("store", ["bob"])]
        plan += [("discard", "alice", 50)] if request >= 2 else []
        plan += [("purge",)] if request % 10 == 9 else []
    run(journal, model, plan)
    rows = journal._db.execute("SELECT COUNT(*) FROM notifications").fetchone()[0]
    ranges = journal._db.execute("SELECT COUNT(*) FROM discards").fetchone()[0]
    assert rows <= 100 + 200 + 10 * 51  # alice's kept, bob's, the requests since a purge
    assert ranges <= _db.DISCARD_RANGES
    assert journal.discarded("alice", None) == 198 * 50
    assert journal.discarded("alice", 5000) == model.discarded("alice", 5000)
    journal.close()


def test_an_older_database_gets_the_ranges_table(tmp_path: Path) -> None:
    """A database made before the ranges (no table ``discards``, discards marked) opens, its
    marked discards counted, then folded."""
    path = str(tmp_path / "s.db")
    journal = Journal(path)
    cursors = journal.write([], [("alice", "e", "{}", None)] * 3)
    mark(journal, "alice", 2)
    journal._db.execute("DROP TABLE discards")
    journal.close()
    journal = Journal(path)
    assert journal.discarded("alice", None) == 2
    journal.purge()
    assert journal.discarded("alice", None) == 2
    assert journal.discarded("alice", cursors[0]) == 1
    with pytest.raises(sqlite3.OperationalError):  # the reader cannot purge
        Journal.reader(path).purge()
    journal.close()
