"""What a replay run reports as it goes (issue 15): the :class:`ReplayProgress` protocol that
:func:`~._local.run_local` and :func:`~._spark_job.run_spark` report to, and :class:`Silent`,
their default. The displays (rich bars on a terminal, stage lines elsewhere) are the command
line's (``xmlevents replay``, issue 28): a Python caller passes its own, or none.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["ReplayProgress", "Silent"]


class ReplayProgress(Protocol):
    """What a replay run reports as it goes; every method returns at once."""

    #: Whether the display shows Spark's tasks (a run then polls Spark's status for them).
    shows_tasks: bool

    def elapsed(self) -> float:
        """Seconds since the run started."""

    def stage(self, message: str) -> None:
        """A step of the run begins (``reading ...``, ``writing ...``)."""

    def versions(self, documents: int, versions: int) -> None:
        """The in-process replay begins: this many documents and versions in all."""

    def document(self, name: str, versions: int) -> None:
        """The next document begins, with this many versions."""

    def version(self) -> None:
        """One version is done (replayed, or reported as an error)."""

    def tasks(self, part: str, done: int, total: int, running: int) -> None:
        """The tasks of the Spark stages of one part of the run (``replay``, ``writing``) seen
        so far: ``done`` of ``total``, ``running`` stages active now."""

    def close(self) -> None:
        """The run is over: the display is put away (bars stay as they ended)."""


class Silent:
    """A progress that shows nothing (the runs' default); it keeps the time since it was made."""

    shows_tasks = False

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stage(self, message: str) -> None:
        pass

    def versions(self, documents: int, versions: int) -> None:
        pass

    def document(self, name: str, versions: int) -> None:
        pass

    def version(self) -> None:
        pass

    def tasks(self, part: str, done: int, total: int, running: int) -> None:
        pass

    def close(self) -> None:
        pass
