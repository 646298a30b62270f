"""Event trees: event type nodes and operator nodes that combine events (seed 000, 2.2-3.1).

An :class:`EventTree` realises one definition. Its leaves (event type nodes) take the events
compatible with their event type; its operator nodes keep their children's events in
:class:`~._contexts.Group` buffers, one group per projection of the events' path instances on
the operator's path type in the hierarchical context (or one per document in the plain
contexts), and combine them with the operator's Snoop context.

Assumptions: events arrive tick by tick with increasing ticks, and within a tick a tree is
processed once (``processTree`` of section 4), so every operator is evaluated once a tick,
after its children, with the events its children delivered in that tick, in arrival order.
Events of different documents are never combined, in any context.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 2.3-4.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import ast
from ._contexts import Before, Group, Picks, select_any, select_disj, select_not, select_seq
from ._definitions import LeafSpec, OperatorSpec, ResolvedDefinition
from ._errors import ConditionError, InvalidArgumentError
from ._events import (
    CompositeEvent,
    CompositeEventType,
    Event,
    EventType,
    Op,
    PrimitiveEvent,
    PrimitiveEventType,
    _composite,
    trusted_path_instance,
)
from ._paths import PathInstance, PathType, _offset, intersect_ab

__all__ = ["TreeOptions", "Leaf", "OperatorNode", "MultNode", "EventTree", "WATCH"]


@dataclass(frozen=True, slots=True)
class TreeOptions:
    """The graph-wide defaults an operator uses where its ``with`` modifiers are silent."""

    context: ast.Context = ast.Context.CHRONICLE
    hierarchical: bool = True
    semantics: str = "interval"
    #: Resolves path instances and compiles termination conditions (None: conditions refused).
    documents: Any = None
    #: Receives a failing condition's error; by default it becomes a RuntimeWarning.
    report: Callable[[ConditionError], Any] | None = None


def before_interval(a: Event, b: Event) -> bool:
    """Interval-based order (section 3.1): ``a``'s interval ends before ``b``'s starts."""
    return a.end < b.start


def before_detection(a: Event, b: Event) -> bool:
    """Snoop's detection-based order: ``a`` was detected at an earlier tick than ``b``."""
    return a.ts < b.ts


SEMANTICS: dict[str, Before] = {"interval": before_interval, "detection": before_detection}


class Leaf:
    """An event type node: forwards each compatible event to its parent operator.

    A multiplicity node with a zero lower bound also has a *watch* leaf (index :data:`WATCH`)
    for ``*(pt)`` of its own path type: it sees the creation of the path instances it stands
    for (rule (iv) of processTree, section 4).
    """

    __slots__ = ("et", "index", "parent", "spec", "tree")

    def __init__(self, spec: LeafSpec, parent: OperatorNode, index: int, tree: EventTree) -> None:
        self.et: EventType = spec.et
        self.spec = spec
        self.parent = parent
        self.index = index
        self.tree = tree


#: The child index of a multiplicity node's watch leaf.
WATCH = -1

_Select = Callable[[Group, int, Event], list[Picks]]
_NULL = object()


class _Held:
    """A potential composite event an operator holds back (section 3.3).

    ``terminated`` tells its termination mode has let it go (always, for earliest); it is
    raised once its condition, if any, holds. ``fresh`` marks it as detected in this tick.
    """

    __slots__ = ("event", "fresh", "terminated")

    def __init__(self, event: CompositeEvent, terminated: bool) -> None:
        self.event = event
        self.terminated = terminated
        self.fresh = True


def _span(picks: tuple[Event, ...]) -> tuple[int, int]:
    """The interval of a composite: spans its constituents' (section 3.1).

    A composite without constituents (raised by a zero lower bound, Example 16) spans nothing,
    so it does not stretch the interval of a composite it becomes part of.
    """
    lo = hi = None
    for e in picks:
        if type(e) is PrimitiveEvent:
            start = end = e.ts
        elif e.constituents:  # type: ignore[union-attr]  # a composite: `type() is` does not narrow
            start, end = e.interval
        else:
            continue
        if lo is None or start < lo:
            lo = start
        if hi is None or end > hi:
            hi = end
    if lo is None or hi is None:  # only composites without constituents: their own ticks
        return (min(e.start for e in picks), max(e.end for e in picks))
    return (lo, hi)


