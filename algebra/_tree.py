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

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import ast
from ._contexts import Before
from ._definitions import LeafSpec, OperatorSpec, ResolvedDefinition
from ._errors import ConditionError, InvalidArgumentError
from ._events import CompositeEvent, Event, EventType, PrimitiveEvent
from ._multiplicity import WATCH, MultNode
from ._operator import DIRECT, SEMANTICS, OperatorNode, TreeOptions, specialise
from ._window import Bounds

if TYPE_CHECKING:
    from ._sharing import Core

__all__ = ["Leaf", "EventTree"]


class Leaf:
    """An event type node: forwards each compatible event to its parent operator.

    A multiplicity node with a zero lower bound also has a *watch* leaf (index
    :data:`~._multiplicity.WATCH`) for ``*(pt)`` of its own path type: it sees the creation
    of the path instances it stands for (rule (iv) of processTree, section 4).
    """

    __slots__ = ("et", "index", "parent", "spec", "tree")

    def __init__(self, spec: LeafSpec, parent: OperatorNode, index: int, tree: EventTree) -> None:
        self.et: EventType = spec.et
        self.spec = spec
        self.parent = parent
        self.index = index
        self.tree = tree


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
        "feeds",
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
        #: Whether every node is a fast path with ``push`` (see ``_operator.DIRECT``): an
        #: event then goes straight up its leaf's chain of nodes (``EventGraph.feed``),
        #: unless the tree is traced or is a shared subtree's hidden tree.
        self.direct = not hidden and all(type(n) in DIRECT for n in self.operators)
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
        node = (MultNode(spec, self, options, before, bounds) if isinstance(spec.expr, ast.Mult)
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
