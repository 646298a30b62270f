"""SQLite in a process of its own: the writer's transactions committed beside it (issue 31,
item 10).

In a batch of 1,000 events the writer thread spent a third of its time or more in SQLite
(inserting the log row and the notifications, discarding under the retention quota,
compacting, checkpointing), time in which the GIL is free but the writer is not: the next
request waited for the commit of the last. Here the writer hands each change's statements
to a **committer process** (:func:`child`) and goes on with the next change while it
commits; a change is still answered only after its own commit (the committer's
acknowledgement, read by a thread of its own), so a kill loses nothing answered. A thread
was tried first and starved: each statement it ran waited for the GIL behind the writer's
Python for up to the switch interval.

The protocol: frames of an 8-byte length and a pickle, in order both ways. Each message
``(seq, kind, calls)`` runs :class:`~._db.Journal` methods in the child:

* ``txn`` -- a change (``begin``, the retention's discards, ``write``, which commits). If it
  fails, every later ``txn`` and ``derived`` message is refused with the same error until a
  ``reset``: they were computed by an engine that had applied the failed one.
* ``derived`` -- computed from the engine but not a change (a compaction, its mark of the
  log): refused after a failure, and its own failure leaves the log as it was (logged, not
  fatal).
* ``free`` -- independent of the engine (a webhook's outcome): always run; a failure logged.
* ``sync`` -- a call whose result the writer waits for (a count, a listing's discards).
* ``reset`` -- the writer has rebuilt, or is about to rebuild, its engine from the log.

Each message is acknowledged ``(seq, ok, payload)``: the calls' results, or the error as
``(class name, text)``. The child dies with its parent (``PR_SET_PDEATHSIG`` on Linux, and
the end of its input anywhere) and holds the database's lock file open with it, so that no
second service opens the database while a transaction of the first may still commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import logging
import os
import pickle
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

__all__ = ["CommitterGone", "Pipe", "PipedJournal", "Pending", "Writes", "child",
           "die_with_parent"]

_log = logging.getLogger("xmlevents.service")
_HEAD = struct.Struct("<Q")
#: The kinds of message a failed ``txn`` makes the child refuse until a ``reset``.
_REFUSED_AFTER_FAILURE = frozenset({"txn", "derived"})
#: The kinds whose failure starts the refusals.
_POISONS = frozenset({"txn"})


class CommitterGone(sqlite3.OperationalError):
    """The committer process ended (killed, or out of memory): the change was not applied;
    the writer starts a new one and rebuilds its engine from the log. A 503: retry."""


class Writes(Protocol):
    """What the writer thread's jobs call on their journal: a :class:`~._db.Journal` (the
    writer's own connection) or a :class:`PipedJournal` (the committer process)."""

    def begin(self) -> None: ...

    def abort(self) -> None: ...

    def write(self, entries: Sequence[tuple[str, str, dict[str, Any] | str]],
              notifications: Sequence[tuple[str, str, dict[str, Any] | str, str | None]],
              *, add: tuple[str, str, dict[str, Any]] | None = None,
              remove: str | None = None) -> list[int]: ...

    def discard_oldest(self, client: str, count: int) -> int: ...

    def purge(self) -> int: ...

    def replace_log(self, rows: Sequence[tuple[str, str, Any]]) -> None: ...

    def mark_log(self, token: int) -> None: ...

    def replace_log_through(self, token: int, path: str) -> None: ...

    def delivered(self, cursor: int) -> None: ...

    def retry(self, cursor: int, attempts: int, due: float) -> None: ...

    def delete_notifications(self, client: str, through: int) -> int: ...

    def expression_count(self, client: str) -> int: ...

    def retained(self) -> dict[str, int]: ...


