"""The detection service over HTTP (issue 18, item 4): an ASGI application on Starlette.

Starlette rather than FastAPI: bodies are XML markup as often as JSON, and errors are RFC 9457
problem documents written here; FastAPI's value is pydantic models and OpenAPI, which would
stand between us and both (the OpenAPI document is written by hand, :mod:`._openapi`). The
application holds one :class:`Service`: the engine and the journal (:mod:`._db`). Every change
(a registration, an unregistration, a request's signals) runs in one writer thread, which alone
touches the engine and the writing connection, so changes are applied in the order accepted and
each is one database transaction with the notifications it produced; reads go through a second
connection in a reader thread (issue 31, item 3). The event loop never waits for SQLite: a
database another program holds answers the change 503 after a short busy wait (``Retry-After:
1``), a full disk 507, and ``/health`` and the reads answer all along. The transaction is begun
before the engine sees a change, so a busy database leaves the engine as it was; a write that
fails later (the disk full at commit) has the engine rebuilt from the log as the writer's next
job, after the failed request is answered. Opaque providers are called in the writer thread.

Routes (each but ``/health`` needs ``Authorization: Bearer SECRET`` when tokens are given):

* ``POST /expressions`` — markup (``application/xml``) or JSON ``{"expression": text,
  "variables": {...}, "callback": url}`` → 201 ``{"id": ...}`` (a callback to this machine or
  a private network refused unless allowed: :mod:`._webhooks`); ``GET /expressions?limit=
  &after=`` (a page, :mod:`._paging`), ``GET /expressions/{id}``, ``DELETE
  /expressions/{id}`` → 204;
* ``POST /events`` — one ``{"type": ..., "params": {...}, "time": ...}`` or a list → 202
  ``{"accepted": n}`` (a list is checked whole before any is applied);
* ``GET /notifications?after=CURSOR`` (the client's own, oldest first; without ``after``
  every one it has not deleted), ``DELETE /notifications?through=CURSOR``,
  ``GET /notifications/stream`` (Server-Sent Events, ``id:`` the cursor; resumes after
  ``Last-Event-ID`` or ``?after``);
* ``POST /notifications/stream/ticket`` — a single-use ticket opening one stream
  (``?ticket=``), for a browser's ``EventSource``, which cannot send the header (:mod:`._web`);
* ``GET /graph`` — node counts with and without sharing over the client's own expressions;
* ``GET /openapi.json`` (:mod:`._openapi`) and ``GET /docs`` (Swagger UI), open as ``/health``.

Limits (issue 31, item 6; :mod:`._limits`): quotas per client checked here (expressions in the
writer thread, events per request in the handler, the retention of notifications in the
change's transaction), the body timeout in the body reader, the header timeout and the
connection limit in uvicorn's protocol (:mod:`._protocol`). Each path is one route whose
methods are dispatched here, so that a 405 lists them all in ``Allow``.

Streams wait without a lock (issue 31, item 1): each open stream has its own
:class:`asyncio.Event`, which a commit of notifications for its client sets. A stream clears
its event *before* it reads the database, so a commit after the read wakes it and a commit
before it is in the read; nothing is missed, and the only cancellation a stream sees (its
client going away) interrupts an ``Event.wait``, which holds nothing. The keep-alive is a timer
that sets the event, not a timeout that cancels. (Before, streams waited with
``asyncio.wait_for(condition.wait(), 15)`` inside ``async with condition``: on Python 3.11 a
disconnect racing a notify released the condition's lock from a task that did not hold it,
and the service stopped answering for good.) When the server stops, :meth:`Service.close_streams`
ends every stream with a final ``shutdown`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import secrets
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter
from typing import Any, Literal, TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from xmlevents._foundation.jsonlines import JsonLineError, load_line
from xmlevents.algebra import PositionedError, XmlEventsError

from ._batch import read_batch
from ._commit import CommitterGone, Pipe, PipedJournal, Writes
from ._compaction import Compactions
from ._db import Journal, Stored
from ._engine import Detection, Join, Provider, check_signal
from ._errors import (
    ExpressionTextError,
    MarkupError,
    SignalError,
    UnknownExpressionError,
)
from ._json import dumps, object_json, signal_json, string
from ._limits import (
    Limits,
    over_retention,
    timed_out,
    too_many_events,
    too_many_expressions,
)
from ._lock import DatabaseLock
from ._openapi import openapi
from ._paging import Page, limit_of
from ._problem import Problem
from ._repair import Salvaged, salvage
from ._replay import DamagedLogError, compact, grown, replay
from ._replay import registration as _registration
from ._web import Tickets, cors, docs_page, docs_routes, post_ticket
from ._webhooks import Webhooks, refusal

__all__ = ["Service", "create_app", "MAX_BODY", "ANONYMOUS"]

#: The largest request body accepted (bytes): 413 beyond.
MAX_BODY = 1024 * 1024
#: The one client of a service started without tokens.
ANONYMOUS = "anonymous"
#: ``GET /notifications``: how many without ``limit``, and the most listed at once (a larger
#: ``limit`` gives as many); ``limit=0`` is refused (it listed 1,000: issue 31, finding 10).
DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
#: The largest cursor (SQLite's INTEGER): a query past it is refused, not a 500.
MAX_CURSOR = 2 ** 63 - 1
#: Seconds of silence after which a stream sends a comment, so that proxies keep it open
#: and a client that went away is found by the write.
KEEPALIVE = 15.0
#: The last event of every stream when the service stops: reconnect later, from the last id.
SHUTDOWN_EVENT = ('retry: 5000\nevent: shutdown\ndata: {"detail": "the service is stopping; '
                  'reconnect with Last-Event-ID to resume"}\n\n')
T = TypeVar("T")
#: Where the writer's transactions are committed, and where the log's compactions look at
#: the engine (:class:`Service`).
Committer = Literal["thread", "process"]
Compaction = Literal["thread", "process"]
#: The compactions' default: in a forked child on Linux (:mod:`._compaction`), where it dies
#: with the service (``PR_SET_PDEATHSIG``); elsewhere (macOS forbids much after a fork of a
#: process with threads) in the writer thread.
DEFAULT_COMPACTION: Compaction = "process" if sys.platform.startswith("linux") else "thread"
F = TypeVar("F", bound=tuple[str, Any, Any, Any])
_log = logging.getLogger("xmlevents.service")


def _unreadable(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` is a page SQLite cannot read (what a salvage mends), not a bad row
    or another program's file."""
    if isinstance(exc, DamagedLogError):
        return exc.seq is None
    return "malformed" in str(exc)


