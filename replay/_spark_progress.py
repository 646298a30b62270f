"""Spark's progress, read from its status tracker in a thread (issue 15).

Spark knows how many tasks each stage has and how many are done, not how many versions or
documents a task holds (the apply stage's tasks are groups of documents), and it plans a
job's stages as it goes. So :class:`SparkTasks` reports what it can say truthfully: for each
part of the run (``replay``, ``writing``), the tasks of the Spark stages it has seen running,
done of all — a total that grows as new stages start. Stages that start and end between two
polls (a fraction of a second) are not seen.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING

from ._progress import ReplayProgress

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["SparkTasks"]


class SparkTasks:
    """Polls ``sc``'s status tracker every ``interval`` seconds while in a ``with`` block and
    reports the tasks of the current part to ``progress`` (:meth:`ReplayProgress.tasks`)."""

    def __init__(self, sc: SparkContext, progress: ReplayProgress, interval: float = 0.25
                 ) -> None:
        self.sc, self.progress, self.interval = sc, progress, interval
        self.part = "replay"
        self._stages: dict[int, tuple[int, int]] = {}  # stage id -> (tasks, done)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="xmlevents spark progress",
                                        daemon=True)

    def phase(self, part: str) -> None:
        """The run goes on to another part: its stages are counted from now on."""
        self.poll()
        with self._lock:
            self.part, self._stages = part, {}

    def poll(self) -> None:
        """Read the running stages once and report them (never raises: a display must not
        fail the run, and Spark may be stopping)."""
        with self._lock:
            try:
                tracker = self.sc.statusTracker()
                active = set(tracker.getActiveStageIds())
                for stage in active | set(self._stages):
                    info = tracker.getStageInfo(stage)
                    tasks = info.numTasks if info is not None else self._stages[stage][0]
                    # A stage no longer running is over (done, or skipped: its result cached).
                    done = (info.numCompletedTasks if info is not None and stage in active
                            else tasks)
                    self._stages[stage] = (tasks, done)
            except Exception:  # the status of a stopping Spark: nothing to show
                return
            if self._stages:
                self.progress.tasks(self.part, sum(d for _, d in self._stages.values()),
                                    sum(t for t, _ in self._stages.values()), len(active))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def __enter__(self) -> SparkTasks:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()
