"""Windows: stored events that can no longer complete a composite are dropped, observably.

``E with within=N`` bounds an operator — and every operator beneath it — to composites that
span fewer than ``N`` ticks: ``end - start < N``, so ``within=1`` only combines events of one
tick and ``within=N`` events of ``N`` consecutive ticks. A stored event that started at tick
``s`` can then only take part in composites detected before tick ``s + N``; at that tick it
*expires*: it is dropped before anything of the tick is processed, so memory follows the
window, not the stream. A multiplicity node's integration starts over when its integrating
composite would outgrow the window, and the child events it waits for expire the same way.

What a window drops is reported, grouped by operator and group, as an :class:`Expired`: the
partial matches that timed out (Flink's timed-out partial matches), e.g. to alert on an item
that was never completed. A composite a child raises that already spans the window is dropped
when it arrives, and reported the same way.

A window may also be a duration of event time (``within=30s``, a :class:`~.ast.Duration`):
composites then span less than it in the events' ``time`` (seconds), and a stored event that
started at time ``t`` is dropped when the events reach ``t + duration``. Both kinds may bound
one operator (:class:`Bounds`).

One :class:`Windows` clock serves a whole event graph: a heap of expiry ticks and one of
expiry times, so an event costs ``O(log n)`` per stored event that expires with it and nothing
when none does.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._events import Event
from ._paths import PathInstance
from .ast import Duration

if TYPE_CHECKING:
    from ._operator import OperatorNode

__all__ = ["Expired", "Windows", "Bounds"]


@dataclass(frozen=True, slots=True)
class Bounds:
    """The windows over one operator: in ticks, and in milliseconds of event time (each None
    where none applies). A node is bounded by its own ``within`` and every ancestor's (and the
    graph's): the smallest of each kind."""

    ticks: int | None = None
    ms: int | None = None

    def tighten(self, within: int | Duration | None) -> Bounds:
        """These bounds and ``within`` together."""
        if within is None:
            return self
        if isinstance(within, Duration):
            ms = within.ms if self.ms is None else min(self.ms, within.ms)
            return Bounds(self.ticks, ms)
        ticks = within if self.ticks is None else min(self.ticks, within)
        return Bounds(ticks, self.ms)


@dataclass(frozen=True, slots=True)
class Expired:
    """A partial match a window dropped.

    Attributes:
        definition: the definition whose operator held it.
        node: that operator, as text (``ins(item/price) & ins(item/quantity)``).
        doc: the document of its group.
        group: the path instance its events were grouped by (hierarchical context), or None
            (plain contexts: one group per document).
        events: what had arrived and was still stored there, oldest first.
        tick: the tick at which it was dropped.
    """

    definition: str
    node: str
    doc: str | None
    group: PathInstance | None
    events: tuple[Event, ...]
    tick: int


class Windows:
    """The window clock of one event graph: when each stored event expires (see the module)."""

    __slots__ = ("_seq", "dropped", "heap", "listening", "now", "timed")

    def __init__(self) -> None:
        #: Expiries in event time (windows given as durations): (due, seq, node, key, child,
        #: event), the earliest first; ``now`` is the time of the event being processed.
        self.timed: list[tuple[float, int, OperatorNode, Hashable, int, Event]] = []
        self.now = -math.inf
        #: Whether anyone subscribed to the reports (else they are not built).
        self.listening = False
        #: (expiry tick, sequence, node, group key, child, event), the earliest first.
        self.heap: list[tuple[float, int, OperatorNode, Hashable, int, Event]] = []
        self._seq = 0
        #: What was dropped and not yet reported (:meth:`take`).
        self.dropped: list[Expired] = []

    def schedule(self, node: OperatorNode, key: Hashable, child: int, event: Event,
                 at: int) -> None:
        """``event``, stored by ``node`` for child ``child`` in group ``key``, expires at
        tick ``at``."""
        self._seq += 1
        heapq.heappush(self.heap, (at, self._seq, node, key, child, event))

    def schedule_time(self, node: OperatorNode, key: Hashable, child: int, event: Event,
                      due: float) -> None:
        """``event`` expires when events reach time ``due`` (a duration window)."""
        self._seq += 1
        heapq.heappush(self.timed, (due, self._seq, node, key, child, event))

    def advance_time(self, now: float, tick: int) -> None:
        """The events have reached time ``now`` (at ``tick``): drop what expires by then."""
        self.now = now
        self._drain(self.timed, now, tick)

    def advance(self, tick: int) -> None:
        """Drop what expires by ``tick`` (before anything of the tick is processed); what was
        still stored is reported, by group."""
        self._drain(self.heap, tick, tick)

    def _drain(self, heap: list[Any], until: float, tick: int) -> None:
        """Pop and drop every entry of ``heap`` due by ``until``; report at ``tick``."""
        if not heap or heap[0][0] > until:
            return
        pop = heapq.heappop
        if not self.listening:
            while heap and heap[0][0] <= until:
                _, _, node, key, child, event = pop(heap)
                node.expire(key, child, event)
            return
        dropped: dict[tuple[int, Hashable], tuple[OperatorNode, Hashable, list[Event]]] = {}
        while heap and heap[0][0] <= until:
            _, _, node, key, child, event = pop(heap)
            if node.expire(key, child, event):
                dropped.setdefault((id(node), key), (node, key, []))[2].append(event)
        for node, key, events in dropped.values():
            self.dropped += node.expired(key, events, tick)

    def take(self) -> list[Expired]:
        """The reports of what was dropped since the last call."""
        out, self.dropped = self.dropped, []
        return out

    def forget(self, nodes: Any) -> None:
        """Stop the clock for ``nodes`` (their trees were removed or replaced)."""
        gone = {id(n) for n in nodes}
        # In place: the graph keeps a reference to the heap for its per-event check.
        for heap in (self.heap, self.timed):
            heap[:] = [entry for entry in heap if id(entry[2]) not in gone]
            heapq.heapify(heap)
