"""The log's compactions in a child process while the service runs (issue 31, item 10).

A compaction walks every instance the engine stores and writes the live state as log rows
(:func:`~._replay.look`): in a long run of batches, with some 300,000 signals live, two
seconds of the writer's time every ten, a seventh of what the service could serve, and a
stall of every request behind it. Here the writer **forks**: the child has the engine as it
was at that instant (copy-on-write pages, nothing copied by hand), makes the look on the
other core and writes the rows to a file beside the database, while the writer goes on
with the next change. The log's last row at the fork is marked (:meth:`Journal.mark_log`,
in order with the changes), and once the child is done the committer replaces the rows up
to the mark with the file's (:meth:`Journal.replace_log_through`): the rows logged since
replay after them, as they did after the rows replaced — the state a replay builds is the
same, as :func:`~._replay.compact`'s argument goes.

The writer forks between two of its jobs, so the engine is whole in the child; the child
runs no other thread's code, takes no lock another thread may hold (it imports nothing,
logs nothing, and ends with ``os._exit``), ignores the terminal's Ctrl-C and SIGTERM (the
service's stop waits for it), and dies with its parent. A change that fails
after the fork rebuilds the writer's engine (``Service._fresh``), which cancels the
compaction: the child is killed, its file removed; a mark the failure left unused does no
harm. Where ``os.fork`` does not exist, or with ``Service(compaction="inline")``, the writer
compacts in its own thread as before (:func:`~._replay.compact`).
"""

from __future__ import annotations

import contextlib
import gc
import glob
import itertools
import logging
import os
import signal
import warnings
from dataclasses import dataclass

from ._commit import Writes, die_with_parent
from ._db import write_rows
from ._replay import Replayed, look

__all__ = ["Compactions", "leftovers"]

_log = logging.getLogger("xmlevents.service")
#: The child's answer on its pipe: the live state's entries, and 1 if it wrote the rows.
_FORMAT = "{live} {wrote}"
#: The signals the child starts with blocked: a terminal's Ctrl-C, a stop's SIGTERM.
_STOPS = {signal.SIGINT, signal.SIGTERM}


@dataclass
class _Running:
    """A child making a look: its pid, the read end of its answer's pipe, the file it
    writes, the log's mark, and the log's entries when it forked."""

    pid: int
    answer: int
    path: str
    token: int
    entries: int


class Compactions:
    """The background compactions of one service's log (the writer thread's: every method
    is called from it, or after it has stopped)."""

    def __init__(self, db: str) -> None:
        self.db = db
        self._tokens = itertools.count(1)
        self._running: _Running | None = None
        #: Compactions made, and looks that found the log not worth compacting.
        self.compacted = 0
        self.looked = 0
        leftovers(db)

    @property
    def running(self) -> bool:
        """Whether a child is making a look now."""
        return self._running is not None

    def start(self, writes: Writes, state: Replayed) -> None:
        """Fork a child that looks at ``state`` (the engine of the log as it is: after a
        commit) and writes the live log if it is worth it; the log marked at this point."""
        assert self._running is None
        writes.purge()
        token = next(self._tokens)
        writes.mark_log(token)
        path = f"{self.db}.compact-{os.getpid()}-{token}"
        read, write = os.pipe()
        parent = os.getpid()
        # Ctrl-C reaches a terminal's whole process group: the child starts with it (and
        # SIGTERM) blocked, so that only its parent ends it (the service's stop waits for
        # it); blocked in this thread only, where Python's handlers never run
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        pid = -1
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork() in a process with threads: the child here
                # runs no code of another thread's and takes none of their locks (see the
                # module)
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:  # no fork (out of memory, of processes): the mark goes unused
            os.close(read)
            os.close(write)
            raise
        finally:
            if pid != 0:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if pid == 0:  # pragma: no cover - the child; its outcome is what the tests check
            os.close(read)
            _child(state, path, write, parent)
        os.close(write)
        self._running = _Running(pid, read, path, token, state.entries)

    def poll(self, writes: Writes, state: Replayed, *, wait: bool = False) -> None:
        """If the child has ended (``wait``: once it has), take its outcome: the log's rows
        up to the mark replaced with its file's, the counts of ``state`` updated."""
        run = self._running
        if run is None:
            return
        pid, status = os.waitpid(run.pid, 0 if wait else os.WNOHANG)
        if pid == 0:
            return
        self._running = None
        with open(run.answer, "rb") as f:
            answer = f.read().split()
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or len(answer) != 2:
            _log.warning("the log was not compacted: its child process ended with status %s",
                         status)
            _remove(run.path)
            _remove(run.path + ".part")
            state.looked = state.entries
            return
        live, wrote = int(answer[0]), answer[1] == b"1"
        since = state.entries - run.entries
        state.live = live
        if not wrote:
            state.looked = run.entries
            self.looked += 1
            return
        writes.replace_log_through(run.token, run.path)  # the committer removes the file
        state.entries, state.looked = live + since, live
        self.compacted += 1
        _log.info("log compacted: %d entries replayed, %d kept (%d live expressions)",
                  run.entries, live, len(state.registered))

    def cancel(self) -> None:
        """Kill a running child and remove its file (the writer's engine is being rebuilt,
        or the service stops)."""
        run, self._running = self._running, None
        if run is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(run.pid, signal.SIGKILL)
        os.waitpid(run.pid, 0)
        os.close(run.answer)
        _remove(run.path)
        _remove(run.path + ".part")


def _child(state: Replayed, path: str, answer: int, parent: int) -> None:
    """The forked child: the look, its rows to ``path`` (written whole, then renamed), its
    answer to the pipe ``answer``; never returns."""
    code = 1
    try:
        gc.disable()  # it ends soon, and the collector would copy every page it walks
        die_with_parent(parent)
        live, rows = look(state)
        if rows is not None:
            write_rows(path + ".part", rows)
            os.rename(path + ".part", path)
        os.write(answer, _FORMAT.format(live=live, wrote=int(rows is not None)).encode())
        code = 0
    finally:
        os._exit(code)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def leftovers(db: str) -> list[str]:
    """Remove the files of compactions a stopped service left beside ``db`` (killed while a
    child wrote, or a replacement refused); the files removed."""
    found = glob.glob(glob.escape(db) + ".compact-*")
    for path in found:
        _remove(path)
    return found