def _database_problem(exc: sqlite3.Error) -> Problem | None:
    """503 with ``Retry-After`` for a database another program holds (busy past
    :data:`~._db.BUSY_TIMEOUT`), 507 for a full disk; None for another error (a 500). The
    change was not applied in either case."""
    if isinstance(exc, CommitterGone):
        return Problem(503, "Service Unavailable",
                       "the database's committer process ended; it is started again and "
                       "nothing was applied: retry", headers={"Retry-After": "1"})
    text = str(exc).lower()
    if "database is locked" in text or "database is busy" in text:
        return Problem(503, "Service Unavailable",
                       "the database is busy (another program holds its write lock); nothing "
                       "was applied: retry", headers={"Retry-After": "1"})
    if "database or disk is full" in text:
        return Problem(507, "Insufficient Storage",
                       "the database cannot grow (the disk is full); nothing was applied")
    return None


def _problem_of(exc: XmlEventsError) -> Problem:
    extra: dict[str, Any] = {}
    if isinstance(exc, PositionedError):
        if exc.line is not None:
            extra = {"line": exc.line, "column": exc.column}
        detail = exc.reason
    else:
        detail = str(exc)
    if isinstance(exc, UnknownExpressionError):
        return Problem(404, "Not Found", detail)
    if isinstance(exc, ExpressionTextError | MarkupError):
        return Problem(400, "Malformed expression", detail, **extra)
    if isinstance(exc, SignalError):
        return Problem(422, "Bad event", detail)
    return Problem(422, "Expression not registered", detail, **extra)


