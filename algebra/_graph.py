"""The event graph: every tree of a definition set, fed one primitive event at a time (§4).

``processGraph`` of section 4 processes each tree once per primitive event, a tree only after
the trees it depends on (those whose composite events its leaves receive), and ``purge`` makes
that "at the latest time possible". Processing the trees in one fixed topological order of the
dependency relation gives exactly that, so the graph keeps that order (it does not change while
the definitions do not) and visits, in it, the trees that received an event in this tick.

Events reach leaves through an index: an event type is looked up once, compared with ``⪰``
against the leaves whose path type ends in the same step, and the answer is remembered, so the
work per event does not grow with the number of definitions that cannot take it.

Raises:
    DefinitionError: when a definition cannot be evaluated (checked when the graph is built).
    GraphStateError: when events are fed out of order or after :meth:`EventGraph.close`.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, section 4
    (processGraph, processTree, purge).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from . import ast
from ._definitions import DefinitionSet, OperatorSpec
from ._errors import DefinitionError, GraphStateError
from ._events import (
    CompositeEvent,
    CompositeEventType,
    Event,
    EventType,
    PrimitiveEvent,
    PrimitiveEventType,
    compatible,
)
from ._paths import PathType
from ._tree import SEMANTICS, EventTree, Leaf, TreeOptions

__all__ = ["EventGraph"]

Callback = Callable[[CompositeEvent], Any]


def _definitions(value: Any) -> DefinitionSet:
    if isinstance(value, DefinitionSet):
        return value
    if isinstance(value, (str, ast.Definition)):
        return DefinitionSet.of(value)
    return DefinitionSet.of(*value)


class EventGraph:
    """Detects the composite events of a set of definitions in a stream of primitive events.

    Args:
        definitions: a :class:`DefinitionSet`, definition text (one per line), a
            :class:`~xmlevents.algebra.ast.Definition`, or a list of those.
        context: the Snoop context of operators whose ``with`` does not set one.
        hierarchical: whether operators group their child events by projection on their path
            type (the hierarchical context of section 3.1) unless ``with`` says otherwise.
        semantics: ``"interval"`` (section 3.1, the default) or ``"detection"`` (Snoop's).
        trace: if given, called as ``trace(tree_name, composite)`` for every composite event
            any operator node raises, not only roots (to inspect intermediate results).

    >>> g = EventGraph("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
    >>> from xmlevents.algebra import PrimitiveEvent, PathInstance, Op
    >>> feed = lambda ts, path, ids: g.feed(PrimitiveEvent(f"e{ts}", ts, Op.INS,
    ...                                                    PathInstance.of(path, ids)))
    >>> feed(1, "/order/item", ["o", "i1"]), feed(2, "/order/item/price", ["o", "i1", "p1"])
    ([], [])
    >>> [c.to_dict()["events"] for c in feed(3, "/order/item/quantity", ["o", "i1", "q1"])]
    [['e1', 'e2', 'e3']]
    """

    def __init__(self, definitions: Any, *, context: str | ast.Context = "chronicle",
                 hierarchical: bool = True, semantics: str = "interval",
                 trace: Callable[[str, CompositeEvent], Any] | None = None) -> None:
        self.definitions = _definitions(definitions)
        if semantics not in SEMANTICS:
            raise ValueError(f"semantics={semantics!r}: use 'interval' or 'detection'")
        try:
            ctx = ast.Context(context) if not isinstance(context, ast.Context) else context
        except ValueError:
            raise ValueError(f"context={context!r}: use one of "
                             f"{', '.join(c.value for c in ast.Context)}") from None
        if not isinstance(hierarchical, bool):
            raise ValueError(f"hierarchical={hierarchical!r}: use True or False")
        self.options = TreeOptions(ctx, hierarchical, semantics)
        self.trees: list[EventTree] = []
        for d in self.definitions.trees():
            _check_evaluable(d)
            tree = EventTree(d, self.options)
            if trace is not None:
                tree.trace = lambda node, c, _name=tree.name: trace(_name, c)
            self.trees.append(tree)
        self._position = {t.name: i for i, t in enumerate(self.trees)}
        for i, tree in enumerate(self.trees):
            tree.position = i
        self._by_step: dict[object, list[Leaf]] = defaultdict(list)
        for tree in self.trees:
            for leaf in tree.leaves:
                self._by_step[leaf.et.pt.last].append(leaf)
        self._dispatch: dict[tuple[object, PathType], list[Leaf]] = {}
        self._subscribers: list[tuple[EventType | None, Callback]] = []
        self._last_ts: float = float("-inf")
        self._closed = False

    # --- subscriptions ---------------------------------------------------------------------

    def subscribe(self, event_type: str | EventType | None, fn: Callback) -> Callback:
        """Call ``fn(event)`` for every raised composite event compatible with ``event_type``.

        ``event_type`` is a definition's name, an event type (``"Ei(order/item)"``,
        ``"%(item)"``) or None for all. Receivers run in subscription order, after the tick's
        processing; an exception in one propagates after the graph's state is complete.
        Returns ``fn``.
        """
        self._subscribers.append((self._subscription_type(event_type), fn))
        return fn

    def _subscription_type(self, event_type: str | EventType | None) -> EventType | None:
        if event_type is None or isinstance(event_type, (PrimitiveEventType,
                                                         CompositeEventType)):
            return event_type
        if event_type in self.definitions:
            return self.definitions[event_type].event_type
        from ._parser import parse_event_type

        return parse_event_type(event_type)

    # --- processing ------------------------------------------------------------------------

    def _leaves_for(self, event: Event) -> list[Leaf]:
        # Keyed by plain tuples: path types are interned by the parser, so lookups compare
        # by identity and never build an event type object per event.
        if isinstance(event, PrimitiveEvent):
            key: tuple[object, PathType] = (event.op, event.pi.pt)
        else:
            key = (event.type.name, event.pi.pt)
        leaves = self._dispatch.get(key)
        if leaves is None:
            et = event.type
            leaves = [leaf for leaf in self._by_step.get(et.pt.last, ())
                      if compatible(et, leaf.et)]
            self._dispatch[key] = leaves
        return leaves

    def feed(self, event: PrimitiveEvent) -> list[CompositeEvent]:
        """Process one primitive event through every tree (processGraph, section 4).

        Returns the composite events raised by the trees' roots in this tick, in the order
        raised; a tree's composites reach the trees that depend on it within the same tick.

        Raises:
            GraphStateError: if the graph is closed or ``event.ts`` does not increase.
        """
        if self._closed:
            raise GraphStateError(f"the event graph is closed; event {event.id!r} "
                                  f"(ts={event.ts}) cannot be processed")
        ts = event.ts
        if ts <= self._last_ts:
            raise GraphStateError(f"event {event.id!r} has ts={ts}, not after the "
                                  f"previous event's ts={self._last_ts}; ticks must increase")
        self._last_ts = ts
        leaves = self._leaves_for(event)
        if not leaves:
            return []  # most events of a document concern no definition: keep that cheap
        raised: list[CompositeEvent] = []
        dirty: list[int] = []
        self._deliver(event, leaves, dirty)
        done = -1
        while dirty:
            i = heapq.heappop(dirty)
            if i == done:
                continue
            done = i
            for c in self.trees[i].process(ts):
                raised.append(c)
                self._deliver(c, self._leaves_for(c), dirty)
        self._notify(raised)
        return raised

    @staticmethod
    def _deliver(event: Event, leaves: list[Leaf], dirty: list[int]) -> None:
        """Store ``event`` for the leaves' parents and mark their trees for processing."""
        for leaf in leaves:
            leaf.parent.arrive(leaf.index, event)
            heapq.heappush(dirty, leaf.tree.position)

    def _notify(self, raised: list[CompositeEvent]) -> None:
        if not self._subscribers or not raised:
            return
        for event in raised:
            for et, fn in self._subscribers:
                if et is None or compatible(event.type, et):
                    fn(event)

    def run(self, events: Iterable[PrimitiveEvent], *, close: bool = True
            ) -> Iterator[CompositeEvent]:
        """Feed ``events`` and yield every raised composite event; close at the end."""
        for event in events:
            yield from self.feed(event)
        if close:
            yield from self.close()

    def flush(self) -> list[CompositeEvent]:
        """Raise what operators hold back for flushing (none do yet: every mode is earliest)."""
        return []

    def close(self) -> list[CompositeEvent]:
        """Flush, then refuse further events (section 3.3: close flushes and retires trees)."""
        raised = self.flush()
        self._closed = True
        return raised

    @property
    def closed(self) -> bool:
        return self._closed

    def held(self, name: str) -> list[Event]:
        """The events the tree of definition ``name`` still stores (unconsumed events)."""
        return self.trees[self._position[name]].held()

    def tree(self, name: str) -> EventTree:
        return self.trees[self._position[name]]

    @property
    def order(self) -> tuple[str, ...]:
        """The trees in processing order: each after those it depends on."""
        return tuple(t.name for t in self.trees)

    def __repr__(self) -> str:
        o = self.options
        return (f"EventGraph({', '.join(self.order)}; context={o.context.value}, "
                f"hierarchical={o.hierarchical}, semantics={o.semantics})")


_EVALUATED = (ast.Conj, ast.Disj, ast.Seq, ast.AnyOf, ast.Not)


def _check_evaluable(d: Any) -> None:
    """Reject, when the graph is built, what the engine cannot evaluate."""
    root = d.root
    assert isinstance(root, OperatorSpec)
    for node in root.walk():
        if not isinstance(node, OperatorSpec):
            continue
        expr = node.expr
        where = expr.pos or d.definition.pos
        problem = None
        if not isinstance(expr, _EVALUATED):
            problem = f"the {type(expr).__name__} operator is not evaluated by this engine yet"
        elif expr.mods.mode not in (None, ast.Mode.EARLIEST):
            problem = (f"termination mode {expr.mods.mode.value} is not supported yet; "
                       "only earliest is")
        elif expr.mods.when is not None:
            problem = ("a termination condition needs a document to evaluate it on; "
                       "this graph has none attached")
        if problem:
            raise DefinitionError(problem, definition=d.name, node=str(expr),
                                  text=d.definition.source,
                                  line=where[0] if where else None,
                                  col=where[1] if where else None)