def _dumps(message: object) -> bytes:
    """``message`` pickled without a memo (``Pickler.fast``): the writer's messages are trees
    of tuples, lists, dicts and strings, never cyclic, and the memo's bookkeeping was a third
    of pickling a change of 1,000 events (95 against 63 µs; 0.12 against 0.02 s for a log of
    100,000 signals as tuples). A string shared by many rows is written each time."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(message)
    return out.getvalue()


# --- the committer process ------------------------------------------------------------------

def child() -> None:
    """The committer process's main (``python -c`` with the database's path and the
    parent's pid): run each message's calls on one :class:`~._db.Journal`, acknowledge
    each, until the input ends or a ``close``."""
    die_with_parent(int(sys.argv[2]))
    # The acknowledgements go to the parent through a copy of stdout; stdout itself becomes
    # stderr, so that nothing printed (a warning) can corrupt a frame.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from ._db import Journal  # here: the parent checked the database, and timing it matters

    journal = Journal(sys.argv[1])
    read = sys.stdin.buffer.read
    failed: tuple[str, str] | None = None
    try:
        while True:
            head = read(_HEAD.size)
            if len(head) < _HEAD.size:
                return
            seq, kind, calls = pickle.loads(read(_HEAD.unpack(head)[0]))
            if kind == "close":
                _send(out, (seq, True, None))
                return
            if kind == "reset":
                failed = None
                _send(out, (seq, True, None))
                continue
            if failed is not None and kind in _REFUSED_AFTER_FAILURE:
                _send(out, (seq, False, failed))
                continue
            try:
                results = [getattr(journal, name)(*args, **kwargs)
                           for name, args, kwargs in calls]
            except Exception as exc:  # the writer's to report; the child goes on
                journal.abort()
                error = (type(exc).__name__, str(exc))
                if kind in _POISONS:
                    failed = error
                _send(out, (seq, False, error))
                continue
            _send(out, (seq, True, None if kind == "txn" else results))
    finally:
        journal.close()


def die_with_parent(parent: int) -> None:
    """Ask Linux to kill this process when its parent ends (``kill -9`` included): a
    transaction of a dead service must not commit after another service has opened the
    database. Elsewhere the end of the input stops the child after its current message."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request above
        os._exit(1)


#: The pipe's buffer asked for (Linux; capped by ``/proc/sys/fs/pipe-max-size``): a few
#: changes of 1,000 events, so that the writer does not wait while the child commits the last.
PIPE_BUFFER = 1 << 20


