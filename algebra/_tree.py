"""Event trees: event type nodes and operator nodes that combine events (seed 000, 2.2-3.1).

An :class:`EventTree` realises one definition. Its leaves (event type nodes) take the events
compatible with their event type and hand them to their parent operator; its operator nodes
(:mod:`._operator`, and :mod:`._multiplicity` for ×[l,u]) combine them, each composed of a
grouping, a Snoop context and a termination. A tree is processed once per tick
(``processTree``), its operators in post-order, so every operator is evaluated after its
children. Events of different documents are never combined, in any context.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 2.2-4.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable
from types import MethodType
from typing import TYPE_CHECKING, Any

from xmlevents._foundation.tables import complete

from . import ast
from ._contexts import Before
from ._definitions import LeafSpec, OperatorSpec, ResolvedDefinition
from ._errors import ConditionError, InvalidArgumentError
from ._events import CompositeEvent, Event, EventType, PrimitiveEvent
from ._multiplicity import WATCH, EarliestMult, MultNode, specialise_mult
from ._operator import (
    DIRECT,
    SEMANTICS,
    NonLocalConj,
    OperatorNode,
    TreeOptions,
    specialise,
)
from ._window import Bounds

if TYPE_CHECKING:
    from ._sharing import Core

__all__ = ["Leaf", "EventTree", "PUSHES", "Feeder", "FEEDERS"]

#: The nodes with ``push`` (see the fast paths of ``_operator`` and ``_multiplicity``).
PUSHES = DIRECT | {NonLocalConj, EarliestMult}


class Leaf:
    """An event type node: forwards each compatible event to its parent operator.

    A multiplicity node with a zero lower bound also has a *watch* leaf (index
    :data:`~._multiplicity.WATCH`) for ``*(pt)`` of its own path type: it sees the creation
    of the path instances it stands for (rule (iv) of processTree, section 4).
    """

    __slots__ = ("et", "index", "parent", "plan", "spec", "tree")

    def __init__(self, spec: LeafSpec, parent: OperatorNode, index: int, tree: EventTree) -> None:
        self.et: EventType = spec.et
        self.spec = spec
        self.parent = parent
        self.index = index
        self.tree = tree
        #: Where its chain meets the chain of the tree's watcher (see EventTree.walk).
        self.plan: tuple[OperatorNode | None, bool] = (None, True)


class EventTree:
    """The event tree of one definition: its leaves and its operators in post-order.

    ``report`` receives the :class:`ConditionError` of a condition that failed. A *hidden*
    tree is a shared subtree's (:mod:`._sharing`): ``bounds`` are then its ancestors' windows.
    """

    __slots__ = (
        "_count",
        "_held",
        "closed",
        "core",
        "definition",
        "direct",
        "feeder",
        "feeds",
        "leaves",
        "name",
        "observers",
        "operators",
        "position",
        "report",
        "root",
        "take",
        "tick",
        "trace",
        "watcher",
    )

    def __init__(self, definition: ResolvedDefinition, options: TreeOptions,
                 bounds: Bounds | None = None, *, hidden: bool = False) -> None:
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
        #: The shared core this hidden tree builds (set by the core), else None.
        self.core: Core | None = None
        before = SEMANTICS[options.semantics]
        if bounds is None:
            bounds = Bounds().tighten(options.within)
        self.root = self._build(definition.root, options, before, bounds, not hidden)
        #: Nodes that must see every primitive event while they hold potential events.
        self.observers = [n for n in self.operators if n.observes]
        #: Whether every node is a fast path with ``push`` that never holds anything (see
        #: ``_operator.DIRECT``): an event then goes straight up its leaf's chain of nodes
        #: (``EventGraph.feed``), unless the tree is traced or is a shared subtree's hidden
        #: tree.
        pushes = not hidden and all(type(n) in PUSHES for n in self.operators)
        self.direct = pushes and not self.observers
        #: The one node that watches every event while it holds potential events, in a tree
        #: otherwise made of fast paths with ``push``: such a tree is processed by
        #: :meth:`walk`. None otherwise.
        self.watcher: OperatorNode | None = (
            self.observers[0] if pushes and len(self.observers) == 1 else None)
        if self.watcher is not None:
            self._plan(self.watcher)
        self._choose_feeder()
        #: Whether other trees take its root's composites (set by the graph's wiring).
        self.feeds = True
        # Their terminations' dicts of held events (each keeps its dict for its lifetime).
        self._held = [n.termination.held for n in self.observers]

    def _build(self, spec: OperatorSpec, options: TreeOptions, before: Before,
               bounds: Bounds, share: bool = True) -> OperatorNode:
        if share and options.sharing is not None:
            view = options.sharing.view(spec, self, before, bounds)
            if view is not None:  # a subtree another definition has: built once
                self.operators.append(view)
                return view
        # A window applies to the node that sets it and to every node beneath it: the
        # smallest of its own, its ancestors' and the graph's, of each kind.
        bounds = bounds.tighten(spec.mods.within)
        node = (specialise_mult(MultNode(spec, self, options, before, bounds))
                if isinstance(spec.expr, ast.Mult)
                else specialise(OperatorNode(spec, self, options, before, bounds)))
        for i, child in enumerate(spec.children):
            if isinstance(child, OperatorSpec):
                sub = self._build(child, options, before, bounds)
                sub.parent, sub.index = node, i
                if isinstance(sub, MultNode):
                    sub.consumers.append((node, i))
            else:
                self.leaves.append(Leaf(child, node, i, self))
        if isinstance(node, MultNode) and (watch := node.watch_type()) is not None:
            self.leaves.append(Leaf(LeafSpec(watch, spec.expr), node, WATCH, self))
        self.operators.append(node)  # after its children: post-order
        return node

    def traced(self) -> None:
        """The tree is traced from now on: it takes the general path."""
        self.direct = False
        self.watcher = None
        self._choose_feeder()

    def _choose_feeder(self) -> None:
        #: How the tree takes an event that one leaf (or, with a watcher, none) takes: chosen
        #: once from :data:`FEEDERS` (issue 28), so ``EventGraph.feed`` calls :attr:`take`
        #: without asking which kind of tree this is.
        self.feeder = (Feeder.DIRECT if self.direct
                       else Feeder.WALK if self.watcher is not None else Feeder.PROCESS)
        #: ``FEEDERS[self.feeder]``, bound to this tree: ``take(leaf, event, tick)``.
        self.take: Callable[[Leaf | None, PrimitiveEvent, int], list[CompositeEvent]] = (
            MethodType(FEEDERS[self.feeder], self))

    def process_leaf(self, leaf: Leaf | None, event: PrimitiveEvent, tick: int
                     ) -> list[CompositeEvent]:
        """process() when ``leaf`` alone (or none) takes ``event``: the general path."""
        if leaf is not None:
            leaf.parent.pending.append((leaf.index, event))
        return self.process(tick, event)

    def chain(self, leaf: Leaf, event: PrimitiveEvent, tick: int) -> list[CompositeEvent]:
        """process() for a :attr:`direct` tree when ``leaf`` alone takes ``event``: up the
        leaf's chain of nodes, each taking one arrival and giving at most one composite to
        its parent — what process() does, in the same order, without pending lists or a walk
        over every node. The one definition of the direct path (``Feeder.DIRECT``)."""
        self.tick = tick
        node: Any = leaf.parent
        child = leaf.index
        x: Event = event
        while (c := node.push(child, x, tick)) is not None:
            parent = node.parent
            if parent is None:
                return [c]
            child, node, x = node.index, parent, c
        return []

    # --- the walk: a tree of fast paths with one watcher --------------------------------------
    #
    # A tree of nodes with ``push`` one of which watches every event while it holds potential
    # events (a non-local conjunction: issue 4's tree) is processed without pending lists when
    # one leaf (or none, the watcher alone) takes the event. process() evaluates the nodes in
    # post-order, each with the arrivals of the tick in the order they came: the leaf's
    # (delivered before), then its children's composites in post-order, the watcher's own
    # composites before those its observation lets go. Only the leaf's chain of nodes and the
    # watcher's receive anything, so the walk goes up those two chains: below the node where
    # they meet (``Leaf.plan``) each is an independent subtree, taken in post-order (which
    # side first also decides the order composites are numbered in); from there one chain.
    # A node with a single arrival pushes it; several arrivals (the watcher let several go)
    # go through the node's ``evaluate``, as process() would. The direct-against-general
    # tests (tests/algebra/test_fast_paths.py) compare both.

    def _plan(self, watcher: OperatorNode) -> None:
        """Each leaf's plan: (None, True) if the watcher is on its chain, else (the node where
        the chains meet, whether the leaf's side comes first in post-order)."""
        for leaf in self.leaves:
            chain: list[OperatorNode] = []
            node: OperatorNode | None = leaf.parent
            while node is not None:
                chain.append(node)
                node = node.parent
            if any(n is watcher for n in chain):
                leaf.plan = (None, True)
                continue
            below, meet = watcher, watcher.parent
            while not any(n is meet for n in chain):
                assert meet is not None
                below, meet = meet, meet.parent
            if leaf.parent is meet:
                leaf.plan = (meet, True)  # the leaf's event is in meet's pending first
            else:
                side = chain[next(i for i, n in enumerate(chain) if n is meet) - 1]
                leaf.plan = (meet, side.index < below.index)

    def walk(self, leaf: Leaf | None, event: PrimitiveEvent, tick: int
             ) -> list[CompositeEvent]:
        """process() for a tree with a :attr:`watcher`, when ``leaf`` alone takes ``event``
        (None: no leaf does, and the watcher holds potential events). See above."""
        self.tick = tick
        watcher: Any = self.watcher
        if leaf is None:  # the watcher alone sees the event: most pass inside what it holds
            if not watcher.termination.held:
                return []
            xs = watcher.termination.observe(event, tick)
            return self.up(watcher, xs, tick) if xs else xs
        meet: Any
        meet, leaf_first = leaf.plan
        node: Any = leaf.parent
        child = leaf.index
        x: Any = event
        if meet is None:  # the watcher is on the leaf's chain
            while node is not watcher:
                x = node.push(child, x, tick)
                if x is None:  # the chain stops below the watcher
                    if watcher.termination.held:
                        xs = watcher.termination.observe(event, tick)
                        return self.up(watcher, xs, tick) if xs else xs
                    return []
                child, node = node.index, node.parent
            c = node.push(child, x, tick)
            xs = [] if c is None else [c]
            if watcher.termination.held:
                xs += watcher.termination.observe(event, tick)
            return self.up(watcher, xs, tick) if xs else xs  # mostly nothing goes up
        # The two chains meet at ``meet``: each side up to it, in post-order.
        # (_side's answer at once for a leaf right under ``meet``: its event itself)
        if leaf_first:
            mine = [(child, x)] if node is meet else self._side(leaf, event, meet, tick)
            theirs = self._observed(watcher, event, meet, tick)
            arrivals = mine + theirs
        else:
            theirs = self._observed(watcher, event, meet, tick)
            mine = [(child, x)] if node is meet else self._side(leaf, event, meet, tick)
            arrivals = theirs + mine
        if not arrivals:
            return []
        if len(arrivals) == 1:
            child, x = arrivals[0]
            c = meet.push(child, x, tick)
            xs = [] if c is None else [c]
        else:
            meet.pending = arrivals
            xs = meet.evaluate(tick)
        return self.up(meet, xs, tick)

    @staticmethod
    def _side(leaf: Leaf, event: Event, meet: OperatorNode, tick: int
              ) -> list[tuple[int, Event]]:
        """The arrival the leaf's chain gives ``meet`` (none if it stops below)."""
        node: Any = leaf.parent
        child = leaf.index
        x: Any = event
        while node is not meet:
            x = node.push(child, x, tick)
            if x is None:
                return []
            child, node = node.index, node.parent
        return [(child, x)]

    def _observed(self, watcher: Any, event: PrimitiveEvent, meet: OperatorNode, tick: int
                  ) -> list[tuple[int, Event]]:
        """The arrivals the watcher's chain gives ``meet``: what the watcher lets go, carried
        up to ``meet``'s child."""
        if not watcher.termination.held:
            return []
        xs = watcher.termination.observe(event, tick)
        node = watcher
        while xs and node.parent is not meet:
            xs = self._step(node.parent, node.index, xs, tick)
            node = node.parent
        return [(node.index, c) for c in xs]

    @staticmethod
    def _step(node: Any, child: int, xs: list[CompositeEvent], tick: int
              ) -> list[CompositeEvent]:
        """``node``'s composites from the arrivals ``xs`` of its child ``child``."""
        if len(xs) == 1:
            c = node.push(child, xs[0], tick)
            return [] if c is None else [c]
        node.pending = [(child, x) for x in xs]
        raised: list[CompositeEvent] = node.evaluate(tick)
        return raised

    def up(self, node: Any, xs: list[CompositeEvent], tick: int) -> list[CompositeEvent]:
        """Carry ``node``'s composites ``xs`` up to the root; the root's composites."""
        while xs and node.parent is not None:
            xs = self._step(node.parent, node.index, xs, tick)
            node = node.parent
        return xs

    def next_id(self) -> str:
        self._count += 1
        return f"{self.name}#{self._count}"

    @property
    def counted(self) -> int:
        """How many composites the tree has numbered."""
        return self._count

    def advance(self, n: int) -> None:
        """Count ``n`` composites numbered elsewhere (a shared subtree's, :mod:`._sharing`)."""
        self._count += n

    def holding(self) -> bool:
        """Whether a node that watches every event holds potential events."""
        return any(self._held)  # asked at every event: no generator

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
            # ``observes`` first: a plain attribute, false for most nodes (held is a lookup).
            if node.observes and event is not None and node.termination.held:
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


class Feeder(enum.Enum):
    """How a tree takes a primitive event that one leaf (or none) takes (issue 28)."""

    #: Every node a fast path that never holds: up the leaf's chain (:meth:`EventTree.chain`).
    DIRECT = "direct"
    #: Fast paths and one watcher: up two chains (:meth:`EventTree.walk`).
    WALK = "walk"
    #: The general evaluation, every node in post-order (:meth:`EventTree.process_leaf`).
    PROCESS = "process"


#: The feeders, by kind; complete when the module is imported.
FEEDERS: dict[Feeder, Callable[..., list[CompositeEvent]]] = complete(Feeder, {
    Feeder.DIRECT: EventTree.chain,
    Feeder.WALK: EventTree.walk,
    Feeder.PROCESS: EventTree.process_leaf,
}, "how each kind of tree takes an event")