class OperatorNode:
    """An operator node with its fixed path type, context, termination mode and condition.

    Child events are kept in groups (one per projection on the node's path type in the
    hierarchical context, one per document otherwise); the node's Snoop context combines them
    into *potential* composite events. In earliest mode without a condition those are raised
    at once; otherwise they are held (:class:`_Held`, keyed like the groups) until the mode
    lets them go and the condition holds (section 3.3):

    * ``non-local``: at the first primitive event of the same document outside the subtree
      rooted at the potential event's path instance (the manipulation moved elsewhere);
    * ``custom``: when the graph is flushed or closed;
    * ``when``: the condition is tested when the potential event is detected or let go, and
      again at every later event inside its subtree (rule (ii) of processTree).

    A held event is unconsumed: in the cumulative context it takes in the events its group
    receives at a terminating child until it is raised (the later a composite event is raised,
    the more constituents it has).
    """

    __slots__ = (
        "_absorbs",
        "_bounds",
        "_select",
        "_terminators_first",
        "_tree",
        "_types",
        "condition",
        "context",
        "defers",
        "groups",
        "held",
        "hierarchical",
        "index",
        "mode",
        "name",
        "observes",
        "parent",
        "pending",
        "pt",
        "spec",
        "width",
    )

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before) -> None:
        mods = spec.mods
        self.spec = spec
        self.pt: PathType = spec.pt
        self.context: ast.Context = mods.context or options.context
        self.hierarchical: bool = (options.hierarchical if mods.hierarchical is None
                                   else mods.hierarchical)
        self.mode: ast.Mode = mods.mode or ast.Mode.EARLIEST
        self.condition: Callable[[CompositeEvent], bool] | None = None
        if mods.when is not None:
            self.condition = _condition(options, mods.when)
        #: Whether potential events may be held back instead of raised when detected.
        self.defers = self.mode is not ast.Mode.EARLIEST or self.condition is not None
        #: Whether it must see every primitive event while it holds potential events.
        self.observes = self.mode is ast.Mode.NON_LOCAL or self.condition is not None
        self.held: dict[Hashable, list[_Held]] = {}
        self.parent: OperatorNode | None = None
        self.index = 0
        self.width = len(spec.children)
        self.groups: dict[Hashable, Group] = {}
        self.pending: list[tuple[int, Event]] = []
        self.name = tree.name
        self._tree = tree
        self._select: _Select | None = _selector(spec.expr, self.context, before)
        # One event can reach several leaves of a sequence. Within a tick it must end the
        # chains that older events started before it starts its own: otherwise, in the recent
        # context, it would replace the initiator it should pair with. (Same-tick events never
        # precede each other, so no other context can tell the difference.)
        self._terminators_first = isinstance(spec.expr, (ast.Seq, ast.Not))
        # Children whose events a held potential event takes in (cumulative context): those
        # that can terminate the operator.
        expr = spec.expr
        terminating: frozenset[int] = frozenset()
        if self.defers and self.context is ast.Context.CUMULATIVE:
            if isinstance(expr, (ast.Conj, ast.AnyOf)):
                terminating = frozenset(range(self.width))
            elif isinstance(expr, (ast.Seq, ast.Not)):
                terminating = frozenset((self.width - 1,))
        self._absorbs = terminating
        # Per path type of arriving events: where the projection's ids lie, and the type (with
        # the absolute path type) of composites built from them (π and ∩ab, section 3.1).
        self._bounds: dict[PathType, tuple[int, int] | object | None] = {}
        self._types: dict[PathType, CompositeEventType] = {}

    def arrive(self, child: int, event: Event) -> None:
        self.pending.append((child, event))

    def _bounds_for(self, pt: PathType) -> tuple[int, int] | None:
        """Where ``π`` on this node's path type finds its ids in instances of ``pt`` (§3.1)."""
        c = 0 if pt == self.pt else _offset(self.pt, pt)
        bounds = None if c is None else (c, c + len(self.pt))
        self._bounds[pt] = bounds
        return bounds

    def key(self, event: Event) -> Hashable:
        """The group ``event`` belongs to, or ``_NULL`` if its projection is null."""
        pi = event.pi
        found = self._bounds.get(pi.pt, _NULL)
        bounds = self._bounds_for(pi.pt) if found is _NULL else found
        if bounds is None:
            return _NULL
        assert isinstance(bounds, tuple)
        return (event.doc, pi.ids[bounds[0]:bounds[1]]) if self.hierarchical else event.doc

    def buffer(self, event: Event, child: int) -> list[Event] | None:
        """The buffer of child ``child`` that would store ``event`` (None if no group has it)."""
        key = self.key(event)
        group = self.groups.get(key) if key is not _NULL else None
        return group.bufs[child] if group is not None else None

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        """Combine this tick's arrivals, in arrival order; return the composites raised.

        Each arrival joins the group of its projection on the node's path type (one group per
        document in the plain contexts); an arrival whose projection is null is never
        combined (section 3.1).
        """
        arrivals, self.pending = self.pending, []
        if self._terminators_first and len(arrivals) > 1:
            arrivals.sort(key=lambda arrival: -arrival[0])
        raised: list[CompositeEvent] = []
        touched: list[tuple[Hashable, Group]] = []
        groups = self.groups
        select = self._select
        assert select is not None
        bounds_of = self._bounds
        hierarchical = self.hierarchical
        absorbs = self._absorbs
        defers = self.defers
        for child, event in arrivals:
            # :meth:`key`, inlined: this loop runs for every event a leaf takes.
            pi = event.pi
            bounds = bounds_of.get(pi.pt, _NULL)
            if bounds is _NULL:
                bounds = self._bounds_for(pi.pt)
            if bounds is None:
                continue
            key: Hashable = (event.doc, pi.ids[bounds[0]:bounds[1]]) if hierarchical else event.doc  # type: ignore[index]  # bounds is a pair here
            if absorbs and child in absorbs and key in self.held:
                self._absorb(self.held[key][-1], event)
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = Group(self.width)
            touched.append((key, group))
            for picks in select(group, child, event):
                c = self._compose(picks, tick)
                if defers:
                    self._emit(c, key, raised)
                else:
                    raised.append(c)
        for key, group in touched:
            if group.taken is not None:
                group.end_tick()
            if not any(group.bufs) and key in groups:
                del groups[key]
        return raised

    def _compose(self, picks: Picks, tick: int, pi: PathInstance | None = None
                 ) -> CompositeEvent:
        first = picks[0]
        pt = first.pi.pt
        et = self._types.get(pt)
        if et is None:
            abs_pt = intersect_ab(self.pt, pt)
            assert abs_pt is not None, "arrivals with a null projection are filtered out"
            et = self._types[pt] = CompositeEventType(self.name, abs_pt)
        if pi is None:
            pi = trusted_path_instance(et.pt, first.pi.ids[:len(et.pt)])
        ident = "" if self.defers else self._tree.next_id()
        return _composite(ident, et, pi, picks, _span(picks), tick, first.doc)

    def _emit(self, c: CompositeEvent, key: Hashable, raised: list[CompositeEvent]) -> None:
        """Raise potential event ``c`` now, or hold it back (mode, condition)."""
        if not self.defers:
            raised.append(c)
        else:
            self.held.setdefault(key, []).append(
                _Held(c, terminated=self.mode is ast.Mode.EARLIEST))

    def _absorb(self, held: _Held, event: Event) -> None:
        c = held.event
        picks = c.constituents + (event,)
        held.event = dataclasses.replace(c, constituents=picks, interval=_span(picks))

    # --- held potential events ----------------------------------------------------------------

    def observe(self, event: PrimitiveEvent, tick: int) -> list[CompositeEvent]:
        """Let go of held events as ``event`` decides; return those raised (section 3.3).

        Non-local mode lets a held event go at the first event of its document outside its
        subtree; a condition is tested when the event was detected in this tick, has just been
        let go, or ``event`` happened inside its subtree.
        """
        non_local = self.mode is ast.Mode.NON_LOCAL
        out: list[CompositeEvent] = []
        for key in list(self.held):
            keep: list[_Held] = []
            for h in self.held[key]:
                c = h.event
                if c.doc != event.doc:
                    h.fresh = False
                    keep.append(h)
                    continue
                n = len(c.pi.ids)
                inside = event.pi.ids[:n] == c.pi.ids
                let_go = non_local and not h.terminated and not inside
                if let_go:
                    h.terminated = True
                test = h.terminated and (h.fresh or let_go or inside)
                h.fresh = False
                if not test:
                    keep.append(h)
                elif self._passes(h, keep):
                    out.append(self._raise(c, tick))
            self._store_held(key, keep)
        return out

    def flush(self, tick: int) -> list[CompositeEvent]:
        """Let go of every event held by non-local or custom mode; raise those that pass.

        Events held only by a condition (earliest mode) stay held; those detected in this
        tick have their condition tested, as they would have at the next event.
        """
        earliest = self.mode is ast.Mode.EARLIEST
        out: list[CompositeEvent] = []
        for key in list(self.held):
            keep: list[_Held] = []
            for h in self.held[key]:
                test = not earliest or h.fresh
                h.terminated = True
                h.fresh = False
                if not test:
                    keep.append(h)
                elif self._passes(h, keep):
                    out.append(self._raise(h.event, tick))
            self._store_held(key, keep)
        return out

    def _store_held(self, key: Hashable, keep: list[_Held]) -> None:
        if keep:
            self.held[key] = keep
        else:
            del self.held[key]

    def _passes(self, h: _Held, keep: list[_Held]) -> bool:
        """Whether a let-go held event may be raised; if it must wait, it goes to ``keep``."""
        if self.condition is None:
            return True
        try:
            ok = self.condition(h.event)
        except ConditionError as exc:
            self._tree.report(exc)
            return False  # not raised, not kept: it would fail again
        if not ok:
            keep.append(h)
        return ok

    def _raise(self, c: CompositeEvent, tick: int) -> CompositeEvent:
        return dataclasses.replace(c, id=self._tree.next_id(), ts=tick)

    def held_events(self) -> list[Event]:
        """Every event stored in this node's groups (for inspection and tests)."""
        return [e for g in self.groups.values() for e in g.events()]

    def potential_events(self) -> list[CompositeEvent]:
        """The potential composite events this node holds back."""
        return [h.event for entries in self.held.values() for h in entries]