class Service:
    """The engine, its journal and its clients (see the module)."""

    def __init__(self, db: str, tokens: Mapping[str, str] | None = None, *,
                 join: Join = "correlate", providers: Mapping[str, Provider] | None = None,
                 lock: DatabaseLock | None = None, limits: Limits | None = None,
                 allow_private_webhooks: bool = False, skip_bad_rows: bool = False,
                 committer: Committer = "thread",
                 compaction: Compaction = DEFAULT_COMPACTION) -> None:
        """Open ``db`` (taking its lock, or using ``lock``, one already held on it), rebuild
        the engine from its log and compact the log if it is much longer than the live
        state (:mod:`._replay`). ``limits``: the quotas (:mod:`._limits`).
        ``allow_private_webhooks``: accept callbacks to this machine and private networks
        (:mod:`._webhooks`). ``skip_bad_rows``: leave out the log rows that cannot be
        replayed (listed in :attr:`skipped`) instead of raising. ``committer``: where the
        writer's transactions are committed: ``"thread"``, by the writer thread itself, or
        ``"process"``, by a process of their own while the writer goes on with the next
        change (:mod:`._commit`; ``xmlevents serve`` runs so). ``compaction``: where the
        log's compactions, as the log grows, look at the engine and write the live state:
        ``"process"``, a forked child, while the writer goes on (:mod:`._compaction`; the
        default on Linux), or ``"thread"``, the writer thread itself.

        Raises:
            DatabaseInUse: another process serves ``db``.
            DamagedLogError: a log row cannot be replayed (naming it), or read.
            sqlite3.Error: ``db`` is not the service's database.
        """
        #: secret -> client name; empty: an open service with one anonymous client.
        self.tokens = dict(tokens or {})
        if lock is not None and lock.path != DatabaseLock.path_of(db):
            raise ValueError(f"the lock {lock.path} is not {db!r}'s")
        self.db_lock = lock if lock is not None else DatabaseLock(db)
        self.providers = dict(providers or {})
        self.limits = limits or Limits()
        self.join: Join = join
        try:
            #: The writing connection and the engine: used by the writer thread only.
            #: What a salvage of damaged pages kept and lost (``skip_bad_rows``), or None.
            self.salvaged: Salvaged | None = None
            try:
                self.journal = Journal(db)
                state = replay(self.journal, join=join, providers=self.providers,
                               skip_bad_rows=skip_bad_rows)
            except sqlite3.DatabaseError as exc:
                if not (skip_bad_rows and _unreadable(exc)):
                    raise
                with contextlib.suppress(AttributeError):
                    self.journal.close()
                self.salvaged = salvage(db)  # the readable rows, in a new file
                self.journal = Journal(db)
                state = replay(self.journal, join=join, providers=self.providers,
                               skip_bad_rows=True)
            self.engine, self.owner, self.callbacks = state.engine, state.owner, state.callbacks
            #: The log rows replayed at start, and those left out (``skip_bad_rows``).
            self.replayed, self.skipped = state.rows, tuple(state.skipped)
            #: The expressions left out with a skipped registration row.
            self.dropped = tuple(state.dropped)
            #: Whether the start compacted the log.
            self.compacted = compact(self.journal, state)
            #: The engine's registrations and the log's length, for compactions while the
            #: service runs (the writer thread's, as the engine).
            self._state = state
            #: The reading connection: used by the reader thread only.
            self.reader = Journal.reader(db)
            #: Notifications each client keeps (the retention quota); the writer's.
            self.retained = self.journal.retained()
            #: The committer process (``committer="process"``), or None.
            self._pipe: Pipe | None = None
            #: The writer's journal: its own connection, or the committer process.
            self.writes: Writes = self.journal
            if committer == "process":
                self._pipe = Pipe(db, self._pipe_failed, keep_fd=self.db_lock.fileno())
                self.writes = PipedJournal(self._pipe)
                self.journal.close()
                #: A connection the writer reads the log through to rebuild its engine.
                self.journal = Journal.reader(db)
            elif committer != "thread":
                raise ValueError(f"committer: 'thread' or 'process', not {committer!r}")
            if compaction not in ("thread", "process"):
                raise ValueError(f"compaction: 'thread' or 'process', not {compaction!r}")
            #: The compactions in a child process, or None (in the writer thread).
            self._compactions = Compactions(db) if compaction == "process" else None
            #: When the quota's discards were last logged for each client, and how many
            #: were discarded since (:meth:`_warn_retention`); the writer's.
            self._warned: dict[str, float] = {}
            self._discarded: dict[str, int] = {}
        except BaseException:
            with contextlib.suppress(AttributeError):
                self.journal.close()
            with contextlib.suppress(AttributeError):
                if self._pipe is not None:
                    self._pipe.close()
            self.db_lock.release()
            raise
        #: The engine no longer matches the log (a change failed after it reached the
        #: engine): rebuilt by the writer thread before its next change.
        self._stale = False
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="xmlevents-writer")
        #: The changes waiting for the writer, and whether a drain of them is under way
        #: (:meth:`write`); both under the lock.
        self._queue: list[tuple[asyncio.Future[Any], Callable[[], Any]]] = []
        self._draining = False
        self._queue_lock = threading.Lock()
        self._reading = ThreadPoolExecutor(1, thread_name_prefix="xmlevents-reader")
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The open streams' events, by client (see the module).
        self._streams: dict[str, set[asyncio.Event]] = {}
        #: Set when the server stops: streams send their last event and end.
        self.closing = False
        #: The webhook deliveries: a queue per client (issue 31, item 4).
        self.webhooks = Webhooks(self, allow_private=allow_private_webhooks)

    # --- threads --------------------------------------------------------------------------

    async def write(self, job: Callable[[], T]) -> T:
        """Run ``job`` in the writer thread, after the changes submitted before it: the
        engine and the writing connection (or the committer process, :mod:`._commit`) are
        the writer thread's alone, so changes are applied in the order accepted and the
        event loop never waits for SQLite. With a committer process, a job that sent a
        change is answered once the change is committed."""
        # The jobs are handed over in groups (issue 31, item 10): one wake-up of the writer
        # for every job queued while it was busy, one callback into the event loop for
        # every job it ran since. A future and a thread hand-over each way per request
        # (run_in_executor) cost more CPU than the request's own work under load: the two
        # threads took turns at the GIL for every request. Each job is still its own
        # transaction, run in the order submitted.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._queue_lock:
            self._queue.append((future, job))
            start, self._draining = not self._draining, True
        if start:
            try:
                self._writer.submit(self._drain, loop)
            except RuntimeError:  # stopped: refused, as run_in_executor refused it
                with self._queue_lock:
                    self._queue.clear()
                    self._draining = False
                raise
        return await future

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the writer thread: run the queued jobs in order until none is left, and hand
        each group's outcomes back to the event loop at once. A job whose request was
        cancelled before it started is not run (as a queued executor job was not)."""
        while True:
            with self._queue_lock:
                jobs, self._queue = self._queue, []
                if not jobs:
                    self._draining = False
                    return
            outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
            pipe = self._pipe
            for future, job in jobs:
                if future.cancelled():
                    continue
                pending = None if pipe is None else pipe.begin_job(
                    functools.partial(_settle_one, loop, future))
                try:
                    result, error = job(), None
                except BaseException as exc:  # the request's to raise, as an executor's
                    result, error = None, exc
                if pending is not None:
                    assert pipe is not None
                    outcome = pipe.end_job(pending, result, error)
                    if outcome is None:  # answered once its commit is acknowledged
                        continue
                    result, error = outcome
                outcomes.append((future, result, error))
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(_settle, outcomes)

    async def read(self, job: Callable[[Journal], T]) -> T:
        """Run ``job`` with the reading connection in the reader thread (in WAL mode it
        never waits for the writer)."""
        return await asyncio.get_running_loop().run_in_executor(
            self._reading, job, self.reader)

    def _fresh(self) -> None:
        """In the writer thread, before a change: rebuild the engine from the log if a
        failed change left it ahead of the log."""
        if self._stale:
            if self._compactions is not None:  # a look at the engine that failed
                self._compactions.cancel()
            if self._pipe is not None:
                self._pipe.reset()  # every change sent is committed or refused now
            state = replay(self.journal, join=self.join, providers=self.providers)
            self.engine, owner, callbacks = state.engine, state.owner, state.callbacks
            self._state = state
            self.owner.clear()  # the same dicts: the event loop reads them
            self.owner.update(owner)
            self.callbacks.clear()
            self.callbacks.update(callbacks)
            # counted again: the committer process's failed changes were counted when sent
            self.retained = self.writes.retained()
            self._stale = False

    def _committed(self, found: Iterable[tuple[str, str, Any, str | None]]) -> None:
        """In the writer thread, after a commit: wake the streams of the clients notified
        and, for callbacks, the webhook worker. Done from here, not by the request, so that
        a request cancelled while it waited still wakes them."""
        owners = set(map(_owner, found))
        if not owners or self._loop is None:
            return
        hooks = any(map(_url, found))
        if self._pipe is not None:  # the change is on its way to the committer process
            self._pipe.after_commit(functools.partial(self._wake, owners, hooks))
        else:
            self._wake(owners, hooks)

    def _wake(self, owners: set[str], hooks: bool) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._notify, owners)
        if hooks:
            self._loop.call_soon_threadsafe(self.webhooks.wake)

    def _logged(self, entries: int) -> None:
        """In the writer thread, after a commit of ``entries`` log entries: compact the log
        when it has grown to :data:`~._replay.COMPACT_FACTOR` times the live state, so
        that a restart replays the live state, not the history, however long the service
        has run — in a child process (:mod:`._compaction`), whose outcome a later call
        takes, or here. A compaction that fails (a busy or full database) leaves the log as
        it was; it is tried again once the log has grown as much again."""
        state = self._state
        state.entries += entries
        background = self._compactions
        if self._stale:  # a change failed: the engine is rebuilt (and the child cancelled)
            return
        try:
            if background is not None and background.running:
                background.poll(self.writes, state)
            elif grown(state):
                if background is None:
                    compact(self.writes, state)
                else:
                    background.start(self.writes, state)
        except (sqlite3.Error, OSError) as exc:  # OSError: no fork (out of memory, pids)
            state.looked = state.entries
            _log.warning("the log was not compacted: %s", exc)

    def _last_compaction(self) -> None:
        """In the writer thread, as the service stops: wait for a running compaction's child
        and take its rows (cancel it if the engine is stale)."""
        assert self._compactions is not None
        try:
            if not self._stale:
                self._compactions.poll(self.writes, self._state, wait=True)
        except (sqlite3.Error, OSError) as exc:
            _log.warning("the log was not compacted: %s", exc)
        self._compactions.cancel()

    def _failed(self) -> None:
        """In the writer thread, after a change failed once it had reached the engine: the
        engine is ahead of the log. The rebuild is the writer's next job (or the start of
        the change queued first), so that the failed request is answered at once."""
        self._stale = True
        with contextlib.suppress(RuntimeError):  # stopping: no new job; _stale stays
            self._writer.submit(self._fresh)

    def _pipe_failed(self, error: BaseException) -> None:
        """In the acknowledgements' thread: a change sent to the committer process failed
        (or it ended), after the writer had applied it; the writer's engine is rebuilt."""
        self._failed()

    # --- clients --------------------------------------------------------------------------

    def client(self, request: Request) -> str:
        if not self.tokens:
            return ANONYMOUS
        header = request.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret:
            raise Problem(401, "Unauthorized", "send Authorization: Bearer <token>")
        for known, name in self.tokens.items():
            if secrets.compare_digest(known.encode(), secret.strip().encode()):
                return name
        raise Problem(401, "Unauthorized", "the token is not valid")

    def own(self, client: str, ident: str) -> None:
        if self.owner.get(ident) != client:  # another client's ids do not exist for it
            raise Problem(404, "Not Found", f"no registered expression has the id {ident!r}")

    # --- changes --------------------------------------------------------------------------

    async def register(self, client: str, fmt: str, source: str,
                       variables: Mapping[str, Any], callback: str | None) -> str:
        """Register an expression for ``client``: the engine and the log in one step of the
        writer thread; returns its id."""
        registration = _registration(fmt, source, variables)

        def job() -> str:
            self._fresh()
            if self.writes.expression_count(client) >= self.limits.max_expressions:
                raise too_many_expressions(client, self.limits)
            # a busy database fails here, before the engine changes (the writer's own
            # connection; a committer process fails it later, and the engine is rebuilt)
            self.writes.begin()
            ident = "x" + secrets.token_hex(8)
            tick = self.engine.tick
            try:
                self.engine.register(registration, ident=ident)
            except BaseException:
                self.writes.abort()
                raise
            body = {"id": ident, "format": fmt, "source": source,
                    "variables": dict(registration.inputs) if fmt == "text" else {},
                    "callback": callback, "text": str(registration.expression)}
            # an opaque leaf whose provider failed at once: the empty result, stored with it
            dead = [(client, d.expression, _notification(d), callback)
                    for d in self.engine.dead()]
            try:
                self.writes.write([("register", client, body)], dead,
                                  add=(ident, client, body))
            except BaseException:
                self.engine.unregister(ident)
                raise
            self.owner[ident] = client
            if callback:
                self.callbacks[ident] = callback
            self._kept(dead, {})
            self._committed(dead)
            self._state.registered[ident] = (tick, client, body)
            self._logged(1)
            return ident

        return await self.write(job)

    async def unregister(self, client: str, ident: str) -> None:
        """Take ``client``'s expression ``ident`` out of the log and the engine."""
        def job() -> None:
            self._fresh()
            self.own(client, ident)
            self.writes.write([("unregister", client, {"id": ident})], [], remove=ident)
            self.engine.unregister(ident)
            del self.owner[ident]
            self.callbacks.pop(ident, None)
            self._state.registered.pop(ident, None)
            self._logged(1)

        await self.write(job)

    async def signal(self, client: str, events: list[tuple[str, dict[str, Any],
                                                          float | None]],
                     raw: str | None = None) -> int:
        """Apply signals checked by :func:`check_signal` (the engine does not check them
        again) in order; their log row and notifications in one transaction. ``raw``: the
        request's JSON body those signals were read from, logged as it is (no encoding
        again). A database another program holds fails before the
        engine sees the signals; a write that fails after it has (the disk full) has the
        engine rebuilt from the log by the writer thread, after this request is answered."""
        if raw is None:
            raw = dumps([{"type": t, "params": p, **({} if at is None else {"time": at})}
                         for t, p, at in events])

        def job() -> int:
            self._fresh()
            self.writes.begin()
            found: list[tuple[str, str, dict[str, Any] | str, str | None]] = []
            texts: dict[str, str] = {}  # a signal's JSON, for the notifications it is in
            try:
                for etype, params, at in events:
                    for d in self.engine.signal_checked(etype, params, at):
                        owner = self.owner[d.expression]
                        found.append((owner, d.expression, _notification_text(d, texts),
                                      self.callbacks.get(d.expression)))
                found, discarded = self._retain(found)
                self.writes.write([("signals", client, raw)], found)
            except BaseException:
                self.writes.abort()
                self._failed()  # the engine saw signals the log does not have
                raise
            self._kept(found, discarded)
            self._committed(found)
            self._logged(len(events))
            return len(events)

        return await self.write(job)

    async def delete_notifications(self, client: str, through: int) -> int:
        """Mark ``client``'s notifications up to ``through`` deleted; how many were."""
        def job() -> int:
            n = self.writes.delete_notifications(client, through)
            self.retained[client] = self.retained.get(client, 0) - n
            return n

        return await self.write(job)

    def _retain(self, found: list[F]) -> tuple[list[F], dict[str, int]]:
        """In the writer thread, inside a change's transaction: make room for ``found``
        under the retention quota (:func:`~._limits.over_retention`): the oldest stored
        notifications of a client past it discarded, and the new ones past it left out.
        Returns the notifications to store and how many stored ones each client lost."""
        discard, dropped = over_retention(self.retained, found, self.limits)
        lost = {owner: self.writes.discard_oldest(owner, count)
                for owner, count in discard.items()}
        if discard or dropped:
            self._warn_retention(lost, Counter(found[i][0] for i in dropped))
        if dropped:
            skip = set(dropped)
            found = [f for i, f in enumerate(found) if i not in skip]
        return found, lost

    def _warn_retention(self, discarded: Mapping[str, int], dropped: Mapping[str, int]
                        ) -> None:
        """Log the notifications the retention quota discarded, once a client every
        :data:`RETENTION_WARNING` seconds with the count since its last line: a client that
        never acknowledges is over its quota at every request (a line a request before)."""
        now = time.monotonic()
        for client in sorted(set(discarded) | set(dropped)):
            count = (self._discarded.get(client, 0) + discarded.get(client, 0)
                     + dropped.get(client, 0))
            if now - self._warned.get(client, -math.inf) < RETENTION_WARNING:
                self._discarded[client] = count
                continue
            self._warned[client], self._discarded[client] = now, 0
            _log.warning("retention quota (%s notifications a client): %s of %s's oldest "
                         "notifications discarded", f"{self.limits.max_retained:,}",
                         f"{count:,}", client)

    def _kept(self, found: Iterable[tuple[str, Any, Any, Any]],
              lost: Mapping[str, int]) -> None:
        """In the writer thread, after a commit: count the notifications each client keeps
        now (:meth:`_retain`'s, committed)."""
        retained = self.retained
        for owner, n in lost.items():
            retained[owner] = retained.get(owner, 0) - n
        for owner, n in Counter(map(_owner, found)).items():
            retained[owner] = retained.get(owner, 0) + n

    async def stats(self, client: str | None = None) -> dict[str, object]:
        """The engine's node counts (:meth:`Engine.stats`) over ``client``'s expressions
        (default: all), read in the writer thread."""
        def job() -> dict[str, object]:
            self._fresh()
            return self.engine.stats(None if client is None else
                                     [i for i, o in self.owner.items() if o == client])

        return await self.write(job)

    # --- streams --------------------------------------------------------------------------

    @contextlib.contextmanager
    def watch(self, client: str) -> Iterator[asyncio.Event]:
        """An event of the client's own that every commit of notifications for it sets, for
        as long as the ``with`` block runs (one open stream)."""
        woken = asyncio.Event()
        streams = self._streams.setdefault(client, set())
        streams.add(woken)
        try:
            yield woken
        finally:
            streams.discard(woken)
            if not streams and self._streams.get(client) is streams:
                del self._streams[client]

    def _notify(self, clients: Iterable[str]) -> None:
        """Wake the streams of ``clients`` (after their notifications are committed)."""
        for client in set(clients):
            for woken in self._streams.get(client, ()):
                woken.set()

    def close_streams(self) -> None:
        """End every stream, open or opened from now on, with :data:`SHUTDOWN_EVENT` (the
        server is stopping: it waits for open responses to finish, and a stream otherwise
        never does)."""
        self.closing = True
        for streams in self._streams.values():
            for woken in streams:
                woken.set()

    # --- webhooks -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the webhook deliveries (in the event loop that serves)."""
        self._loop = asyncio.get_running_loop()
        self.webhooks.start()

    async def stop(self) -> None:
        """Close the streams, stop the webhook deliveries, let the changes submitted finish,
        close the database and release its lock."""
        self.close_streams()
        await self.webhooks.stop()
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def close(self) -> None:
        """Let the changes submitted finish, close the database and release its lock (what
        :meth:`stop` ends with; alone, for a service that was never started)."""
        if self._compactions is not None:
            # the writer's last job, after those submitted: a child ends with the thread
            # that forked it (PR_SET_PDEATHSIG), so it is waited for before the writer stops
            with contextlib.suppress(RuntimeError):  # stopped already
                self._writer.submit(self._last_compaction).result()
        for pool in (self._writer, self._reading):
            pool.shutdown()
        self.reader.close()
        if self._pipe is not None:
            self._pipe.close()
        self.journal.close()
        self.db_lock.release()