def _widen(pipe: IO[bytes]) -> None:
    """Make ``pipe``'s buffer :data:`PIPE_BUFFER` where the OS lets it (64 kB otherwise:
    the writer's ``write`` of a change's 300 kB waited for the child's commit before)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return
    for size in (PIPE_BUFFER, PIPE_BUFFER // 4):
        try:
            fcntl.fcntl(pipe.fileno(), setsize, size)
            return
        except OSError:  # over the limit for this user
            continue


def _send(out: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    out.write(_HEAD.pack(len(data)) + data)
    out.flush()


def _error(payload: tuple[str, str]) -> sqlite3.Error:
    """The child's error as the parent raises it: the class SQLite's module has of that
    name (its text is what :func:`~._app._database_problem` reads), else a DatabaseError."""
    name, text = payload
    if name == CommitterGone.__name__:
        return CommitterGone(text)
    kind = getattr(sqlite3, name, None)
    if isinstance(kind, type) and issubclass(kind, sqlite3.Error):
        return kind(text)
    return sqlite3.DatabaseError(f"{name}: {text}")


# --- the writer's side ----------------------------------------------------------------------

@dataclass(eq=False)
class Pending:
    """A writer job's change on its way to the committer: settled (its result or error to
    its request, its hooks run) once both the job has returned and its commit is
    acknowledged, whichever comes last."""

    #: Hands the outcome to the request, from the acknowledgements' thread.
    settle: Callable[[Any, BaseException | None], None]
    seq: int | None = None
    #: Run after the commit (waking the streams), in whichever thread completes it.
    hooks: list[Callable[[], None]] = field(default_factory=list)
    returned: bool = False
    acked: bool = False
    done: bool = False
    result: Any = None
    error: BaseException | None = None


class Pipe:
    """The writer thread's handle on its committer process (see the module).

    ``on_failure`` is called, in the acknowledgements' thread, with the error of a change
    that failed after the writer had applied it to its engine (the writer marks the engine
    stale and rebuilds it). ``keep_fd``: a file descriptor the child holds open too (the
    database's lock)."""

    def __init__(self, db: str, on_failure: Callable[[BaseException], None],
                 keep_fd: int | None = None) -> None:
        self.db = db
        self._on_failure = on_failure
        self._keep = () if keep_fd is None else (keep_fd,)
        self._lock = threading.Lock()
        self._seq = 0
        #: The job the writer thread runs now (:meth:`begin_job`).
        self.current: Pending | None = None
        self._start()

    def _start(self) -> None:
        env = dict(os.environ)
        # The child imports this package as the parent found it (an editable install, a
        # frozen copy on PYTHONPATH for a benchmark).
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        #: seq -> the job's Pending (txn), a _Waiter (sync), or None (acknowledged only).
        self._waiting: dict[int, Pending | _Waiter | None] = {}
        self._gone = False
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from xmlevents.service._commit import child; child()",
             self.db, str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            pass_fds=self._keep)
        assert self._proc.stdin is not None
        self._in: IO[bytes] = self._proc.stdin
        _widen(self._in)
        self._acks = threading.Thread(target=self._read, args=(self._proc,),
                                      name="xmlevents-acks", daemon=True)
        self._acks.start()

    @property
    def pid(self) -> int:
        """The committer process's pid."""
        return self._proc.pid

    # --- sending ----------------------------------------------------------------------

    def send(self, kind: str, calls: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]],
             waiter: Pending | _Waiter | None = None) -> None:
        """Send a message (from the writer thread only), acknowledged to ``waiter``."""
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._waiting[seq] = waiter
            if isinstance(waiter, Pending):
                waiter.seq = seq
            gone = self._gone
        data = _dumps((seq, kind, calls))
        try:
            if gone:
                raise BrokenPipeError("no committer process")
            self._in.write(_HEAD.pack(len(data)))
            self._in.write(data)
            self._in.flush()
        except (OSError, ValueError) as exc:  # ended: refused, whoever fails it first
            self._acked(seq, False, ("CommitterGone", f"the committer process ended ({exc})"))

    def change(self, calls: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
        """Send the current job's change (``txn``): its request is answered once it is
        committed."""
        self.send("txn", calls, self.current)

    def call(self, name: str, *args: Any, kind: str = "sync") -> Any:
        """Run ``Journal.name(*args)`` in the child after everything sent before, and wait
        for its result (or raise its error)."""
        waiter = _Waiter()
        self.send(kind, [(name, args, {})], waiter)
        waiter.done.wait()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result[0] if waiter.result else None

    def reset(self) -> None:
        """Wait until the child has acknowledged everything sent, and end its refusals
        after a failed change; a child that has ended is replaced by a new one."""
        for _ in range(2):
            if self._gone or self._proc.poll() is not None:
                self._proc.kill()
                self._acks.join()
                self._start()
            try:
                self.call("reset", kind="reset")
                return
            except CommitterGone:  # ended meanwhile: once more
                continue
        raise CommitterGone("the committer process ends as soon as it starts")

    def close(self) -> None:
        """Let the child finish what was sent, and end it."""
        if not self._gone:
            with contextlib.suppress(sqlite3.Error):
                self.call("close", kind="close")
        with contextlib.suppress(OSError):
            self._in.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._acks.join()

    # --- the writer's jobs ------------------------------------------------------------

    def begin_job(self, settle: Callable[[Any, BaseException | None], None]) -> Pending:
        """The writer thread starts a job; ``settle`` hands its outcome to its request if
        the commit comes after the job's end."""
        self.current = Pending(settle)
        return self.current

    def end_job(self, pending: Pending, result: Any, error: BaseException | None
                ) -> tuple[Any, BaseException | None] | None:
        """The job of ``pending`` returned ``result`` or raised ``error``: its outcome if it
        is settled now (its hooks run), else None (settled when its commit is
        acknowledged)."""
        self.current = None
        with self._lock:
            pending.returned, pending.result = True, result
            if error is not None:
                pending.error = error
            ready = pending.error is not None or pending.seq is None or pending.acked
            pending.done = ready
        if not ready:
            return None
        if pending.error is None:
            for hook in pending.hooks:
                hook()
        return pending.result, pending.error

    def after_commit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` once the current job's change is committed (at once if no job of
        the writer's is running)."""
        pending = self.current
        if pending is None:
            hook()
        else:
            pending.hooks.append(hook)

    # --- acknowledgements -------------------------------------------------------------

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        """The acknowledgements' thread: settle each as it comes; when the child ends, fail
        what it had not acknowledged."""
        assert proc.stdout is not None
        read = proc.stdout.read
        while True:
            head = read(_HEAD.size)
            if len(head) < _HEAD.size:
                break
            seq, ok, payload = pickle.loads(read(_HEAD.unpack(head)[0]))
            self._acked(seq, ok, payload)
        code = proc.wait()
        with self._lock:
            self._gone = True
            left = sorted(self._waiting)
        for seq in left:
            self._acked(seq, False, ("CommitterGone", f"the committer process ended "
                                     f"(status {code}) before this change was committed"))

    def _acked(self, seq: int, ok: bool, payload: Any) -> None:
        error = None if ok else _error(payload)
        finish = False
        with self._lock:
            if seq not in self._waiting:
                return  # failed already (the child's end and a send's both)
            waiter = self._waiting.pop(seq)
            if isinstance(waiter, Pending):
                waiter.acked = True
                if error is not None and waiter.error is None:
                    waiter.error = error
                finish = waiter.returned and not waiter.done
                waiter.done = waiter.done or finish
        if error is not None and (isinstance(waiter, Pending)
                                  or isinstance(error, CommitterGone)):
            self._on_failure(error)  # the engine is ahead of the log, or no child runs
        if isinstance(waiter, _Waiter):
            waiter.error, waiter.result = error, payload
            waiter.done.set()
            return
        if error is not None and not isinstance(waiter, Pending):
            _log.warning("the database did not take a change: %s", error)
        if isinstance(waiter, Pending) and finish:
            if waiter.error is None:
                for hook in waiter.hooks:
                    hook()
            waiter.settle(waiter.result, waiter.error)


class _Waiter:
    """A ``sync`` message's result, waited for by the writer thread."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.result: Any = None


class PipedJournal:
    """The writer's journal when SQLite runs in the committer process: the methods the
    writer's jobs call on :class:`~._db.Journal`, sent in order (see the module). A change's
    statements, from :meth:`begin` to :meth:`write`, go as one message; :meth:`write` returns
    before the commit, which the job's request waits for (:meth:`Pipe.end_job`)."""

    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] | None = None

    def begin(self) -> None:
        self._calls = [("begin", (), {})]

    def abort(self) -> None:
        self._calls = None

    def discard_oldest(self, client: str, count: int) -> int:
        """Queued with the change: the count the quota asked for, which is the count
        discarded while the writer's count of each client's notifications is exact."""
        self._queue("discard_oldest", client, count)
        return count

    def write(self, entries: Sequence[tuple[str, str, dict[str, Any] | str]],
              notifications: Sequence[tuple[str, str, dict[str, Any] | str, str | None]],
              *, add: tuple[str, str, dict[str, Any]] | None = None,
              remove: str | None = None) -> list[int]:
        calls, self._calls = self._calls or [], None
        calls.append(("write", (entries, notifications), {"add": add, "remove": remove}))
        self.pipe.change(calls)
        return []

    def _queue(self, name: str, *args: Any) -> None:
        if self._calls is None:
            self._calls = []
        self._calls.append((name, args, {}))

    # a compaction: computed from the engine, refused after a failed change
    def purge(self) -> int:
        self.pipe.send("derived", [("purge", (), {})])
        return 0

    def replace_log(self, rows: Sequence[tuple[str, str, Any]]) -> None:
        self.pipe.send("derived", [("replace_log", (list(rows),), {})])

    def mark_log(self, token: int) -> None:
        self.pipe.send("derived", [("mark_log", (token,), {})])

    def replace_log_through(self, token: int, path: str) -> None:
        self.pipe.send("derived", [("replace_log_through", (token, path), {})])

    # a webhook's outcome: the engine's state does not enter it
    def delivered(self, cursor: int) -> None:
        self.pipe.send("free", [("delivered", (cursor,), {})])

    def retry(self, cursor: int, attempts: int, due: float) -> None:
        self.pipe.send("free", [("retry", (cursor, attempts, due), {})])

    # waited for: after everything sent before
    def delete_notifications(self, client: str, through: int) -> int:
        return int(self.pipe.call("delete_notifications", client, through))

    def expression_count(self, client: str) -> int:
        return int(self.pipe.call("expression_count", client))

    def retained(self) -> dict[str, int]:
        return dict(self.pipe.call("retained"))

