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

import dataclasses
import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from . import ast
from ._definitions import DefinitionSet, OperatorSpec, ResolvedDefinition
from ._definitions import _error as definition_error
from ._documents import Documents, impossible
from ._errors import (
    ConditionError,
    GraphStateError,
    InvalidArgumentError,
    UnknownNameError,
)
from ._events import (
    MOVE_FREE,
    CompositeEvent,
    CompositeEventType,
    Event,
    EventType,
    Op,
    PrimitiveEvent,
    PrimitiveEventType,
    compatible,
)
from ._multiplicity import WATCH, MultNode
from ._operator import SEMANTICS, OperatorNode, TreeOptions
from ._paths import WILDCARD, Axis, PathInstance, PathType, Step
from ._sharing import SharedView, Sharing
from ._tree import EventTree, Feeder, Leaf
from ._window import Bounds, Expired, Windows

__all__ = ["EventGraph"]

Callback = Callable[[CompositeEvent], Any]


# The dispatch keys of the two halves of a move (PrimitiveEvent.moved); new and gone leaves,
# which leave moves out, are never indexed under them.
_MOVED: dict[Op, object] = {Op.INS: "moved ins", Op.DEL: "moved del", Op.UPD: Op.UPD}
_MOVED_KEYS = frozenset(("moved ins", "moved del"))


def _definitions(value: Any) -> DefinitionSet:
    if isinstance(value, DefinitionSet):
        return value
    if isinstance(value, (str, ast.Definition)):
        return DefinitionSet.of(value)
    return DefinitionSet.of(*value)


#: The last step of a path type ending in ``*``: its leaves are indexed under it.
_ANY_ELEMENT = Step(Axis.CHILD, WILDCARD)