#: Seconds between two log lines of a client's notifications discarded by the retention
#: quota.
RETENTION_WARNING = 60.0

#: A notification's owner and webhook URL, of the writer's (owner, expression, text, URL).
_owner, _url = itemgetter(0), itemgetter(3)


def _settle_one(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any,
                error: BaseException | None) -> None:
    """From the acknowledgements' thread: a job's outcome to its request, once its change is
    committed (``committer="process"``)."""
    with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
        loop.call_soon_threadsafe(_settle, [(future, result, error)])


def _settle(outcomes: Iterable[tuple[asyncio.Future[Any], Any, BaseException | None]]
            ) -> None:
    """In the event loop: each writer job's result or exception to its waiting request
    (one that gave up meanwhile is left alone)."""
    for future, result, exc in outcomes:
        if future.done():
            continue
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)


def _notification(d: Detection) -> dict[str, Any]:
    return {"expression": d.expression, "bindings": dict(d.bindings),
            "events": [s.to_json() for s in d.events], "next": d.next}


def _notification_text(d: Detection, texts: dict[str, str]) -> str:
    """:func:`_notification` as stored JSON (the same text as :func:`dumps` of it), each
    signal encoded once per request however many notifications it is in (a signal
    completing many expressions is common), by hand (:func:`signal_json`):
    :meth:`Signal.to_json` and :func:`dumps` cost 2.8 times as much, a fifth of the
    writer's time in batches (issue 31, item 10)."""
    events = []
    for s in d.events:
        text = texts.get(s.id)
        if text is None:
            text = texts[s.id] = signal_json(s)
        events.append(text)
    nxt = "null" if d.next is None else string(d.next)
    return (f'{{"expression":{string(d.expression)},"bindings":{object_json(d.bindings)},'
            f'"events":[{",".join(events)}],"next":{nxt}}}')


