"""The multiplicity operator ×[l,u] with integrative semantics (seed 000, section 3.2).

Per path instance of its path type, the l-th child event raises a composite event; each
further one raises a composite integrating the previous one's constituents while that one is
*unconsumed*, and the previous one is *waived*: taken back from wherever it is stored.
Integration starts over when ``u`` is reached or the integrating event was consumed. With
``l = 0`` the creation of a path instance of the node's path type raises a composite without
constituents (Example 16), and an event at that instance raises a new one when the last one
was consumed (rule (iv) of processTree, section 4). The Snoop context plays no part.

The bookkeeping lives here and nowhere else: a :class:`_Run` per path instance (the
integrating composite and what arrived since integration started over), and the answer to
"is it still unconsumed?" Unconsumed means held back by this node, raised in this tick, stored
by a consumer that received it (the parent operator, or for a tree's root the nodes of the trees
that reuse it), or a constituent of a potential event a consumer holds back. Consumers are
asked, and waive, through their own methods (:meth:`~._operator.OperatorNode.unconsumed`,
:meth:`~._operator.OperatorNode.waive`): no node edits another's lists. An event no consumer
received stays unconsumed, so a definition nobody reuses keeps integrating, and one reused by a
definition added after the event was raised too: nothing consumed it (issue 13's live graph).

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 3.2, 4.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from . import ast
from ._contexts import Before, remove
from ._definitions import OperatorSpec
from ._events import (
    CompositeEvent,
    CompositeEventType,
    Event,
    Op,
    PrimitiveEvent,
    PrimitiveEventType,
    _new,
)
from ._grouping import NULL
from ._operator import OperatorNode, TreeOptions
from ._termination import Immediate
from ._window import Bounds

if TYPE_CHECKING:
    from ._tree import EventTree

__all__ = ["MultNode", "EarliestMult", "WATCH", "specialise_mult"]

#: The child index of a multiplicity node's watch leaf (rule (iv): ``*(pt)`` of its own type).
WATCH = -1

# Where an unconsumed integrating composite is: held by the node itself, raised in this tick,
# or (a consumer node, its child index).
_OWN = "own"
_RAISED = "raised"
_Place = str | tuple[OperatorNode, int]


class _Run:
    """A multiplicity node's state for one path instance: the integrating composite event."""

    __slots__ = ("cur", "seen", "tick", "waiting")

    def __init__(self) -> None:
        self.cur: CompositeEvent | None = None
        self.tick = -1  # the tick ``cur`` was raised or held at
        # The node's consumers when ``cur`` was raised (the list object, replaced whenever
        # the graph changes): only those received it, so only they can have consumed it.
        self.seen: list[tuple[OperatorNode, int]] = []
        self.waiting: list[Event] = []  # child events since integration started over


