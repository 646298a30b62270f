"""The cyclic garbage collector paused around work that makes no reference cycles.

The stream's run (a tuple per element, a few objects per match), a batch of its matches, and
the service's replay of its log allocate many objects that reference counting frees; each
700 allocations would otherwise start a collection, some of them over every object still
held (a tenth of a query's time, a quarter of a start at 10,000 expressions: issues 20, 31
and 33). Paused, not disabled: the collector is on again after the work, if it was before.
"""

from __future__ import annotations

import gc
from types import TracebackType

__all__ = ["collector_paused"]


# lower case, as contextlib's context managers are
class collector_paused:
    """Pause the cyclic garbage collector for the ``with`` block; as it was after it (also
    when the block raises). A class, not a generator: a generator's end, right after the
    collector is on again, allocates its ``StopIteration``, which started a collection over
    everything the block had allocated at every exit (132 collections where 2 were due on a
    50 MiB TEI-like file, 12% of the held query's time)."""

    __slots__ = ("_paused",)

    def __enter__(self) -> None:
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._paused:
            gc.enable()