# --- request handling ---------------------------------------------------------------------

async def _body(request: Request) -> bytes:
    """The body, refused past :data:`MAX_BODY` without reading it all, and past the body
    timeout (408, the connection closed: a client trickling its body holds nothing)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise Problem(413, "Content Too Large", f"bodies are limited to {MAX_BODY:,} bytes")
    limits: Limits = request.app.state.service.limits
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise Problem(413, "Content Too Large",
                                  f"bodies are limited to {MAX_BODY:,} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise timed_out("body", limits.body_timeout, "body_timeout").closing() from None
    return b"".join(chunks)


def _json(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Problem(400, "Malformed JSON", f"the body is not UTF-8 (byte {exc.start})"
                      ) from None
    # The project's one JSON reader and its policy (issue 28): no NaN or infinities, no lone
    # surrogate (no text: RFC 8259, section 8.2; SQLite and UTF-8 cannot hold it), bounded
    # nesting and integers, JSON's white space; as every event line is read.
    try:
        return load_line(text)
    except JsonLineError as exc:
        where: dict[str, Any] = ({} if exc.column is None
                                 else {"line": exc.line or 1, "column": exc.column})
        raise Problem(400, "Malformed JSON", exc.reason, **where) from None


def _expect(obj: Any, fields: Mapping[str, type | tuple[type, ...]], required: set[str],
            what: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise Problem(422, "Bad request body", f"{what} must be a JSON object")
    unknown = sorted(set(obj) - set(fields))
    if unknown:
        raise Problem(422, "Bad request body",
                      f"{what}: unknown field {unknown[0]!r} (fields: {', '.join(fields)})")
    for name in sorted(required):
        if name not in obj:
            raise Problem(422, "Bad request body", f"{what}: field {name!r} is required")
    for name, kinds in fields.items():
        if name in obj and obj[name] is None:  # issue 31, finding 10 ("time": null taken)
            raise Problem(422, "Bad request body",
                          f"{what}: field {name!r} is null; leave the field out for none")
        if name in obj and (
                not isinstance(obj[name], kinds) or (isinstance(obj[name], bool)
                and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)))):
            raise Problem(422, "Bad request body",
                          f"{what}: field {name!r} has the wrong JSON type")
    return obj


def _cursor(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    return _bounded(value, name)


def _bounded(value: str, name: str) -> int:
    if not (value.isascii() and value.isdigit()) or len(value) > 19 or int(value) > MAX_CURSOR:
        raise Problem(400, "Bad query",
                      f"{name} must be a cursor (a non-negative integer below 2**63)")
    return int(value)


Handler = Callable[[Service, Request, str], Awaitable[Response]]


def _route(handler: Handler, *, ticket: bool = False
           ) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` with its client authenticated (a bearer token; ``ticket``: or a stream
    ticket in the query, :mod:`._web`) and its errors answered as problem documents."""
    async def endpoint(request: Request) -> Response:
        service: Service = request.app.state.service
        try:
            if ticket and "ticket" in request.query_params and service.tokens:
                client = request.app.state.tickets.redeem(request.query_params["ticket"])
            else:
                client = service.client(request)
            return await handler(service, request, client)
        except Problem as p:
            return p.response()
        except XmlEventsError as exc:
            return _problem_of(exc).response()
        except sqlite3.Error as exc:
            problem = _database_problem(exc)
            if problem is None:
                raise
            _log.warning("%s %s: %s (%s)", request.method, request.url.path, problem.title,
                         exc)
            return problem.response()
    return endpoint