class MultNode(OperatorNode):
    """The multiplicity operator (see the module).

    ``consumers`` lists the (operator node, child index) pairs that store this node's events:
    its parent, or for a tree's root, the leaves' parents in the trees that reuse it.
    """

    __slots__ = ("_sweep_at", "consumers", "high", "low", "runs")

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before, bounds: Bounds | None = None) -> None:
        super().__init__(spec, tree, options, before, bounds)
        expr = spec.expr
        assert isinstance(expr, ast.Mult)
        self.low = expr.low
        self.high = expr.high
        self.runs: dict[Hashable, _Run] = {}
        self.consumers: list[tuple[OperatorNode, int]] = []
        self._sweep_at = 64

    def watch_type(self) -> PrimitiveEventType | None:
        """``*(pt)``: the events a zero lower bound must see (rule (iv)), else None."""
        return PrimitiveEventType(Op.ANY, self.pt) if self.low == 0 else None

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        if len(self.runs) >= self._sweep_at:
            self._sweep()
        arrivals, self.pending = self.pending, []
        raised: list[CompositeEvent] = []
        emit = self.termination.emit
        bounded = self.windows is not None
        for child, event in arrivals:
            key = self.grouping.key(event)
            if key is NULL:
                continue
            if child == WATCH:
                self._watch(key, event, tick, raised)
                continue
            if bounded and not self._fits(key, child, event, tick):
                continue
            run = self.runs.get(key)
            if run is None:
                run = self.runs[key] = _Run()
            cur = run.cur
            places = None
            # Integration goes on while the integrated composite stays inside the window.
            if cur is not None and (self.high is None or len(cur.constituents) < self.high) \
                    and (not bounded or self._inside(cur, tick)):
                places = self._locate(key, run, raised)
            if places is not None:
                assert cur is not None
                c = self._compose(cur.constituents + (event,), tick, cur.pi)
                run.cur, run.tick, run.seen = c, tick, self.consumers
                if self._waive(key, cur, c, places, raised):
                    continue
            else:
                run.waiting.append(event)
                if len(run.waiting) < self.low:
                    continue
                c = self._compose(tuple(run.waiting), tick)
                run.cur, run.tick, run.waiting, run.seen = c, tick, [], self.consumers
            emit(c, key, raised)
        return raised

    def drop(self, key: Hashable) -> None:
        super().drop(key)
        self.runs.pop(key, None)

    def expire(self, key: Hashable, child: int, event: Event) -> bool:
        """Drop a child event still waiting for the lower bound (its window ended)."""
        run = self.runs.get(key)
        return run is not None and remove(run.waiting, event)

    def _sweep(self) -> None:
        """Forget runs a fresh one would equal: integrating event consumed, nothing waiting.

        Memory then follows the path instances still being built, not all there were; done
        when the runs have doubled since the last sweep, so it costs O(1) an event. (It runs
        before a tick's arrivals, when every consumer has taken what was raised before.)
        """
        for key, run in list(self.runs.items()):
            if not run.waiting and (run.cur is None or self._locate(key, run, []) is None):
                del self.runs[key]
        self._sweep_at = max(64, 2 * len(self.runs))

    def _watch(self, key: Hashable, event: Event, tick: int,
               raised: list[CompositeEvent]) -> None:
        """Rule (iv): an event at a path instance of the node's own path type (l = 0)."""
        assert isinstance(event, PrimitiveEvent)
        if event.op is Op.DEL:
            self.runs.pop(key, None)
            return
        run = self.runs.get(key)
        if run is None:
            run = self.runs[key] = _Run()
        elif run.cur is not None and self._locate(key, run, raised) is not None:
            return  # the constraint's composite is still there to be consumed
        ident = "" if self.termination.defers else self._tree.next_id()
        c = CompositeEvent(ident, CompositeEventType(self.name, event.pi.pt), event.pi, (),
                           (event.ts, event.ts), tick, event.doc)
        run.cur, run.tick, run.waiting, run.seen = c, tick, [], self.consumers
        self.termination.emit(c, key, raised)

    def _locate(self, key: Hashable, run: _Run, raised: list[CompositeEvent]
                ) -> list[_Place] | None:
        """Where ``run.cur`` is still unconsumed (see the module), or None if it was
        consumed; an empty list when nothing consumes this node's events."""
        cur = run.cur
        assert cur is not None
        if self.termination.holds(key, cur):
            return [_OWN]
        if run.tick == self._tree.tick and any(c is cur for c in raised):
            return [_RAISED]
        consumers = self._received(run)
        if not consumers:
            return []
        places: list[_Place] = [(node, index) for node, index in consumers
                                if node.unconsumed(cur, index)]
        return places or None

    def _received(self, run: _Run) -> list[tuple[OperatorNode, int]]:
        """The consumers that received ``run.cur``: those of when it was raised still here (a
        consumer added since starts empty and never saw it, so it cannot have consumed it)."""
        seen = run.seen
        if seen is self.consumers:
            return seen
        return [place for place in self.consumers if place in seen]

    def _waive(self, key: Hashable, cur: CompositeEvent, c: CompositeEvent,
               places: list[_Place], raised: list[CompositeEvent]) -> bool:
        """Waive ``cur`` for ``c`` (section 3.2); True if ``c`` took its place in a held event.

        ``cur`` leaves the lists that store it; inside a consumer's held potential event ``c``
        replaces it, so the potential event carries the integrated constituents when raised.
        """
        inside = False
        for place in places:
            if place == _OWN:
                self.termination.release(key, cur)
            elif place == _RAISED:
                raised[:] = [x for x in raised if x is not cur]
            else:
                assert isinstance(place, tuple)
                node, index = place
                inside = node.waive(cur, index, c) or inside
        if inside and self._tree.trace is not None:
            self._tree.trace(self, c)
        return inside

    def _raise(self, c: CompositeEvent, tick: int) -> CompositeEvent:
        out = super()._raise(c, tick)
        run = self.runs.get(self.grouping.key(c))
        if run is not None and run.cur is c:
            run.cur, run.tick, run.seen = out, tick, self.consumers
        return out


