"""One service per database (issue 31, item 5): an OS lock on a file beside the database.

Two processes serving one database would each hold an engine rebuilt from the log and then
diverge: an expression registered through one is unknown to the other, and detections depend
on which process got which event. SQLite's own locks only keep their transactions apart, so
the service takes an exclusive ``flock`` on ``DB.lock`` for as long as it runs. The OS
releases it when the process ends however it ends (a ``kill -9`` included), so a stale lock
cannot outlive its holder; the file itself stays (deleting it would let a second process lock
a new file while the first still holds the old one). The holder writes its pid into the file,
and a refused process names it.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3

__all__ = ["DatabaseInUse", "DatabaseLock"]


class DatabaseInUse(sqlite3.OperationalError):
    """The database is served by another process (or another service of this one).

    An :class:`sqlite3.OperationalError`, like SQLite's "database is locked", so that
    whatever reports a database the service cannot use (``xmlevents serve``: one line,
    status 3) reports this one too."""

    def __init__(self, db: str, lock: str, pid: int | None) -> None:
        holder = f"pid {pid}" if pid is not None else "a process whose pid is not written yet"
        super().__init__(f"another xmlevents service ({holder}) is serving it; one process "
                         f"per database (the lock is held on {lock})")
        self.db = db
        self.lock = lock
        self.pid = pid


class DatabaseLock:
    """An exclusive lock on ``DB.lock``, taken at construction, held until :meth:`release`
    (or the end of the process).

    Raises:
        DatabaseInUse: another open lock holds it (another process, or another
            :class:`DatabaseLock` of this one: ``flock`` locks belong to open files).
        OSError: the lock file cannot be created (a read-only folder).
    """

    def __init__(self, db: str) -> None:
        self.db = db
        self.path = self.path_of(db)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(self._fd)
            os.close(self._fd)
            self._fd = None
            raise DatabaseInUse(db, self.path, pid) from None
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    @staticmethod
    def path_of(db: str) -> str:
        """The lock file of the database ``db``: ``DB.lock``, beside it."""
        return os.path.abspath(db) + ".lock"

    @property
    def held(self) -> bool:
        """Whether this lock is still held (not released)."""
        return self._fd is not None

    def fileno(self) -> int | None:
        """The lock file's descriptor while held (a child that must hold the lock with this
        process keeps it open: :mod:`._commit`), else None."""
        return self._fd

    def release(self) -> None:
        """Give the lock up (closing the file releases it); a second call does nothing."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def _pid_in(fd: int) -> int | None:
    """The pid the holder wrote, or None if it has not written it yet (the moment between
    its lock and its write) or the file holds something else."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None