async def post_expressions(service: Service, request: Request, client: str) -> Response:
    raw = await _body(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in ("application/xml", "text/xml"):
        ident = await service.register(client, "xml", raw.decode("utf-8", "replace"), {},
                                       None)
    elif kind in ("application/json", ""):
        obj = _expect(_json(raw), {"expression": str, "variables": dict, "callback": str},
                      {"expression"}, "the registration")
        callback = obj.get("callback")
        if callback is not None:
            why = refusal(callback, allow_private=service.webhooks.allow_private)
            if why is not None:
                raise Problem(422, "Bad request body", why)
        ident = await service.register(client, "text", obj["expression"],
                                       obj.get("variables") or {}, callback)
    else:
        raise Problem(415, "Unsupported Media Type",
                      "send the expression as application/json or application/xml")
    return JSONResponse({"id": ident}, status_code=201,
                        headers={"Location": f"/expressions/{ident}"})


def _described(ident: str, body: Mapping[str, Any]) -> dict[str, Any]:
    out = {"id": ident, "expression": body["text"], "variables": body.get("variables") or {},
           "callback": body.get("callback")}
    if body.get("format") == "xml":
        out["markup"] = body["source"]
    return out


async def get_expressions(service: Service, request: Request, client: str) -> Response:
    """A page of the client's expressions, oldest first (:mod:`._paging`)."""
    try:
        limit = limit_of(request.query_params.get("limit"))
    except ValueError as exc:
        raise Problem(400, "Bad query", str(exc)) from None
    after = _cursor(request, "after") or 0
    rows = await service.read(lambda j: j.expressions_page(client, after, limit + 1))
    page = Page([(r, _described(i, b)) for r, i, b in rows], limit, request.url.path)
    return JSONResponse({"expressions": page.items, "next": page.next},
                        headers=page.headers())


async def get_expression(service: Service, request: Request, client: str) -> Response:
    """One expression by id: a lookup by primary key (issue 31, item 7)."""
    ident = request.path_params["id"]
    service.own(client, ident)
    body = await service.read(lambda j: j.expression(client, ident))
    if body is None:
        raise Problem(404, "Not Found", f"no registered expression has the id {ident!r}")
    return JSONResponse(_described(ident, body))


async def delete_expression(service: Service, request: Request, client: str) -> Response:
    await service.unregister(client, request.path_params["id"])
    return Response(status_code=204)


_EVENT: dict[str, type | tuple[type, ...]] = {"type": str, "params": dict, "time": (int, float)}
_EVENT_KEYS = (frozenset({"type", "params"}), frozenset({"type", "params", "time"}))


def _signal_of(obj: Any, where: str | int) -> tuple[str, dict[str, Any], float | None]:
    """An event of a request's body, checked; ``where``: its index in a list, or what it
    is, to name it in a problem."""
    # An event whose fields are right skips _expect, which cost twice the rest of the checks
    # (issue 31, item 10); any other is checked by it, to be told what is wrong.
    if not (type(obj) is dict and obj.keys() in _EVENT_KEYS and type(obj["type"]) is str
            and type(obj["params"]) is dict and type(obj.get("time", 0.0)) in (int, float)):
        obj = _expect(obj, _EVENT, {"type", "params"}, _event_name(where))
    at = obj.get("time")
    try:
        params = check_signal(obj["type"], obj["params"], at)
    except SignalError as exc:
        raise Problem(422, "Bad event", f"{_event_name(where)}: {exc}") from None
    if at is not None and not math.isfinite(at):  # pragma: no cover - JSON has no inf
        raise Problem(422, "Bad event", f"{_event_name(where)}: time must be finite")
    return obj["type"], params, None if at is None else float(at)


def _signals_of(data: list[Any]) -> list[tuple[str, dict[str, Any], float | None]]:
    """The events of a request's list, checked (:func:`_signal_of`). The common event — a
    type and parameters of ASCII strings, no time — is taken as the parser made it (its
    dict is the request's own), four times cheaper than checking it field by field: that
    check was the event loop's largest cost in batches (issue 31, item 10)."""
    events: list[tuple[str, dict[str, Any], float | None]] = []
    append = events.append
    for i, obj in enumerate(data):
        if type(obj) is dict and len(obj) == 2:
            etype, params = obj.get("type"), obj.get("params")
            if type(etype) is str and etype and type(params) is dict:
                # ASCII holds no lone surrogate: what check_value would look for in a string
                for value in params.values():
                    if type(value) is not str or not value.isascii():
                        break
                else:
                    append((etype, params, None))
                    continue
        append(_signal_of(obj, i))
    return events


def _event_name(where: str | int) -> str:
    return f"event {where}" if isinstance(where, int) else where


async def post_events(service: Service, request: Request, client: str) -> Response:
    raw = await _body(request)
    events = read_batch(raw)  # the common batch, in one pass of C (msgspec)
    if events is None:
        data = _json(raw)
        if isinstance(data, list):
            if not data:
                raise Problem(422, "Bad request body", "an empty list of events")
            if len(data) > service.limits.max_events:
                raise too_many_events(len(data), service.limits)
            events = _signals_of(data)
        else:
            events = [_signal_of(data, "the event")]
        # The parsed body is dropped before the request waits for the writer: under load a
        # batch waits a second or more, and its thousand dicts, kept, outlived the
        # collector's youngest generation and were walked again by the older ones.
        del data
    elif len(events) > service.limits.max_events:
        raise too_many_events(len(events), service.limits)
    accepted = await service.signal(client, events, raw.decode("utf-8"))
    return JSONResponse({"accepted": accepted}, status_code=202)


async def get_notifications(service: Service, request: Request, client: str) -> Response:
    after = _cursor(request, "after")
    limit = _cursor(request, "limit")
    if limit == 0:
        raise Problem(400, "Bad query", f"limit must be at least 1 (without it: "
                      f"{DEFAULT_LIMIT:,}; at most {MAX_LIMIT:,} are listed at once)")
    count = min(limit or DEFAULT_LIMIT, MAX_LIMIT)

    def job(j: Journal) -> tuple[list[Stored], int]:
        return j.notifications(client, after, count), j.discarded(client, after)

    rows, discarded = await service.read(job)
    return JSONResponse({"notifications": [r.to_json() for r in rows], "discarded": discarded})


async def delete_notifications(service: Service, request: Request, client: str) -> Response:
    through = _cursor(request, "through")
    if through is None:
        raise Problem(400, "Bad query", "say which to delete: ?through=CURSOR")
    await service.delete_notifications(client, through)
    return Response(status_code=204)


async def stream_notifications(service: Service, request: Request, client: str) -> Response:
    last = request.headers.get("last-event-id")
    after = (_bounded(last.strip(), "Last-Event-ID") if last is not None
             else _cursor(request, "after"))

    async def events() -> AsyncIterator[str]:
        cursor = after
        with service.watch(client) as woken:
            while not service.closing:
                woken.clear()  # before the read: a commit after it sets the event again
                rows = await service.read(
                    functools.partial(Journal.notifications, client=client, after=cursor,
                                      limit=500))
                for r in rows:
                    cursor = r.cursor
                    yield (f"id: {r.cursor}\nevent: notification\n"
                           f"data: {json.dumps(r.to_json())}\n\n")
                if not rows and not await _woken(woken, KEEPALIVE):
                    yield ": keep-alive\n\n"
        yield SHUTDOWN_EVENT

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})


