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

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Hashable

from . import ast
from ._contexts import Before, Group, Picks, select_any, select_disj, select_not, select_seq
from ._definitions import LeafSpec, OperatorSpec, ResolvedDefinition
from ._events import CompositeEvent, CompositeEventType, Event, EventType
from ._paths import PathInstance, PathType, _offset, intersect_ab

__all__ = ["TreeOptions", "Leaf", "OperatorNode", "EventTree"]


@dataclass(frozen=True, slots=True)
class TreeOptions:
    """The graph-wide defaults an operator uses where its ``with`` modifiers are silent."""

    context: ast.Context = ast.Context.CHRONICLE
    hierarchical: bool = True
    semantics: str = "interval"


def before_interval(a: Event, b: Event) -> bool:
    """Interval-based order (section 3.1): ``a``'s interval ends before ``b``'s starts."""
    return a.end < b.start


def before_detection(a: Event, b: Event) -> bool:
    """Snoop's detection-based order: ``a`` was detected at an earlier tick than ``b``."""
    return a.ts < b.ts


SEMANTICS: dict[str, Before] = {"interval": before_interval, "detection": before_detection}


class Leaf:
    """An event type node: forwards each compatible event to its parent operator."""

    __slots__ = ("et", "spec", "parent", "index", "tree")

    def __init__(self, spec: LeafSpec, parent: OperatorNode, index: int, tree: EventTree) -> None:
        self.et: EventType = spec.et
        self.spec = spec
        self.parent = parent
        self.index = index
        self.tree = tree


_Select = Callable[[Group, int, Event], list[Picks]]
_NULL = object()


class OperatorNode:
    """An operator node with its fixed path type, context and groups of stored events."""

    __slots__ = ("spec", "pt", "context", "hierarchical", "parent", "index", "groups",
                 "pending", "name", "_select", "_bounds", "_types", "_tree", "width",
                 "_terminators_first")

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before) -> None:
        mods = spec.mods
        self.spec = spec
        self.pt: PathType = spec.pt
        self.context: ast.Context = mods.context or options.context
        self.hierarchical: bool = (options.hierarchical if mods.hierarchical is None
                                   else mods.hierarchical)
        self.parent: OperatorNode | None = None
        self.index = 0
        self.width = len(spec.children)
        self.groups: dict[Hashable, Group] = {}
        self.pending: list[tuple[int, Event]] = []
        self.name = tree.name
        self._tree = tree
        self._select: _Select = _selector(spec.expr, self.context, before)
        # One event can reach several leaves of a sequence. Within a tick it must end the
        # chains that older events started before it starts its own: otherwise, in the recent
        # context, it would replace the initiator it should pair with. (Same-tick events never
        # precede each other, so no other context can tell the difference.)
        self._terminators_first = isinstance(spec.expr, (ast.Seq, ast.Not))
        # Per path type of arriving events: where the projection's ids lie, and the type (with
        # the absolute path type) of composites built from them (π and ∩ab, section 3.1).
        self._bounds: dict[PathType, tuple[int, int] | None | object] = {}
        self._types: dict[PathType, CompositeEventType] = {}

    def arrive(self, child: int, event: Event) -> None:
        self.pending.append((child, event))

    def _bounds_for(self, pt: PathType) -> tuple[int, int] | None:
        """Where ``π`` on this node's path type finds its ids in instances of ``pt`` (§3.1)."""
        c = 0 if pt == self.pt else _offset(self.pt, pt)
        bounds = None if c is None else (c, c + len(self.pt))
        self._bounds[pt] = bounds
        return bounds

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
        all_bounds = self._bounds
        hierarchical = self.hierarchical
        for child, event in arrivals:
            pi = event.pi
            found = all_bounds.get(pi.pt, _NULL)
            bounds = self._bounds_for(pi.pt) if found is _NULL else found
            if bounds is None:
                continue
            assert isinstance(bounds, tuple)
            key: Hashable = (event.doc, pi.ids[bounds[0]:bounds[1]]) if hierarchical else event.doc
            group = groups.get(key)
            if group is None:
                group = groups[key] = Group(self.width)
            touched.append((key, group))
            for picks in select(group, child, event):
                raised.append(self._compose(picks, tick))
        for key, group in touched:
            group.end_tick()
            if group.is_empty() and key in groups:
                del groups[key]
        return raised

    def _compose(self, picks: Picks, tick: int) -> CompositeEvent:
        first = picks[0]
        pt = first.pi.pt
        et = self._types.get(pt)
        if et is None:
            abs_pt = intersect_ab(self.pt, pt)
            assert abs_pt is not None, "arrivals with a null projection are filtered out"
            et = self._types[pt] = CompositeEventType(self.name, abs_pt)
        pi = PathInstance(et.pt, first.pi.ids[:len(et.pt)])
        start = min([e.start for e in picks])
        end = max([e.end for e in picks])
        return CompositeEvent(self._tree.next_id(), et, pi, picks, (start, end), tick, first.doc)

    def held(self) -> list[Event]:
        """Every event stored in this node's groups (for inspection and tests)."""
        return [e for g in self.groups.values() for e in g.events()]


def _selector(expr: ast.Operator, context: ast.Context, before: Before) -> _Select:
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
    raise NotImplementedError(
        f"{type(expr).__name__} operators are not evaluated by this engine yet")


class EventTree:
    """The event tree of one definition: its leaves and its operators in post-order.

    Raises:
        NotImplementedError: for an operator this engine cannot evaluate.
    """

    __slots__ = ("definition", "name", "leaves", "operators", "root", "trace", "position",
                 "_count")

    def __init__(self, definition: ResolvedDefinition, options: TreeOptions) -> None:
        if not isinstance(definition.root, OperatorSpec):
            raise ValueError(f"{definition.name} is an alias and has no event tree")
        self.definition = definition
        self.name = definition.name
        self.leaves: list[Leaf] = []
        self.operators: list[OperatorNode] = []
        self._count = 0
        self.position = 0  # the tree's place in its graph's processing order
        #: Called with (operator node, composite) for every composite any operator raises.
        self.trace: Callable[[OperatorNode, CompositeEvent], Any] | None = None
        before = SEMANTICS[options.semantics]
        self.root = self._build(definition.root, options, before)

    def _build(self, spec: OperatorSpec, options: TreeOptions, before: Before) -> OperatorNode:
        node = OperatorNode(spec, self, options, before)
        for i, child in enumerate(spec.children):
            if isinstance(child, OperatorSpec):
                sub = self._build(child, options, before)
                sub.parent, sub.index = node, i
            else:
                self.leaves.append(Leaf(child, node, i, self))
        self.operators.append(node)  # after its children: post-order
        return node

    def next_id(self) -> str:
        self._count += 1
        return f"{self.name}#{self._count}"

    def process(self, tick: int) -> list[CompositeEvent]:
        """Evaluate every operator that received events, children first (processTree, §4).

        Returns the composite events raised by the root.
        """
        out: list[CompositeEvent] = []
        for node in self.operators:
            if not node.pending:
                continue
            raised = node.evaluate(tick)
            if self.trace is not None:
                for c in raised:
                    self.trace(node, c)
            if node.parent is None:
                out.extend(raised)
            else:
                for c in raised:
                    node.parent.arrive(node.index, c)
        return out

    def held(self) -> list[Event]:
        """The events stored anywhere in the tree, by operator in post-order."""
        return [e for node in self.operators for e in node.held()]