# --- the fast path -------------------------------------------------------------------------------
#
# A multiplicity that raises at once (earliest mode, no condition: its termination never holds
# anything) gets ``push`` (:func:`specialise_mult`, once when it is built), so that its tree can
# take an event up its leaf's chain (``EventTree.direct`` and ``EventTree.walk``; see the fast
# paths of ``_operator``). ``push`` is :meth:`MultNode.evaluate` for a single arrival in a
# tick: nothing is held by the node and nothing was raised by it earlier in the tick, so of
# ``_locate``'s places only the consumers remain. The tree calls it only for a node's single
# arrival of a tick; several arrivals in one tick go through ``evaluate``.


class EarliestMult(MultNode):
    """A multiplicity whose termination raises at once (fast path, see above)."""

    __slots__ = ()

    def push(self, child: int, event: Event, tick: int) -> CompositeEvent | None:
        """The node's one arrival of the tick: the composite it raises, or None (stored,
        waiting for the lower bound, or integrated into a potential event a consumer holds)."""
        if len(self.runs) >= self._sweep_at:
            self._sweep()
        pi = event.pi  # the projection's key (Projection.key), inline
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        if key is NULL:
            return None
        if child == WATCH:
            raised: list[CompositeEvent] = []
            self._watch(key, event, tick, raised)
            return raised[0] if raised else None
        bounded = self.windows is not None
        if bounded and not self._admits(key, event, tick):  # the clock: when stored below
            return None
        run = self.runs.get(key)
        if run is None:
            # _Run(), its slots set here (no __init__ frame): a run is made for every item
            run = self.runs[key] = _new(_Run)
            run.cur = None
            run.tick = -1
            run.waiting = []
            run.seen = []
        cur = run.cur
        if cur is not None and (self.high is None or len(cur.constituents) < self.high) \
                and (not bounded or self._inside(cur, tick)):
            # _locate: an Immediate termination holds nothing, nothing was raised before in
            # this tick; so where the consumers still have it (no consumer: it is nowhere
            # consumed, so unconsumed).
            consumers = self.consumers
            if run.seen is not consumers:  # the graph changed since ``cur`` was raised
                consumers = self._received(run)
            if len(consumers) == 1:
                # One consumer (a parent): it finds its group once for both questions.
                node, index = consumers[0]
                key = node.holder(cur, index)
                if key is not NULL:
                    c = self._compose(cur.constituents + (event,), tick, cur.pi)
                    run.cur, run.tick, run.seen = c, tick, self.consumers
                    if not node.waive_in(key, cur, index, c):  # _waive
                        return c
                    if self._tree.trace is not None:
                        self._tree.trace(self, c)
                    return None
                places = []
            else:
                places = [(node, index) for node, index in consumers
                          if node.unconsumed(cur, index)]
            if places or not consumers:
                c = self._compose(cur.constituents + (event,), tick, cur.pi)
                run.cur, run.tick, run.seen = c, tick, self.consumers
                # _waive: take ``cur`` back from the consumers that have it
                inside = False
                for node, index in places:
                    inside = node.waive(cur, index, c) or inside
                if not inside:
                    return c
                if self._tree.trace is not None:
                    self._tree.trace(self, c)
                return None
        run.waiting.append(event)
        if len(run.waiting) < self.low:
            if bounded:  # stored, waiting for the lower bound (otherwise never stored)
                self._stores(key, child, event)
            return None
        c = self._compose(tuple(run.waiting), tick)
        run.cur, run.tick, run.waiting, run.seen = c, tick, [], self.consumers
        return c

    def _sweep(self) -> None:
        """MultNode._sweep with _locate as push has it (nothing held, nothing raised)."""
        for key, run in list(self.runs.items()):
            if run.waiting:
                continue
            cur = run.cur
            consumers = self._received(run)
            if cur is not None and consumers:
                for node, index in consumers:
                    if node.unconsumed(cur, index):
                        break
                else:
                    cur = None  # consumed
            if cur is None:
                del self.runs[key]
        self._sweep_at = max(64, 2 * len(self.runs))


def specialise_mult(node: MultNode) -> MultNode:
    """Switch ``node`` to :class:`EarliestMult` if it raises at once (see above)."""
    if type(node) is MultNode and type(node.termination) is Immediate:
        node.__class__ = EarliestMult
    return node
