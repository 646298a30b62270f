"""Progress of ``xmlevents replay`` on stderr (issue 15): rich bars on a terminal, stage lines
elsewhere, nothing when quiet. The command line's, not the replay's (issue 28): a replay run
(:func:`xmlevents.replay.run_local`, :func:`xmlevents.replay.run_spark`) reports to any
:class:`xmlevents.replay.ReplayProgress`; these are the displays the command picks from
(:func:`progress_for`):

* a terminal: ``rich`` bars — in process, one over all versions and one over the current
  document's, each with its rate and the time left; on Spark, one per part of the run over the
  tasks of the Spark stages seen so far; the stage lines above them;
* not a terminal (a file, a pipe, a CI log): the stage lines only, ``[  1.2 s] message``;
* quiet: nothing (the command prints its summary on stdout all the same).

rich is imported when a replay runs, never by ``detect`` or ``graph``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from xmlevents.replay import Silent

if TYPE_CHECKING:
    from xmlevents.replay import ReplayProgress

__all__ = ["StageLines", "RichProgress", "progress_for"]


class StageLines(Silent):
    """Stage lines on ``err``, each with the time since the start; nothing else (``quiet``:
    not even those)."""

    def __init__(self, err: TextIO, quiet: bool = False) -> None:
        super().__init__()
        self.err, self.quiet = err, quiet

    def stage(self, message: str) -> None:
        if not self.quiet:
            self.err.write(f"[{self.elapsed():6.1f} s] {message}\n")
            self.err.flush()


class RichProgress(StageLines):
    """``rich`` bars on a terminal, the stage lines printed above them."""

    shows_tasks = True

    def __init__(self, err: TextIO) -> None:
        super().__init__(err)
        self.console = Console(file=err)
        self._bars: Progress | None = None  # started on the first bar (not while Spark starts)
        self._all: TaskID | None = None
        self._doc: TaskID | None = None
        self._parts: dict[str, TaskID] = {}

    def _progress(self) -> Progress:
        if self._bars is None:
            self._bars = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[unit]}"), _Rate(), TimeRemainingColumn(),
                TextColumn("left,"), TimeElapsedColumn(), TextColumn("in all"),
                console=self.console,
                redirect_stdout=False, redirect_stderr=False)
            self._bars.start()
        return self._bars

    def stage(self, message: str) -> None:
        self.console.print(f"[{self.elapsed():6.1f} s] {message}", markup=False,
                           highlight=False)

    def versions(self, documents: int, versions: int) -> None:
        bars = self._progress()
        self._all = bars.add_task(f"{documents:,} document{'' if documents == 1 else 's'}",
                                  total=versions, unit="versions")

    def document(self, name: str, versions: int) -> None:
        bars = self._progress()
        if self._doc is None:
            self._doc = bars.add_task(name, total=versions, unit="versions")
        else:
            bars.reset(self._doc, total=versions, description=name)

    def version(self) -> None:
        if self._bars is not None:
            for task in (self._all, self._doc):
                if task is not None:
                    self._bars.advance(task)

    def tasks(self, part: str, done: int, total: int, running: int) -> None:
        bars = self._progress()
        described = f"Spark {part}" + (f" ({running} running)" if running else "")
        task = self._parts.get(part)
        if task is None:
            self._parts[part] = bars.add_task(described, total=total, completed=done,
                                              unit="tasks")
        else:
            bars.update(task, total=total, completed=done, description=described)

    def close(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None


class _Rate(ProgressColumn):
    """The rate of a bar: ``12.3/s`` (rich's own speed column counts bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f}/s")


def progress_for(err: TextIO, quiet: bool) -> ReplayProgress:
    """The display for ``err``: nothing if ``quiet``, bars if it is a terminal, else stage
    lines."""
    if quiet:
        return StageLines(err, quiet=True)
    isatty = getattr(err, "isatty", None)
    if isatty is not None and isatty():
        return RichProgress(err)
    return StageLines(err)