class _Run:
    """A multiplicity node's state for one path instance: the integrating composite event."""

    __slots__ = ("cur", "tick", "waiting")

    def __init__(self) -> None:
        self.cur: CompositeEvent | None = None
        self.tick = -1  # the tick ``cur`` was raised or held at
        self.waiting: list[Event] = []  # child events since integration started over


class MultNode(OperatorNode):
    """The multiplicity operator ×[l,u] with integrative semantics (section 3.2).

    Per path instance of its path type, the l-th child event raises a composite event; each
    further one raises a composite integrating the previous one's constituents while that one
    is unconsumed, and the previous one is waived (taken back from wherever it is stored).
    Integration starts over when ``u`` is reached or the integrating event was consumed. With
    ``l = 0`` the creation of a path instance of the node's path type raises a composite
    without constituents (Example 16), and an event at that instance raises a new one when the
    last one was consumed (rule (iv) of processTree). The Snoop context plays no part.

    ``consumers`` lists the (operator node, child index) pairs that store this node's events:
    its parent, or for a tree's root, the leaves of the trees that reuse it.
    """

    __slots__ = ("_sweep_at", "consumers", "high", "low", "runs")

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before) -> None:
        super().__init__(spec, tree, options, before)
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
        for child, event in arrivals:
            key = self.key(event)
            if key is _NULL:
                continue
            if child == WATCH:
                self._watch(key, event, tick, raised)
                continue
            run = self.runs.get(key)
            if run is None:
                run = self.runs[key] = _Run()
            cur = run.cur
            places = None
            if cur is not None and (self.high is None or len(cur.constituents) < self.high):
                places = self._locate(key, run, raised)
            if places is not None:
                assert cur is not None
                c = self._compose(cur.constituents + (event,), tick, cur.pi)
                run.cur, run.tick = c, tick
                if self._replace(cur, c, places):
                    continue
            else:
                run.waiting.append(event)
                if len(run.waiting) < self.low:
                    continue
                c = self._compose(tuple(run.waiting), tick)
                run.cur, run.tick, run.waiting = c, tick, []
            self._emit(c, key, raised)
        return raised

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
        ident = "" if self.defers else self._tree.next_id()
        c = CompositeEvent(ident, CompositeEventType(self.name, event.pi.pt), event.pi, (),
                           (event.ts, event.ts), tick, event.doc)
        run.cur, run.tick, run.waiting = c, tick, []
        self._emit(c, key, raised)

    def _locate(self, key: Hashable, run: _Run, raised: list[CompositeEvent]
                ) -> list[list[Any] | _Held] | None:
        """Where ``run.cur`` is still unconsumed, or None if it was consumed.

        Unconsumed means held back by this node, raised in this tick, stored by a consumer,
        or a constituent of a potential event a consumer holds back (a held event is not
        stored in the tree yet, section 3.3, so it has consumed nothing). An event nothing
        consumes stays unconsumed.
        """
        cur = run.cur
        entries = self.held.get(key, [])
        if any(h.event is cur for h in entries):
            return [entries]
        if run.tick == self._tree.tick and any(c is cur for c in raised):
            return [raised]
        if not self.consumers:
            return []
        places: list[list[Any] | _Held] = []
        assert cur is not None
        for node, index in self.consumers:
            buf = node.buffer(cur, index)
            if buf is not None and any(x is cur for x in buf):
                places.append(buf)
            ckey = node.key(cur)
            for h in node.held.get(ckey, ()) if ckey is not _NULL else ():
                if any(x is cur for x in h.event.constituents):
                    places.append(h)
        return places or None

    def _replace(self, cur: CompositeEvent, c: CompositeEvent,
                 places: list[list[Any] | _Held]) -> bool:
        """Waive ``cur`` for ``c`` (section 3.2); True if ``c`` took its place in a held event.

        ``cur`` leaves the lists that store it; inside a consumer's held potential event ``c``
        replaces it, so the potential event carries the integrated constituents when raised.
        """
        inside = False
        for place in places:
            if isinstance(place, _Held):
                old = place.event
                picks = tuple(c if x is cur else x for x in old.constituents)
                place.event = dataclasses.replace(old, constituents=picks,
                                                  interval=_span(picks))
                inside = True
            else:
                place[:] = [x for x in place
                            if x is not cur and getattr(x, "event", None) is not cur]
        for key in [k for k, entries in self.held.items() if not entries]:
            del self.held[key]
        if inside and self._tree.trace is not None:
            self._tree.trace(self, c)
        return inside

    def _raise(self, c: CompositeEvent, tick: int) -> CompositeEvent:
        out = super()._raise(c, tick)
        run = self.runs.get(self.key(c))
        if run is not None and run.cur is c:
            run.cur, run.tick = out, tick
        return out