def _unknown_name(name: str, definitions: DefinitionSet, shown: str) -> UnknownNameError:
    """``_subscriptions.unknown_name``, imported when first needed (see
    ``EventGraph._subscription_type``)."""
    from ._subscriptions import unknown_name

    return unknown_name(name, definitions, shown)


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
        documents: resolves path instances to nodes and compiles termination conditions
            (:class:`~xmlevents.algebra.Documents`); without it, ``when=`` is refused.
        within: the window of every operator that sets none (``with within=N`` bounds one
            operator and those beneath it): a number of ticks, or a duration of event time
            (``"30s"``, a :class:`~xmlevents.algebra.Duration`; every event then carries a
            ``time``). Composites span less; what can no longer complete inside it is dropped
            and reported (:meth:`subscribe_expired`).
        on_error: called with the :class:`ConditionError` of a condition that fails while it
            is evaluated (the potential event is not raised; detection goes on); by default a
            ``RuntimeWarning``.
        share: build an operator subtree that several definitions have once, and share it
            (the default; results are the same either way, see :mod:`._sharing`).
        detect_aliases: whether every single-event definition (``Removed := del(item)``)
            raises one composite per event, also where other definitions reference it (what
            the command line does: it writes every definition out). By default such a
            definition detects unless another one references it (there it stands for its
            event type, an alias, as in the paper), or once it is subscribed to by name.

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
                 trace: Callable[[str, CompositeEvent], Any] | None = None,
                 documents: Documents | None = None,
                 on_error: Callable[[ConditionError], Any] | None = None,
                 within: int | ast.Duration | str | None = None, share: bool = True,
                 detect_aliases: bool = False) -> None:
        self.definitions = _definitions(definitions)
        if semantics not in SEMANTICS:
            raise InvalidArgumentError(f"semantics={semantics!r}: use 'interval' or 'detection'")
        try:
            ctx = ast.Context(context) if not isinstance(context, ast.Context) else context
        except ValueError:
            raise InvalidArgumentError(f"context={context!r}: use one of "
                                       f"{', '.join(c.value for c in ast.Context)}") from None
        if not isinstance(hierarchical, bool):
            raise InvalidArgumentError(f"hierarchical={hierarchical!r}: use True or False")
        self._windows = Windows()
        options = TreeOptions(ctx, hierarchical, semantics, documents, on_error,
                              None if within is None else ast.window(within), self._windows)
        self._sharing = Sharing(options, self._hidden_tree) if share else None
        self.options = dataclasses.replace(options, sharing=self._sharing)
        self._trace = trace
        self._all_aliases = detect_aliases
        self._detecting: set[str] = self._detects(self.definitions, self.definitions)
        resolved = list(self.definitions.trees(self._detecting))
        _check_documents(self.definitions, documents)
        self.trees: list[EventTree] = _arrange(list(self._build(resolved).values()))
        self._position: dict[str, int] = {}
        self._by_step: dict[object, list[Leaf]] = defaultdict(list)
        self._dispatch: dict[tuple[object, PathType], list[Leaf]] = {}
        self._observing: list[EventTree] = []
        self._solo: Callable[[Leaf | None, PrimitiveEvent, int], list[CompositeEvent]] | None = (
            None)
        self._solo_watches = False
        self._droppable: dict[tuple[int, bool], list[OperatorNode]] = {}
        self._timed = False
        self._wire()
        self._subscribers: list[tuple[EventType | None, Callback]] = []
        self._expiry: list[Callable[[Expired], Any]] = []
        self._last_ts: int | None = None
        self._closed = False

    # --- pickling (issue 29: the replay's checkpoint) --------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """The graph's state without what :meth:`_wire` derives from the trees: the leaf
        index is a cache, and the rank of leaves is keyed by their ``id()``, which a copy
        does not keep. The documents, conditions and callbacks pickle as their owners say
        (the replay's checkpoint gives the documents back as its own; see
        ``xmlevents.replay``)."""
        state = self.__dict__.copy()
        state["_dispatch"] = {}
        state.pop("_rank", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._wire()

    # --- a live graph ----------------------------------------------------------------------

    def add(self, definitions: Any, *, namespaces: Mapping[str, str] | None = None
            ) -> DefinitionSet:
        """Add definitions while the graph runs; every existing tree keeps its state.

        The new definitions may reuse the existing ones (and each other). Their trees start
        empty: they see the events fed from now on. Returns the whole definition set.

        Raises:
            DefinitionError: a name that is already defined, or any check a definition fails
                (section 3.1, cycles, conditions); the graph is left exactly as it was.
            ExpressionSyntaxError: definition text that does not parse (graph unchanged).
        """
        added = DefinitionSet.collect(definitions, namespaces=namespaces)
        for d in added:
            if d.name in self.definitions:
                raise definition_error(
                    d, d, f"{d.name} is already defined; remove it first to redefine it")
        merged = DefinitionSet([r.definition for r in self.definitions] + added)
        detecting = self._detects(merged, [merged[d.name] for d in added])
        fresh = [merged[d.name].detecting() for d in added
                 if not merged[d.name].is_alias or d.name in detecting]
        _check_documents((merged[d.name] for d in added), self.options.documents)
        built = self._build(fresh)  # may raise: nothing changed yet
        self.definitions = merged
        self._detecting |= detecting
        self._place(built)
        return merged

    def _place(self, built: dict[str, EventTree]) -> None:
        """Put newly ``built`` trees among the kept ones, in processing order, and wire."""
        by_name = {t.name: t for t in self.trees if t.core is None} | built
        self.trees = _arrange([by_name[r.name]
                               for r in self.definitions.trees(self._detecting)])
        self._wire()

    def _detects(self, defs: DefinitionSet, among: Iterable[ResolvedDefinition]) -> set[str]:
        """Which single-event definitions ``among`` those of ``defs`` get a tree of their own:
        all of them with ``detect_aliases``, else those no other definition references."""
        aliases = [d.name for d in among if d.is_alias]
        if self._all_aliases or not aliases:
            return set(aliases)
        used = defs.referenced()
        return {name for name in aliases if name not in used}

    def detect(self, name: str) -> None:
        """Let single-event definition ``name`` raise one composite per event from now on,
        also where other definitions reference it (``subscribe`` by its name does this; a
        definition with a tree already detects).

        Raises:
            UnknownNameError: no definition is named ``name``.
        """
        d = self.definitions[name]
        if not d.is_alias or name in self._detecting:
            return
        built = self._build([d.detecting()])
        self._detecting.add(name)
        self._place(built)

    def remove(self, name: str) -> DefinitionSet:
        """Remove definition ``name`` while the graph runs; every other tree keeps its state.

        Returns the definition set left. A definition other definitions reuse — by name, or
        through a wildcard ``%(pt)`` that receives its events — cannot be removed before them.

        Raises:
            UnknownNameError: no definition is named ``name`` (graph unchanged).
            DefinitionError: other definitions reuse it; the message names them.
        """
        removed = self.definitions[name]
        if any(isinstance(et, CompositeEventType) and et.name == name
               for et, _ in self._subscribers):
            raise definition_error(
                removed.definition, removed.definition,
                f"{name} has subscribers, which would never be called again; unsubscribe "
                "them first (graph.unsubscribe)")
        users = [d for d in self.definitions
                 if d.name != name and (name in d.depends_on or name in d.references)]
        if users:
            names = ", ".join(u.name for u in users)
            raise definition_error(
                removed.definition, removed.definition,
                f"{name} is reused by {names}; remove {'it' if len(users) == 1 else 'them'} "
                "first")
        self.definitions = DefinitionSet(r.definition for r in self.definitions
                                         if r.name != name)
        self._retire([t for t in self.trees if t.name == name])  # none for an alias
        self._detecting.discard(name)
        self._wire()
        return self.definitions

    def _build(self, resolved: list[ResolvedDefinition]) -> dict[str, EventTree]:
        """The trees of ``resolved``, built together: they share the subtrees two of them
        have (and the cores that store nothing yet). On an error, nothing is shared."""
        sharing = self._sharing
        if sharing is None:
            return {r.name: self._new_tree(r) for r in resolved}
        sharing.plan([r.root for r in resolved if isinstance(r.root, OperatorSpec)])
        try:
            built = {r.name: self._new_tree(r) for r in resolved}
        except BaseException:
            sharing.rollback()
            raise
        sharing.commit()
        return built

    def _retire(self, trees: list[EventTree], *, keep: bool = False) -> None:
        """``trees`` go (removed, or replaced when reopened; with ``keep``, closed and kept):
        stop their clocks, and let go of the shared subtrees only they used."""
        gone = [] if keep else list(trees)
        if self._sharing is not None:
            for tree in trees:
                gone += [core.tree for core in self._sharing.release(tree)]
        self._windows.forget(n for t in gone for n in t.operators)
        ids = {id(t) for t in gone}
        self.trees = [t for t in self.trees if id(t) not in ids]

    def _new_tree(self, d: ResolvedDefinition) -> EventTree:
        tree = EventTree(d, self.options)
        trace = self._trace
        if trace is not None:
            tree.trace = lambda node, c, _name=tree.name: trace(_name, c)
            tree.traced()  # every node's composites go through _forward
        return tree

    def _hidden_tree(self, d: ResolvedDefinition, bounds: Bounds) -> EventTree:
        """The hidden tree of a shared subtree (built under its ancestors' windows)."""
        return EventTree(d, self.options, bounds, hidden=True)

    def _wire(self) -> None:
        """Number the trees in processing order, index their leaves for dispatch, and tell
        multiplicity roots who consumes their events (again whenever the trees change)."""
        for i, tree in enumerate(self.trees):
            tree.position = i
        for tree in self.trees:
            if tree.core is not None:  # the trees sharing it are processed after it
                tree.core.positions = sorted({v.tree.position for v in tree.core.views})
        self._position = {t.name: i for i, t in enumerate(self.trees)}
        self._by_step.clear()
        self._dispatch.clear()
        for tree in self.trees:
            for leaf in tree.leaves:
                self._by_step[leaf.et.pt.last].append(leaf)
        # Where leaves end in * (issue 15), the order of every leaf: see _index.
        self._rank: dict[int, int] = {} if _ANY_ELEMENT not in self._by_step else {
            id(leaf): i for i, leaf in enumerate(leaf for t in self.trees for leaf in t.leaves)}
        self._observing = [t for t in self.trees if t.observers]
        consumed = {n for d in self.definitions for n in d.depends_on}
        for tree in self.trees:
            tree.feeds = tree.name in consumed
            root = tree.root
            if isinstance(root, MultNode):
                root.consumers = [(leaf.parent, leaf.index) for other in self.trees
                                  for leaf in other.leaves
                                  if leaf.index != WATCH and leaf.spec.receives(
                                      tree.definition.root, tree.name)]
        self._droppable = _droppable(self.trees)
        #: The graph's only tree when it takes the fast paths (direct, or a walk with one
        #: watcher): ``feed`` then has no tree to choose and no heap of trees to keep.
        only = self.trees[0] if len(self.trees) == 1 else None
        self._solo = only.take if only is not None and only.feeder is not Feeder.PROCESS else None
        #: Whether the solo tree sees events no leaf takes (a watcher's, EventTree.walk).
        self._solo_watches = only is not None and only.feeder is Feeder.WALK
        self._timed = any(n.duration is not None for t in self.trees for n in t.operators)

    # --- nodes that no longer exist ---------------------------------------------------------

    @property
    def needs_time(self) -> bool:
        """Whether a window is given as a duration: every event fed must then carry a time,
        and times must not decrease."""
        return self._timed

    @property
    def forgets(self) -> bool:
        """Whether :meth:`forget` can drop anything (a node groups by projection)."""
        return bool(self._droppable)

    def forget(self, doc: str | None, gone: Iterable[PathInstance]) -> None:
        """Nodes of ``doc`` that no longer exist: drop the groups keyed by them (issue 13).

        ``gone`` are the path instances of nodes deleted by one operation and not re-inserted
        by it (a move re-inserts with the same ids). Ids are never reused, so in the
        hierarchical context such a group can never receive another event: its stored events
        go, and so do the potential events held only by a condition (tested again only at
        events inside the subtree: there will be none). Potential events held by the
        non-local or custom mode are kept: they are complete and go as their mode says. An
        operator above a node that may still raise late (non-local or custom, in its own tree
        or in one it reuses) keeps its groups: a late composite may still arrive there.
        """
        if not self._droppable:
            return
        for pi in gone:
            n = len(pi.ids)
            for (k, absolute), nodes in self._droppable.items():
                # The group of the deleted node: the projection on the node's path type that
                # ends at it (an absolute path type projects whole instances of its length).
                if k > n or (absolute and k != n):
                    continue
                key = (doc, pi.ids[n - k:])
                for node in nodes:
                    node.drop(key)

    # --- subscriptions ---------------------------------------------------------------------

    def subscribe(self, event_type: str | EventType | None, fn: Callback) -> Callback:
        """Call ``fn(event)`` for every raised composite event compatible with ``event_type``.

        ``event_type`` is a definition's name, an event type (``"Ei(order/item)"``,
        ``"%(item)"``) or None for all. Receivers run in subscription order, after the tick's
        processing; an exception in one propagates after the graph's state is complete.
        Returns ``fn``.

        Raises:
            UnknownNameError: no definition has the name.
            InvalidArgumentError: a type no composite of this graph can have (a path type
                its definition's events never have; a primitive type, which the graph is
                fed, never raises).
            ArgumentTypeError: ``fn`` cannot be called as ``fn(event)``.
        """
        from xmlevents._foundation.subscriptions import check_receiver  # see _subscription_type

        et = self._subscription_type(event_type)
        check_receiver(fn, ("event",))
        if isinstance(et, CompositeEventType) and et.name is not None:
            self.detect(et.name)  # a single-event definition subscribed to detects
        self._subscribers.append((et, fn))
        return fn

    def unsubscribe(self, event_type: str | EventType | None, fn: Callback) -> None:
        """Stop calling ``fn`` for ``event_type`` (as it was subscribed); no error if it
        was not."""
        et = self._subscription_type(event_type, check=False)
        self._subscribers = [(t, f) for t, f in self._subscribers if not (t == et and f == fn)]

    def subscribe_expired(self, fn: Callable[[Expired], Any]) -> Callable[[Expired], Any]:
        """Call ``fn(expired)`` for every partial match a window drops (an :class:`Expired`:
        the definition, the operator, the group and the events it had), after the tick's
        processing, before the composites' receivers. Returns ``fn``."""
        self._expiry.append(fn)
        self._windows.listening = True
        return fn

    def _subscription_type(self, event_type: str | EventType | None, *, check: bool = True
                           ) -> EventType | None:
        """The event type a subscription names, refused if it can never be raised."""
        # The checks of subscriptions are imported when one is made: a graph that only
        # detects (``xmlevents detect``) never loads them (nor difflib, for their hints).
        from ._subscriptions import check_subscription, subscription_type

        if event_type is None:
            return None
        et = subscription_type(event_type)
        if isinstance(et, str):
            if et not in self.definitions:
                raise _unknown_name(et, self.definitions, et)
            return self.definitions[et].event_type
        if check and isinstance(et, PrimitiveEventType):
            raise InvalidArgumentError(
                f"{et}: a graph raises composite events; primitive events are what it is fed, "
                "never raised: subscribe to a definition (a watched document's subscribe "
                "takes primitive types)")
        if check:
            check_subscription(et, self.definitions, self.options.documents)
        return et

    # --- processing ------------------------------------------------------------------------

    def _leaves_for(self, event: Event) -> list[Leaf]:
        # Keyed by plain tuples: path types are interned by the parser, so lookups compare
        # by identity and never build an event type object per event.
        if isinstance(event, PrimitiveEvent):
            key: tuple[object, PathType] = (
                _MOVED[event.op] if event.moved else event.op, event.pi.pt)
        else:
            key = (event.type.name, event.pi.pt)
        leaves = self._dispatch.get(key)
        return leaves if leaves is not None else self._index(key, event.type)

    def _index(self, key: tuple[object, PathType], et: EventType) -> list[Leaf]:
        """The open leaves taking events of type ``et`` (``⪰``), remembered under ``key``
        (whose first item says whether a primitive event is half of a move: then ``new`` and
        ``gone`` leaves do not take it)."""
        moved = key[0] in _MOVED_KEYS
        last = et.pt.last
        candidates: Iterable[Leaf] = self._by_step.get(last, ())
        if last.axis is Axis.CHILD and not last.is_wildcard and _ANY_ELEMENT in self._by_step:
            # Leaves whose path type ends in * take an element of any name (issue 15); in
            # the order of the trees, as the leaves of one step are.
            candidates = sorted((*candidates, *self._by_step[_ANY_ELEMENT]),
                                key=lambda leaf: self._rank[id(leaf)])
        leaves = [leaf for leaf in candidates
                  if not leaf.tree.closed and compatible(et, leaf.et)
                  and not (moved and getattr(leaf.et, "op", None) in MOVE_FREE)]
        self._dispatch[key] = leaves
        return leaves

    def takes(self, op: Op, pt: PathType) -> bool:
        """Whether feeding a primitive event ``op`` at path type ``pt`` could change anything.

        False when no leaf takes it and no node watches every event (non-local mode,
        conditions): such an event only moves the clock (:meth:`advance`), so a reader may
        skip building it (``read_events(..., keep=graph.takes)``).
        """
        if self._observing or self._timed:  # every event moves the clock of event time
            return True
        leaves = self._dispatch.get((op, pt))
        if leaves is None:
            if not pt.is_absolute:
                return False  # no event occurs at a relative path type
            leaves = self._index((op, pt), PrimitiveEventType(op, pt))
        return bool(leaves)

    def advance(self, ts: int) -> None:
        """Move the clock to tick ``ts`` of an event not fed (one :meth:`takes` refuses).

        Raises:
            GraphStateError: if the graph is closed or ``ts`` does not increase.
        """
        self._tick(ts, f"tick {ts}")
        if self._windows.heap:
            self._windows.advance(ts)
            self._report_expired()

    def _advance_time(self, event: PrimitiveEvent) -> None:
        """Move the clock of event time to ``event``'s (a window given as a duration)."""
        now = event.time
        if now is None or now < self._windows.now:
            d = next(t.name for t in self.trees if any(n.duration for n in t.operators))
            problem = ("carries no time" if now is None else
                       f"has time={now!r}, before the previous event's {self._windows.now!r}")
            raise GraphStateError(
                f"event {event.id!r} (ts={event.ts}) {problem}; definition {d} has a window "
                "given as a duration, which measures the events' times: give every event a "
                "time that does not decrease, or the window in ticks")
        self._windows.advance_time(now, event.ts)

    def _report_expired(self) -> None:
        for x in self._windows.take():
            for fn in self._expiry:
                fn(x)

    def _tick(self, ts: int, what: str) -> None:
        if self._closed:
            raise GraphStateError(f"the event graph is closed; {what} (ts={ts}) cannot be "
                                  "processed; open() it again")
        last = self._last_ts
        if last is not None and ts <= last:
            raise GraphStateError(f"{what} has ts={ts}, not after the previous event's "
                                  f"ts={last}; ticks must increase")
        self._last_ts = ts

    def feed(self, event: PrimitiveEvent) -> list[CompositeEvent]:
        """Process one primitive event through every tree (processGraph, section 4).

        Returns the composite events raised by the trees' roots in this tick, in the order
        raised; a tree's composites reach the trees that depend on it within the same tick.

        Raises:
            GraphStateError: if the graph is closed or ``event.ts`` does not increase.
        """
        ts = event.ts
        last = self._last_ts
        if self._closed or (last is not None and ts <= last):
            self._tick(ts, f"event {event.id!r}")
        self._last_ts = ts
        windows = self._windows
        heap = windows.heap
        if heap and heap[0][0] <= ts:
            # Before anything of the tick: what can no longer complete inside its window.
            windows.advance(ts)
        if self._timed:
            self._advance_time(event)
        # A move's halves have keys of their own (new and gone leaves do not take them).
        leaves = self._dispatch.get((_MOVED[event.op] if event.moved else event.op,
                                     event.pi.pt))
        if leaves is None:
            leaves = self._leaves_for(event)
        solo = self._solo
        if solo is not None and len(leaves) < 2:
            # The graph's only tree takes the fast paths (see _wire): no tree to choose, no
            # other tree to give its composites to, no shared subtree. ``solo`` is its
            # feeder (EventTree.take: chain or walk, chosen once from _tree.FEEDERS).
            if leaves:
                raised = solo(leaves[0], event, ts)
            elif self._solo_watches:  # the watcher alone sees the event (EventTree.walk)
                raised = solo(None, event, ts)
            else:
                raised = []  # most events of a document concern no definition
            if windows.dropped:
                self._report_expired()
            if raised and self._subscribers:
                self._notify(raised)
            return raised
        if self._observing:
            # Rule (ii)/(iii) of processTree: nodes holding potential events see every event.
            dirty = [tree.position for tree in self._observing if tree.holding()]
            if not leaves and not dirty:
                if windows.dropped:
                    self._report_expired()
                return []
        elif not leaves:
            if windows.dropped:
                self._report_expired()
            return []  # most events of a document concern no definition: keep that cheap
        else:
            dirty = []
        # The common case: all the work is in one tree (one leaf, or a tree that holds
        # potential events and sees the event, or both in the same tree). Process that tree
        # at once, without the heap of trees to visit; the trees reusing it (if any) go
        # through _propagate.
        tree = None
        if not dirty:
            if len(leaves) == 1:
                tree = leaves[0].tree
        elif len(dirty) == 1:
            if not leaves:
                tree = self.trees[dirty[0]]
            elif len(leaves) == 1 and leaves[0].tree.position == dirty[0]:
                tree = leaves[0].tree
        if tree is not None:
            # Its feeder (_tree.FEEDERS): up the leaf's chain, the walk of a tree with one
            # watcher, or the general process(). (A direct tree has no observers: it is here
            # only with a leaf.)
            raised = tree.take(leaves[0] if leaves else None, event, ts)
            dirty = []
            if tree.core is not None:
                # A shared subtree: what it raised goes to the trees sharing it.
                raised = []
                if tree.core.moved():
                    dirty = list(tree.core.positions)
                    raised = self._propagate(dirty, ts, event)
            elif raised and tree.feeds:  # other trees take its composites
                for c in raised:
                    self._deliver(c, self._leaves_for(c), dirty)
                if dirty:
                    raised = raised + self._propagate(dirty, ts, event)
        else:
            heapq.heapify(dirty)
            self._deliver(event, leaves, dirty)
            raised = self._propagate(dirty, ts, event)
        if windows.dropped:
            self._report_expired()
        if raised and self._subscribers:
            self._notify(raised)
        return raised

    def _propagate(self, dirty: list[int], ts: int, event: PrimitiveEvent | None
                   ) -> list[CompositeEvent]:
        """Process the marked trees in order; their roots' composites mark their dependents."""
        raised: list[CompositeEvent] = []
        done = -1
        trees = self.trees
        pop = heapq.heappop
        push = heapq.heappush
        while dirty:
            i = pop(dirty)
            if i == done:
                continue
            done = i
            tree = trees[i]
            out = tree.process(ts, event)
            if tree.core is not None:  # a shared subtree: its views take what it raised
                if tree.core.moved():
                    for position in tree.core.positions:
                        push(dirty, position)
                continue
            if out:
                raised += out
                for c in out:
                    self._deliver(c, self._leaves_for(c), dirty)
        return raised

    @staticmethod
    def _deliver(event: Event, leaves: list[Leaf], dirty: list[int]) -> None:
        """Store ``event`` for the leaves' parents and mark their trees for processing."""
        push = heapq.heappush
        for leaf in leaves:
            leaf.parent.pending.append((leaf.index, event))
            push(dirty, leaf.tree.position)

    def _notify(self, raised: list[CompositeEvent]) -> None:
        if not self._subscribers or not raised:
            return
        errors: list[BaseException] = []
        for event in raised:
            for et, fn in self._subscribers:
                if et is None or compatible(event.type, et):
                    try:
                        fn(event)
                    except BaseException as exc:  # the others still run; raised after
                        errors.append(exc)
        if errors:
            from xmlevents._foundation.subscriptions import raise_collected

            raise_collected(errors)

    def run(self, events: Iterable[PrimitiveEvent], *, close: bool = True
            ) -> Iterator[CompositeEvent]:
        """Feed ``events`` and yield every raised composite event; close at the end."""
        for event in events:
            yield from self.feed(event)
        if close:
            yield from self.close()

    def flush(self, name: str | None = None) -> list[CompositeEvent]:
        """Raise what non-local and custom nodes hold back (section 3.3); return the roots'.

        With ``name``, only that definition's tree is flushed; what it raises still reaches
        the trees that depend on it. Composites raised by flushing carry the last tick.
        """
        self._check_open("flush")
        tick = self._last_ts if self._last_ts is not None else 0
        if name is not None:
            tree = self.tree(name)
            dirty: list[int] = []
            raised = self._flushed(tree, tick, dirty)
            raised += self._propagate(dirty, tick, None)
        else:
            raised = []
            for tree in self.trees:  # dependency order: a tree gets what it depends on first
                raised += self._flushed(tree, tick, [])
        self._notify(raised)
        return raised

    def _flushed(self, tree: EventTree, tick: int, dirty: list[int]) -> list[CompositeEvent]:
        if tree.closed:
            return []
        raised = tree.flush(tick)
        if tree.core is not None:  # a shared subtree's go to its views
            tree.core.moved()
            return []
        for c in raised:
            self._deliver(c, self._leaves_for(c), dirty)
        return raised

    def close(self, name: str | None = None) -> list[CompositeEvent]:
        """Flush, then retire: the graph (or only tree ``name``) takes no more events (§3.3).

        A closed graph refuses events with :class:`GraphStateError`; a closed tree is passed
        over (its leaves receive nothing) until :meth:`open` reopens it.
        """
        if self._closed:
            return []
        raised = self.flush(name)
        if name is None:
            self._closed = True
        else:
            tree = self.tree(name)
            tree.closed = True
            self._dispatch.clear()  # its leaves take nothing now
            self._retire([tree], keep=True)  # nor do its shared subtrees give it anything
            self._wire()
        return raised

    def open(self, name: str | None = None) -> None:
        """Reopen the closed graph (or tree ``name``) with empty trees: it stores events again.

        Ticks must still increase across the reopening.
        """
        reopened = [t for t in self.trees if t.core is None and (
            (name is None and (self._closed or t.closed)) or t.name == name)]
        self._retire(reopened)
        self._place(self._build([t.definition for t in reopened]))
        if name is None:
            self._closed = False

    def _check_open(self, action: str) -> None:
        if self._closed:
            raise GraphStateError(f"the event graph is closed; cannot {action} it; open() it "
                                  "again")

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def last_ts(self) -> int | None:
        """The tick of the last event fed (or advanced to); None before the first."""
        return self._last_ts

    def potential(self, name: str) -> list[CompositeEvent]:
        """The potential composite events tree ``name`` holds back (mode or condition)."""
        return self.tree(name).potential()

    def held(self, name: str) -> list[Event]:
        """The events the tree of definition ``name`` still stores (unconsumed events).

        Raises:
            UnknownNameError: naming the definitions that have a tree.
        """
        return self.tree(name).held()

    def tree(self, name: str) -> EventTree:
        """The event tree of definition ``name``.

        Raises:
            KeyError: naming the definitions that have a tree.
        """
        try:
            return self.trees[self._position[name]]
        except KeyError:
            raise UnknownNameError(f"no event tree named {name!r}; trees: "
                                   f"{', '.join(self.order) or 'none'}") from None

    @property
    def order(self) -> tuple[str, ...]:
        """The trees in processing order: each after those it depends on."""
        return tuple(t.name for t in self.trees if t.core is None)

    def __repr__(self) -> str:
        o = self.options
        return (f"EventGraph({', '.join(self.order)}; context={o.context.value}, "
                f"hierarchical={o.hierarchical}, semantics={o.semantics})")


_LATE = (ast.Mode.NON_LOCAL, ast.Mode.CUSTOM)


def _arrange(named: list[EventTree]) -> list[EventTree]:
    """The processing order: the definitions' trees in dependency order, each shared
    subtree's hidden tree just before the first tree sharing it (the definitions it reuses
    come before that tree, so before it too)."""
    out: list[EventTree] = []
    placed: set[int] = set()

    def place(tree: EventTree) -> None:
        for node in tree.operators:
            if isinstance(node, SharedView) and id(node.core.tree) not in placed \
                    and node.attached:
                place(node.core.tree)
        placed.add(id(tree))
        out.append(tree)

    for tree in named:
        place(tree)
    return out


def _droppable(trees: list[EventTree]) -> dict[tuple[int, bool], list[OperatorNode]]:
    """The nodes whose groups of deleted nodes may be dropped (see :meth:`EventGraph.forget`),
    by the length of their path type (the number of ids in a group's key) and whether it is
    absolute."""
    late_trees: set[str] = set()
    late: list[EventTree] = []
    out: dict[tuple[int, bool], list[OperatorNode]] = {}
    for tree in trees:  # dependency order: a tree after those it reuses
        late_below: dict[int, bool] = {}
        for leaf in tree.leaves if late else ():
            if any(leaf.spec.receives(t.definition.root, t.name) for t in late):
                late_below[id(leaf.parent)] = True
        for node in tree.operators:  # post-order: children first
            parent = node.parent
            if isinstance(node, SharedView):  # stands for its hidden tree, earlier in order
                if node.core.tree.name in late_trees and parent is not None:
                    late_below[id(parent)] = True
                continue
            if parent is not None and (node.mode in _LATE or late_below.get(id(node))):
                late_below[id(parent)] = True
            if node.hierarchical and not late_below.get(id(node)):
                out.setdefault((len(node.pt), node.pt.is_absolute), []).append(node)
        if (any(n.mode in _LATE for n in tree.operators)
                or any(d in late_trees for d in tree.definition.depends_on)
                or late_below.get(id(tree.root))):
            late_trees.add(tree.name)
            late.append(tree)
    return out


_NO_DOCUMENTS = "pass documents=..., or watch documents with xmlevents.wrap"


def _check_documents(definitions: Iterable[ResolvedDefinition], documents: Documents | None
                     ) -> None:
    """Reject, when the graph is built, what the documents can never give: conditions it
    cannot evaluate (section 3.3), and primitive event types that never occur in them (an
    element's ``upd`` in watched documents); the caret under the condition or the leaf."""
    for d in definitions:
        for e in d.definition.expr.walk():
            if isinstance(e, ast.Primitive):
                reason = impossible(documents, e.event_type)
                if reason is not None:
                    raise definition_error(d.definition, e, reason)
        _check_evaluable(d, documents)


def _check_evaluable(d: ResolvedDefinition, documents: Documents | None) -> None:
    """Reject, when the graph is built, conditions it cannot evaluate (section 3.3)."""
    for node in d.root.walk():  # a single event type (an alias) has no operator
        if not isinstance(node, OperatorSpec) or node.mods.when is None:
            continue
        expr = node.expr
        when = node.mods.when
        problem = None
        if documents is None:
            problem = (f"the termination condition when={when!r} needs the documents to test "
                       f"it on; this graph has none ({_NO_DOCUMENTS})")
        else:
            try:
                documents.compile(when)
            except ValueError as exc:
                problem = f"the termination condition when={when!r} does not compile: {exc}"
        if problem:  # the caret under when=
            raise definition_error(d.definition, expr, problem, node.mods.pos("when")).phrased(
                _NO_DOCUMENTS, "conditions are tested on documents: run the definitions with "
                "`xmlevents replay`, where each version is the document")