async def _woken(event: asyncio.Event, timeout: float) -> bool:
    """Wait until ``event`` is set (True) or ``timeout`` seconds pass (False). The timeout is
    a timer that sets the event, not a cancellation (``asyncio.wait_for``), so the only
    cancellation this wait can see is its stream's end, under which ``Event.wait`` is safe."""
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        event.set()

    timer = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        await event.wait()
    finally:
        timer.cancel()
    return not expired


async def get_graph(service: Service, request: Request, client: str) -> Response:
    return JSONResponse(await service.stats(client))


async def _error(request: Request, exc: Exception) -> Response:
    """Routing errors (404, 405) and, should one happen, an internal error (500) answered
    as problem documents like every other error."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    title = {404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"
             }.get(status, "Error")
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    headers = (exc.headers or {}) if isinstance(exc, HTTPException) else {}
    if status == 405:  # Starlette's Allow header, with the route's methods (finding 10)
        detail = f"{request.method} {request.url.path}: allowed {headers.get('Allow', '')}"
    return Problem(status, title, str(detail), headers=headers).response()


def _methods(handlers: Mapping[str, Callable[[Request], Awaitable[Response]]]
             ) -> Callable[[Request], Awaitable[Response]]:
    """One endpoint for a path's methods, so that a 405 lists them all in ``Allow``
    (a route per method answered with its own method only); HEAD is GET's."""
    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await handlers[method](request)
    return endpoint