def _condition(options: TreeOptions, expression: str) -> Callable[[CompositeEvent], bool]:
    """Compile ``expression`` with the graph's documents into a test of a potential event."""
    documents = options.documents
    assert documents is not None, "the graph rejects conditions without documents"
    test = documents.compile(expression)

    def check(c: CompositeEvent) -> bool:
        try:
            node = documents.resolve(c.doc, c.pi)
            return node is not None and bool(test(node))
        except Exception as exc:  # a failing condition must not stop detection (issue 4)
            raise ConditionError(f"{type(exc).__name__}: {exc}", definition=c.type.name or "",
                                 condition=expression, doc=c.doc, path=str(c.pi),
                                 cause=exc) from exc
    return check


def _selector(expr: ast.Operator, context: ast.Context, before: Before) -> _Select | None:
    # partial objects call in C: one Python frame less per arrival than a lambda.
    if isinstance(expr, ast.Conj):
        return partial(select_any, context, len(expr.children), before=before)
    if isinstance(expr, ast.AnyOf):
        return partial(select_any, context, expr.n, before=before)
    if isinstance(expr, ast.Seq):
        return partial(select_seq, context, before=before)
    if isinstance(expr, ast.Not):
        return partial(select_not, context, before=before)
    if isinstance(expr, ast.Disj):
        return partial(select_disj, context, before=before)
    if isinstance(expr, ast.Mult):
        return None  # MultNode integrates on its own
    raise NotImplementedError(f"{type(expr).__name__} operators are not evaluated")


