"""The service's memory: an SQLite database in WAL mode that survives a restart and a kill.

Every change the service accepts is one transaction: the operation appended to the **log**
(a registration with its source, an unregistration, a signal) together with the
**notifications** its processing produced and their pending webhook **deliveries**. A kill
between two transactions loses nothing accepted; a kill inside one loses the whole of it (the
client got no answer). On start the engine is rebuilt by replaying the log in order, which
gives back every stored instance (the engine is deterministic: ids are stored, ticks are the
order of the log); the notifications are not produced again, they are already stored.

``synchronous=NORMAL`` in WAL mode: a commit survives a process kill (the WAL is in the OS's
hands); only a power loss may lose the last commits.

The service writes through one connection and reads through another (:meth:`Journal.reader`;
in WAL mode a reader never waits for the writer), each used by one thread of its own, never
by the event loop (issue 31, item 3); the writing one by the writer thread, or by the
committer process the writer hands its changes to (:mod:`._commit`, ``serve``'s default).
Both wait at most :data:`BUSY_TIMEOUT` seconds for a lock another program holds (a backup,
the ``sqlite3`` shell): SQLite's 5 s default kept the service's one writer waiting, and every
change queued behind it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import marshal
import os
import sqlite3
import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from ._json import dumps

__all__ = ["Journal", "Stored", "LogEntry", "BUSY_TIMEOUT", "write_rows", "read_rows"]

#: Seconds a statement waits for a lock held by another connection before it fails with
#: "database is locked".
BUSY_TIMEOUT = 1.0

#: The most ranges of discarded cursors kept a client (:meth:`Journal.discard_oldest`).
DISCARD_RANGES = 256

#: The most rows one INSERT statement of :meth:`Journal._insert` holds.
INSERT_ROWS = 256


@functools.lru_cache(maxsize=64)
def _values(head: str, width: int, rows: int) -> str:
    """The statement ``head`` with ``rows`` rows of ``width`` parameters."""
    row = "(" + ",".join("?" * width) + ")"
    return head + ",".join([row] * rows)


def _runs(cursors: Sequence[int]) -> Iterator[tuple[int, int, int]]:
    """(first, last, count) of each run of consecutive numbers in ascending ``cursors``."""
    start = 0
    for i in range(1, len(cursors) + 1):
        if i == len(cursors) or cursors[i] != cursors[i - 1] + 1:
            yield cursors[start], cursors[i - 1], i - start
            start = i


_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,          -- register, unregister, signals (signal: one, older)
    client TEXT NOT NULL,
    body TEXT NOT NULL           -- JSON; signals: the request's body as accepted
);
CREATE TABLE IF NOT EXISTS expressions (
    id TEXT PRIMARY KEY,
    client TEXT NOT NULL,
    body TEXT NOT NULL           -- JSON: format, source, text, variables, callback
);
-- a client's expressions in registration order (rowid): its pages and its quota's count
CREATE INDEX IF NOT EXISTS expressions_client ON expressions (client);
CREATE TABLE IF NOT EXISTS notifications (
    cursor INTEGER PRIMARY KEY,
    client TEXT NOT NULL,
    expression TEXT NOT NULL,
    body TEXT NOT NULL,          -- JSON of the detection
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_client ON notifications (client, cursor);
-- the notifications a client keeps, oldest first (the retention quota discards from here)
CREATE INDEX IF NOT EXISTS notifications_live ON notifications (client, cursor)
    WHERE deleted = 0;
-- the quota's discards still marked (a newest notification, or an older version's rows:
-- Journal.purge folds them into the ranges below)
CREATE INDEX IF NOT EXISTS notifications_discarded ON notifications (client, cursor)
    WHERE deleted = 2;
-- the quota's discards as ranges: a client's discarded notifications between two cursors,
-- how many (all of the cursors from low to high when count = high - low + 1)
CREATE TABLE IF NOT EXISTS discards (
    client TEXT NOT NULL,
    low INTEGER NOT NULL,
    high INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (client, low)
);
CREATE TABLE IF NOT EXISTS deliveries (
    cursor INTEGER PRIMARY KEY,  -- the notification
    url TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due REAL NOT NULL,
    client TEXT                  -- the notification's (a queue per client: issue 31, item 4)
);
CREATE TABLE IF NOT EXISTS skipped (
    seq INTEGER PRIMARY KEY,     -- the log row left out by serve --skip-bad-rows, as it was
    kind TEXT,
    client TEXT,
    body TEXT,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""

# The columns the service reads from each table of _SCHEMA.
_COLUMNS = {"log": {"seq", "kind", "client", "body"},
            "expressions": {"id", "client", "body"},
            "notifications": {"cursor", "client", "expression", "body", "deleted"},
            "deliveries": {"cursor", "url", "attempts", "due"},
            "discards": {"client", "low", "high", "count"}}


@dataclass(frozen=True, slots=True)
class LogEntry:
    seq: int
    kind: str
    client: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Stored:
    """A notification as stored: its cursor, owner and JSON."""

    cursor: int
    client: str
    expression: str
    body: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"cursor": self.cursor, **self.body}


class Journal:
    """The database of one service (see the module)."""

    def __init__(self, path: str, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        #: :meth:`mark_log`'s marks: token -> the log's last seq then.
        self._marks: dict[int, int] = {}
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   timeout=busy_timeout)
        try:
            # Another program's SQLite file is left as it is, not given our tables (issue
            # 31, item 8); a file that is no database fails here ("file is not a database").
            tables = sorted(row[0] for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"))
            if tables and "log" not in tables:
                raise sqlite3.DatabaseError(
                    f"not the service's database: it has no table log, and other tables "
                    f"({', '.join(tables[:5])}{', ...' if len(tables) > 5 else ''})")
        except BaseException:
            self._db.close()
            raise
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        # A database of another program may hold a table of one of these names: refused
        # here, not at the first request that reads it (issue 28).
        for table, columns in _COLUMNS.items():
            found = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if not columns <= found:
                self._db.close()
                raise sqlite3.DatabaseError(
                    f"not the service's database: its table {table!r} lacks the columns "
                    f"{', '.join(sorted(columns - found))}")
        self._migrate()

    def _migrate(self) -> None:
        """Bring a database of an older version up to this one: deliveries name their
        client (filled in from their notifications), indexed by client and due time."""
        found = {row[1] for row in self._db.execute("PRAGMA table_info(deliveries)")}
        if "client" not in found:
            self._db.execute("ALTER TABLE deliveries ADD COLUMN client TEXT")
        self._db.execute(
            "UPDATE deliveries SET client = (SELECT n.client FROM notifications n "
            "WHERE n.cursor = deliveries.cursor) WHERE client IS NULL")
        self._db.execute("CREATE INDEX IF NOT EXISTS deliveries_client "
                         "ON deliveries (client, due)")

    @classmethod
    def reader(cls, path: str, *, busy_timeout: float = BUSY_TIMEOUT) -> Journal:
        """A second connection to the database a :class:`Journal` has opened (checked, in
        WAL mode), for reading only (``query_only``: a write through it fails)."""
        journal = cls.__new__(cls)
        journal.path = path
        journal._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                      timeout=busy_timeout)
        journal._db.execute("PRAGMA query_only=1")
        return journal

    def close(self) -> None:
        self._db.close()

    # --- reading back -------------------------------------------------------------------

    def log(self) -> Iterator[LogEntry]:
        """The log in the order accepted, a request's signals one entry each (kind
        ``signal``; the row holds the request's body, one event or a list)."""
        for seq, kind, client, body in self._db.execute(
                "SELECT seq, kind, client, body FROM log ORDER BY seq"):
            data = json.loads(body)
            if kind == "signals":
                for event in data if isinstance(data, list) else [data]:
                    yield LogEntry(seq, "signal", client, event)
            else:
                yield LogEntry(seq, kind, client, data)

    def expression(self, client: str, ident: str) -> dict[str, Any] | None:
        """The body of ``client``'s expression ``ident`` (None if it has none of that id):
        one lookup by primary key (issue 31, item 7: the listing was parsed whole)."""
        row = self._db.execute("SELECT body FROM expressions WHERE id = ? AND client = ?",
                               (ident, client)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def expression_count(self, client: str) -> int:
        """How many expressions ``client`` has registered (the quota of :mod:`._limits`)."""
        return int(self._db.execute("SELECT COUNT(*) FROM expressions WHERE client = ?",
                                    (client,)).fetchone()[0])

    def expressions_page(self, client: str, after: int, limit: int
                         ) -> list[tuple[int, str, dict[str, Any]]]:
        """(position, id, body) of at most ``limit`` of ``client``'s expressions registered
        after the one at ``after`` (0: from the first), oldest first. The position is the
        row's rowid: it only grows while the service runs, so a page's last one is the cursor
        of the next page, stable under registrations and deletions."""
        rows = self._db.execute(
            "SELECT rowid, id, body FROM expressions WHERE client = ? AND rowid > ? "
            "ORDER BY rowid LIMIT ?", (client, after, limit))
        return [(r, i, json.loads(b)) for r, i, b in rows]

    def rows(self) -> Generator[tuple[int, str, str, str], None, None]:
        """The log's rows as stored, (seq, kind, client, body text), in order: what a replay
        that reports bad rows reads (:mod:`._replay`)."""
        yield from self._db.execute("SELECT seq, kind, client, body FROM log ORDER BY seq")

    def notifications(self, client: str, after: int | None, limit: int) -> list[Stored]:
        """The client's notifications after ``after`` (all not deleted without it)."""
        rows = self._db.execute(
            "SELECT cursor, client, expression, body FROM notifications "
            "WHERE client = ? AND deleted = 0 AND cursor > ? ORDER BY cursor LIMIT ?",
            (client, -1 if after is None else after, limit))
        return [Stored(c, cl, e, json.loads(b)) for c, cl, e, b in rows]

    def retained(self) -> dict[str, int]:
        """How many notifications each client keeps (not deleted or discarded)."""
        return {client: int(n) for client, n in self._db.execute(
            "SELECT client, COUNT(*) FROM notifications WHERE deleted = 0 GROUP BY client")}

    def discarded(self, client: str, after: int | None) -> int:
        """How many of the client's notifications after ``after`` the retention quota
        discarded (see :mod:`._limits`): those still marked (``deleted = 2``) and those kept
        as ranges (:meth:`discard_oldest`, :meth:`purge`). Exact, but where ``after`` falls
        inside one of the oldest ranges a client with more than :data:`DISCARD_RANGES` had
        merged into one: that range counts whole."""
        after = -1 if after is None else after
        db = self._db
        count = int(db.execute(
            "SELECT COUNT(*) FROM notifications WHERE client = ? AND cursor > ? "
            "AND deleted = 2", (client, after)).fetchone()[0])
        for low, high, n in db.execute(
                "SELECT low, high, count FROM discards WHERE client = ? AND high > ?",
                (client, after)):
            # A range of consecutive cursors is all the client's: those after ``after``
            # are known without their rows.
            count += high - after if low <= after and n == high - low + 1 else n
        return count

    def last_cursor(self) -> int:
        row = self._db.execute("SELECT MAX(cursor) FROM notifications").fetchone()
        return int(row[0] or 0)

    def due_deliveries(self, now: float, limit: int = 100, *, client: str | None = None
                       ) -> list[tuple[int, str, int, str]]:
        """(cursor, url, attempts, notification JSON) of the webhook deliveries due (of one
        client's queue with ``client``), oldest notification first."""
        rows = self._db.execute(
            "SELECT d.cursor, d.url, d.attempts, n.body FROM deliveries d "
            "JOIN notifications n ON n.cursor = d.cursor WHERE d.due <= ? "
            + ("" if client is None else "AND d.client = ? ")
            + "ORDER BY d.cursor LIMIT ?",
            (now, limit) if client is None else (now, client, limit))
        return [(c, u, a, b) for c, u, a, b in rows]

    def delivery_queues(self) -> list[tuple[str, float]]:
        """(client, when its next delivery is due) of every client with deliveries
        pending: the per-client queues of :mod:`._webhooks`."""
        rows = self._db.execute(
            "SELECT client, MIN(due) FROM deliveries GROUP BY client")
        return [(c or "", float(d)) for c, d in rows]

    def next_due(self) -> float | None:
        row = self._db.execute("SELECT MIN(due) FROM deliveries").fetchone()
        return None if row[0] is None else float(row[0])

    # --- writing: one transaction per accepted change -------------------------------------

    def begin(self) -> None:
        """Start the write transaction of a change now (``BEGIN IMMEDIATE``: the write lock
        is taken here), so that a database another program holds fails here, before the
        engine is touched; :meth:`write` then commits it.

        Raises:
            sqlite3.OperationalError: "database is locked" after :data:`BUSY_TIMEOUT`.
        """
        self._db.execute("BEGIN IMMEDIATE")

    def abort(self) -> None:
        """Roll back the transaction in progress, if any. A rollback that fails itself (the
        disk full, the file gone) is left unsaid: SQLite has rolled back already or will at
        the next start, and the error worth reporting is the one that made us abort."""
        if self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    @contextlib.contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``) around the block: committed at its
        end, rolled back (:meth:`abort`) if it raises."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            self.abort()
            raise

    def write(self, entries: Sequence[tuple[str, str, dict[str, Any] | str]],
              notifications: Sequence[tuple[str, str, dict[str, Any] | str, str | None]],
              *, add: tuple[str, str, dict[str, Any]] | None = None,
              remove: str | None = None) -> list[int]:
        """Append log ``entries`` (kind, client, body), store ``notifications`` (client,
        expression, body, webhook URL or None) and add or remove an expression, in one
        transaction (the one :meth:`begin` started, or a new one). Bodies are JSON, or objects
        to encode. Returns the notifications' cursors."""
        db = self._db
        cursors: list[int] = []
        if not db.in_transaction:
            db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT INTO log (kind, client, body) VALUES (?, ?, ?)",
                           [(k, c, b if isinstance(b, str) else dumps(b))
                            for k, c, b in entries])
            if add is not None:
                db.execute("INSERT INTO expressions (id, client, body) VALUES (?, ?, ?)",
                           (add[0], add[1], json.dumps(add[2])))
            if remove is not None:
                db.execute("DELETE FROM expressions WHERE id = ?", (remove,))
            if notifications:
                # Cursors numbered here, under the write lock, so that one executemany
                # stores them all (a request of 100 signals may notify as many times).
                last = int(db.execute("SELECT MAX(cursor) FROM notifications").fetchone()[0]
                           or 0)
                cursors = list(range(last + 1, last + 1 + len(notifications)))
                self._insert(
                    "INSERT INTO notifications (cursor, client, expression, body) VALUES ",
                    4, [(cursor, client, expression,
                         body if isinstance(body, str) else dumps(body)) for cursor,
                        (client, expression, body, _) in zip(cursors, notifications,
                                                             strict=True)])
                now = time.time()
                hooks = [(cursor, url, now, client) for cursor, (client, *_, url)
                         in zip(cursors, notifications, strict=True) if url is not None]
                if hooks:
                    self._insert("INSERT INTO deliveries (cursor, url, due, client) VALUES ",
                                 4, hooks)
            db.execute("COMMIT")
        except BaseException:
            self.abort()
            raise
        return cursors

    def _insert(self, head: str, width: int, rows: Sequence[tuple[Any, ...]]) -> None:
        """``head`` (``INSERT INTO t (columns) VALUES ``) of ``rows`` of ``width`` values,
        many rows a statement: a request's notifications in a few statements cost 0.5-0.8
        times their ``executemany`` (a statement run per row; issue 31, item 10), and the
        writer lets the GIL go a few times a request, not once a row. The statements hold
        a power of two of rows each (at most :data:`INSERT_ROWS`, and the connection's
        limit of values), so that a handful of texts is ever prepared."""
        values = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        most = 1 << min(INSERT_ROWS, values // width).bit_length() - 1
        i, n = 0, len(rows)
        while i < n:
            size = min(most, 1 << (n - i).bit_length() - 1)
            self._db.execute(_values(head, width, size),
                             [v for row in rows[i:i + size] for v in row])
            i += size

    def delete_notifications(self, client: str, through: int) -> int:
        cur = self._db.execute(
            "UPDATE notifications SET deleted = 1 WHERE client = ? AND cursor <= ? "
            "AND deleted = 0", (client, through))
        return cur.rowcount

    def discard_oldest(self, client: str, count: int) -> int:
        """Discard the client's ``count`` oldest notifications (the retention quota, in
        the transaction :meth:`begin` started; their webhook deliveries too): their rows
        deleted, their cursors folded into the client's ranges (table ``discards``) for
        :meth:`discarded`. The newest notification is kept, marked ``deleted = 2`` (cursors
        are numbered after it); :meth:`purge` folds it once newer ones are stored. Marked
        and purged later instead, a client at its quota had its discards written twice, and
        the purge's deletion of 100,000 rows held every change behind it (issue 31)."""
        db = self._db
        oldest = [c for (c,) in db.execute(
            "SELECT cursor FROM notifications WHERE client = ? AND deleted = 0 "
            "ORDER BY cursor LIMIT ?", (client, count))]
        if not oldest:
            return 0
        # The client's live rows up to the last of them are exactly them.
        db.execute("DELETE FROM deliveries WHERE cursor IN (SELECT cursor FROM notifications "
                   "WHERE client = ? AND deleted = 0 AND cursor <= ?)", (client, oldest[-1]))
        newest = int(db.execute("SELECT MAX(cursor) FROM notifications").fetchone()[0])
        if oldest[-1] == newest:
            db.execute("UPDATE notifications SET deleted = 2 WHERE cursor = ?", (newest,))
            folded = oldest[:-1]
        else:
            folded = oldest
        if folded:
            db.execute("DELETE FROM notifications WHERE client = ? AND deleted = 0 "
                       "AND cursor <= ?", (client, folded[-1]))
            self._keep_ranges(client, folded)
        return len(oldest)

    def skip(self, rows: Iterable[Any],
             live: Mapping[str, tuple[int, str, dict[str, Any]]]) -> list[str]:
        """Move the log rows ``rows`` (each with ``seq`` and ``reason``) to the table
        ``skipped``, as they were, and make ``expressions`` the ``live`` ones (id -> (tick,
        client, body)): out go a skipped registration's (whose id a damaged row may not even
        say), in come those a salvage lost; one transaction (``serve --skip-bad-rows``).
        Returns the ids taken out."""
        with self._immediate() as db:
            now = time.time()
            for row in rows:
                found = db.execute("SELECT kind, client, body FROM log WHERE seq = ?",
                                   (row.seq,)).fetchone()
                if found is None:
                    continue
                kind, client, body = found
                db.execute("INSERT OR REPLACE INTO skipped (seq, kind, client, body, reason, "
                           "at) VALUES (?, ?, ?, ?, ?, ?)",
                           (row.seq, kind, client, body, row.reason, now))
                db.execute("DELETE FROM log WHERE seq = ?", (row.seq,))
            there = {i for (i,) in db.execute("SELECT id FROM expressions")}
            gone = sorted(there - set(live))
            db.executemany("DELETE FROM expressions WHERE id = ?", [(i,) for i in gone])
            db.executemany("INSERT INTO expressions (id, client, body) VALUES (?, ?, ?)",
                           [(i, client, json.dumps(body))
                            for i, (_, client, body) in live.items() if i not in there])
        return gone

    def replace_log(self, rows: Sequence[tuple[str, str, Any]]) -> None:
        """Replace the whole log with ``rows`` (kind, client, body: JSON, or an object to
        encode), numbered after the last row it had, in one transaction (the compaction of
        :mod:`._replay`)."""
        with self._immediate() as db:
            last = int(db.execute("SELECT MAX(seq) FROM log").fetchone()[0] or 0)
            db.execute("DELETE FROM log")
            self._put_log(last + 1, rows)

    def _put_log(self, first: int, rows: Iterable[tuple[str, str, Any]]) -> None:
        """Insert the log rows ``rows`` (kind, client, body: JSON, or an object to encode)
        numbered from ``first`` (a compaction's, in its transaction)."""
        self._db.executemany("INSERT INTO log (seq, kind, client, body) VALUES (?, ?, ?, ?)",
                             [(first + i, k, c, b if isinstance(b, str) else dumps(b))
                              for i, (k, c, b) in enumerate(rows)])

    def mark_log(self, token: int) -> None:
        """Remember the log's last row as ``token``: the log a compaction started now (in a
        child process, :mod:`._compaction`) is the live state of, for
        :meth:`replace_log_through`. One compaction runs at a time: an older mark, whose
        compaction was cancelled, is forgotten."""
        last = self._db.execute("SELECT MAX(seq) FROM log").fetchone()[0]
        self._marks = {token: int(last or 0)}

    def replace_log_through(self, token: int, path: str) -> None:
        """Replace the log's rows up to the mark ``token`` with the rows of the file ``path``
        (:func:`write_rows`), numbered up to the mark's row, so that the rows logged since
        the mark replay after them; in one transaction. The file is removed, taken or not."""
        try:
            boundary = self._marks.pop(token, None)
            if boundary is None:
                raise sqlite3.DatabaseError(f"no mark {token} of the log to compact up to")
            rows = read_rows(path)
            with self._immediate() as db:
                db.execute("DELETE FROM log WHERE seq <= ?", (boundary,))
                self._put_log(boundary - len(rows) + 1, rows)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def purge(self) -> int:
        """Remove the acknowledged notifications (``DELETE /notifications?through=``) and
        fold the discards still marked (``deleted = 2``: a newest notification discarded,
        or a database of a version before the ranges) into the ranges of cursors of
        :meth:`discard_oldest`, in one transaction; how many rows went. Kept: the newest
        notification (cursors are numbered after it, and must never be given twice) and
        those whose webhook delivery is pending. Before the ranges, a client that never
        acknowledged grew the database by every notification it was ever sent, 62 -> 423 MB
        in 40 s of batches (issue 31, item 7)."""
        with self._immediate() as db:
            newest = int(db.execute("SELECT MAX(cursor) FROM notifications").fetchone()[0]
                         or 0)
            gone = db.execute(
                "DELETE FROM notifications WHERE deleted = 1 AND cursor < ? "
                "AND cursor NOT IN (SELECT cursor FROM deliveries)", (newest,)).rowcount
            marked = db.execute("SELECT client, cursor FROM notifications WHERE deleted = 2 "
                                "AND cursor < ? ORDER BY client, cursor", (newest,)).fetchall()
            for client, rows in itertools.groupby(marked, key=itemgetter(0)):
                self._keep_ranges(client, [cursor for _, cursor in rows])
            gone += db.execute("DELETE FROM notifications WHERE deleted = 2 AND cursor < ?",
                               (newest,)).rowcount
        return gone

    def _keep_ranges(self, client: str, cursors: Sequence[int]) -> None:
        """Keep the client's discarded ``cursors`` (ascending, their rows gone or going) as
        its ranges: each run of consecutive ones folded in, and the oldest ranges merged
        past :data:`DISCARD_RANGES` (looked at only when a range was added)."""
        added = False
        for low, high, n in _runs(cursors):
            added |= self._fold(client, low, high, n)
        if added:
            self._merge_oldest(client)

    def _fold(self, client: str, low: int, high: int, count: int) -> bool:
        """Add a run of the client's discarded cursors to its ranges: it extends the newest
        range when both are consecutive cursors and meet, or starts one (True)."""
        db = self._db
        last = db.execute("SELECT low, high, count FROM discards WHERE client = ? "
                          "ORDER BY low DESC LIMIT 1", (client,)).fetchone()
        if (last is not None and last[1] + 1 == low and last[2] == last[1] - last[0] + 1
                and count == high - low + 1):
            db.execute("UPDATE discards SET high = ?, count = count + ? "
                       "WHERE client = ? AND low = ?", (high, count, client, last[0]))
            return False
        db.execute("INSERT INTO discards (client, low, high, count) VALUES (?, ?, ?, ?)",
                   (client, low, high, count))
        return True

    def _merge_oldest(self, client: str) -> None:
        """Keep at most :data:`DISCARD_RANGES` ranges of a client: its oldest merged into
        one (counted whole by :meth:`discarded` where ``after`` falls inside it). A client
        whose discards are interleaved with other clients' notifications has a range a
        request; bounded, its ranges cost the database a few kB whatever it was sent."""
        db = self._db
        ranges = int(db.execute("SELECT COUNT(*) FROM discards WHERE client = ?",
                                (client,)).fetchone()[0])
        if ranges <= DISCARD_RANGES:
            return
        oldest = db.execute(
            "SELECT MIN(low), MAX(high), SUM(count) FROM (SELECT low, high, count FROM "
            "discards WHERE client = ? ORDER BY low LIMIT ?)",
            (client, ranges - DISCARD_RANGES + 1)).fetchone()
        db.execute("DELETE FROM discards WHERE client = ? AND low <= ?", (client, oldest[1]))
        db.execute("INSERT INTO discards (client, low, high, count) VALUES (?, ?, ?, ?)",
                   (client, *oldest))

    def delivered(self, cursor: int) -> None:
        self._db.execute("DELETE FROM deliveries WHERE cursor = ?", (cursor,))

    def retry(self, cursor: int, attempts: int, due: float) -> None:
        self._db.execute("UPDATE deliveries SET attempts = ?, due = ? WHERE cursor = ?",
                         (attempts, due, cursor))


# --- a compacted log in a file ------------------------------------------------------------

def write_rows(path: str, rows: Iterable[tuple[str, str, Any]]) -> None:
    """Write the log rows ``rows`` (kind, client, body: JSON or an object to encode) to the
    new file ``path``, for :meth:`Journal.replace_log_through`: a compaction's child process
    writes them, the committer reads them (``marshal``: strings only, no objects built from
    the file as a pickle could)."""
    with open(path, "xb") as f:
        marshal.dump([(k, c, b if isinstance(b, str) else dumps(b)) for k, c, b in rows], f)


def read_rows(path: str) -> list[tuple[str, str, str]]:
    """The rows :func:`write_rows` wrote to ``path``."""
    with open(path, "rb") as f:
        rows = marshal.load(f)
    if not isinstance(rows, list) or not all(
            isinstance(r, tuple) and len(r) == 3 and all(type(x) is str for x in r)
            for r in rows):
        raise sqlite3.DatabaseError(f"{path}: not a compacted log")
    return rows