async def _health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def _openapi(request: Request) -> Response:
    service: Service = request.app.state.service
    return JSONResponse(openapi(service.limits, secured=bool(service.tokens)))


def create_app(db: str, tokens: Mapping[str, str] | None = None, *,
               join: Join = "correlate", providers: Mapping[str, Provider] | None = None,
               lock: DatabaseLock | None = None, limits: Limits | None = None,
               cors_origins: Sequence[str] = (), allow_private_webhooks: bool = False,
               service: Service | None = None, committer: Committer = "thread",
               compaction: Compaction = DEFAULT_COMPACTION) -> Starlette:
    """The ASGI application of a service whose state lives in the SQLite file ``db``;
    ``tokens`` maps each client's secret to its name (none: open, one anonymous client);
    ``providers`` evaluate opaque expressions by language URI (none: they are refused).
    The service takes ``db``'s lock when it starts (:class:`DatabaseLock`; ``lock``: one
    the caller took already) and releases it when it stops. ``limits``: its quotas and
    timeouts (:mod:`._limits`); ``cors_origins``: the web origins whose pages may call it
    (:mod:`._web`); ``allow_private_webhooks``: callbacks to this machine and private
    networks accepted; ``committer`` and ``compaction``: where changes are committed and
    the log compacted (:class:`Service`). ``service``: one opened on ``db`` already (its
    log replayed before the server starts, :func:`~._server.serve`), which the application
    serves and closes instead of opening its own (``limits``, ``allow_private_webhooks``,
    ``committer`` and ``compaction`` are then its)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        running = service if service is not None else Service(
            db, tokens, join=join, providers=providers, lock=lock, limits=limits,
            allow_private_webhooks=allow_private_webhooks, committer=committer,
            compaction=compaction)
        app.state.service = running
        running.start()
        try:
            yield
        finally:
            await running.stop()

    table: dict[str, dict[str, Callable[[Request], Awaitable[Response]]]] = {
        "/expressions": {"POST": _route(post_expressions), "GET": _route(get_expressions)},
        "/expressions/{id}": {"GET": _route(get_expression),
                              "DELETE": _route(delete_expression)},
        "/events": {"POST": _route(post_events)},
        "/notifications": {"GET": _route(get_notifications),
                           "DELETE": _route(delete_notifications)},
        "/notifications/stream": {"GET": _route(stream_notifications, ticket=True)},
        "/notifications/stream/ticket": {"POST": _route(post_ticket)},
        "/graph": {"GET": _route(get_graph)},
        "/health": {"GET": _health},
        "/openapi.json": {"GET": _openapi},
        "/docs": {"GET": docs_page},
    }
    routes: list[BaseRoute] = [Route(path, _methods(handlers), methods=list(handlers))
                               for path, handlers in table.items()]
    app = Starlette(routes=routes + docs_routes(), lifespan=lifespan,
                    middleware=cors(cors_origins),
                    exception_handlers={HTTPException: _error, Exception: _error})
    app.state.tickets = Tickets()
    return app