class EventTree:
    """The event tree of one definition: its leaves and its operators in post-order.

    ``report`` receives the :class:`ConditionError` of a condition that failed.
    """

    __slots__ = (
        "_count",
        "closed",
        "definition",
        "leaves",
        "name",
        "observers",
        "operators",
        "position",
        "report",
        "root",
        "tick",
        "trace",
    )

    def __init__(self, definition: ResolvedDefinition, options: TreeOptions) -> None:
        if not isinstance(definition.root, OperatorSpec):
            raise InvalidArgumentError(f"{definition.name} is an alias and has no event tree")
        self.definition = definition
        self.name = definition.name
        self.leaves: list[Leaf] = []
        self.operators: list[OperatorNode] = []
        self._count = 0
        self.tick = 0  # the tick being processed
        self.position = 0  # the tree's place in its graph's processing order
        self.closed = False
        #: Called with (operator node, composite) for every composite any operator raises.
        self.trace: Callable[[OperatorNode, CompositeEvent], Any] | None = None
        self.report: Callable[[ConditionError], Any] = options.report or _raise_error
        before = SEMANTICS[options.semantics]
        self.root = self._build(definition.root, options, before)
        #: Nodes that must see every primitive event while they hold potential events.
        self.observers = [n for n in self.operators if n.observes]

    def _build(self, spec: OperatorSpec, options: TreeOptions, before: Before) -> OperatorNode:
        cls = MultNode if isinstance(spec.expr, ast.Mult) else OperatorNode
        node = cls(spec, self, options, before)
        for i, child in enumerate(spec.children):
            if isinstance(child, OperatorSpec):
                sub = self._build(child, options, before)
                sub.parent, sub.index = node, i
                if isinstance(sub, MultNode):
                    sub.consumers.append((node, i))
            else:
                self.leaves.append(Leaf(child, node, i, self))
        if isinstance(node, MultNode) and (watch := node.watch_type()) is not None:
            self.leaves.append(Leaf(LeafSpec(watch, spec.expr), node, WATCH, self))
        self.operators.append(node)  # after its children: post-order
        return node

    def next_id(self) -> str:
        self._count += 1
        return f"{self.name}#{self._count}"

    def holding(self) -> bool:
        """Whether a node that watches every event holds potential events."""
        return any(node.held for node in self.observers)

    def process(self, tick: int, event: PrimitiveEvent | None = None) -> list[CompositeEvent]:
        """Evaluate every operator that received events or must see ``event`` (processTree).

        Children come first (post-order). Returns the composite events raised by the root.
        """
        self.tick = tick
        out: list[CompositeEvent] = []
        for node in self.operators:
            raised: list[CompositeEvent] | None = None
            if node.pending:
                raised = node.evaluate(tick)
            if node.held and event is not None and node.observes:
                seen = node.observe(event, tick)
                raised = seen if raised is None else raised + seen
            if raised:
                self._forward(node, raised, out)
        return out

    def flush(self, tick: int) -> list[CompositeEvent]:
        """Evaluate what arrived, then let go of what non-local and custom nodes hold (§3.3)."""
        self.tick = tick
        out: list[CompositeEvent] = []
        for node in self.operators:
            raised = node.evaluate(tick) if node.pending else []
            raised += node.flush(tick)
            if raised:
                self._forward(node, raised, out)
        return out

    def _forward(self, node: OperatorNode, raised: list[CompositeEvent],
                 out: list[CompositeEvent]) -> None:
        if self.trace is not None:
            for c in raised:
                self.trace(node, c)
        if node.parent is None:
            out.extend(raised)
        else:
            for c in raised:
                node.parent.arrive(node.index, c)

    def held(self) -> list[Event]:
        """The events stored anywhere in the tree, by operator in post-order."""
        return [e for node in self.operators for e in node.held_events()]

    def potential(self) -> list[CompositeEvent]:
        """The potential composite events held back anywhere in the tree."""
        return [c for node in self.operators for c in node.potential_events()]


def _raise_error(exc: ConditionError) -> None:
    warnings.warn(str(exc), RuntimeWarning, stacklevel=2)
