"""A deliberately naive reference evaluator of event trees, for tests only.

It re-implements, independently of ``algebra/_contexts.py`` and ``algebra/_tree.py``, what one
definition made of conjunctions, sequences and disjunctions over primitive leaves detects, in
the five Snoop contexts, plain or hierarchical (seed 000, sections 2.3 and 3.1), with
interval-based or detection-based semantics. Nothing is kept incrementally: each operator node
keeps the whole list of deliveries ``(tick, seq, child, event, group key)`` it ever received,
plus the sets of deliveries that were consumed (with the tick they were consumed at) or never
stored; whenever a rule needs a child's stored events it recomputes them by filtering the whole
list. The rules are those of the engine's documentation, read as literally as we can:

* a group is the whole node (per document) in plain contexts, the events of one projection on
  the operator's path type (per document) in the hierarchical one; an event whose projection
  is null is never combined;
* chronicle: the oldest stored event of every child, removed;
* recent: the most recent stored event of every child; a newer event of a child hides every
  older one for good; nothing else is removed;
* continuous: the terminator with the most recent event of every other child, those removed,
  repeated until nothing is left; removals take effect at the end of the tick; the terminator
  stays stored where it can start a composite (conjunction children, non-last sequence
  children);
* cumulative: all stored events of every child, removed;
* unrestricted: every combination, nothing removed;
* a sequence only combines chains ``x0 < x1 < ... < terminator`` (``<`` is the semantics'
  order); only its last child's events terminate and they are never stored; an event of a
  middle child that no stored event of the previous child precedes is never stored;
* a disjunction raises one composite per event, storing nothing;
* with a window of ``N`` ticks (issue 13), a stored event that started at ``s`` is no longer
  stored from tick ``s + N`` on, and an arriving event that started ``N`` ticks or more ago
  is never stored or combined: every composite spans fewer than ``N`` ticks.

Conventions the paper leaves open, shared with the engine so results compare exactly: "oldest"
and "most recent" mean delivery order; within a tick a node receives the primitive event at its
leaf children first (in child order), then the composites of its operator children in
post-order, each child's in the order raised, except that a sequence takes a tick's arrivals
at later children first (so an event that reaches two of its leaves ends older chains before it
starts its own); several composites raised for one terminator come
newest-first in the continuous context and oldest-first in the unrestricted one.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import pairwise, product

from xmlevents.algebra import (
    CompositeEvent,
    CompositeEventType,
    Conj,
    Disj,
    PathInstance,
    PathType,
    Primitive,
    PrimitiveEvent,
    Seq,
    compatible,
    intersect_ab,
    intersect_lb,
    project,
)
from xmlevents.algebra._parser import parse_definition

CONTEXTS = ("chronicle", "recent", "continuous", "cumulative", "unrestricted")


@dataclass
class Delivery:
    """One event delivered to one child of an operator node."""

    tick: int
    seq: int
    child: int
    event: object
    key: Hashable


@dataclass
class RLeaf:
    """A primitive event type node."""

    et: object
    pt: PathType
    parent: RNode | None = None
    index: int = 0


@dataclass
class RNode:
    """An operator node with its whole delivery history."""

    kind: str  # "conj", "seq" or "disj"
    pt: PathType
    children: list
    parent: RNode | None = None
    index: int = 0
    history: list[Delivery] = field(default_factory=list)
    consumed: dict[int, int] = field(default_factory=dict)  # delivery seq -> tick
    never_stored: set[int] = field(default_factory=set)


def _build(expr) -> RLeaf | RNode:
    if isinstance(expr, Primitive):
        return RLeaf(expr.event_type, expr.path)
    kinds = {Conj: "conj", Seq: "seq", Disj: "disj"}
    kind = kinds.get(type(expr))
    if kind is None or expr.mods:
        raise NotImplementedError(f"the reference does not evaluate {expr!r}")
    children = [_build(c) for c in expr.children]
    pt = children[0].pt
    for c in children[1:]:
        pt = intersect_lb(pt, c.pt)
    assert pt is not None, f"no path type for {expr}"
    node = RNode(kind, pt, children)
    for i, c in enumerate(children):
        c.parent, c.index = node, i
    return node


def _postorder(node: RNode) -> list[RNode]:
    out: list[RNode] = []
    for c in node.children:
        if isinstance(c, RNode):
            out.extend(_postorder(c))
    out.append(node)
    return out


def _leaves(node: RNode) -> list[RLeaf]:
    out: list[RLeaf] = []
    for c in node.children:
        out.extend(_leaves(c) if isinstance(c, RNode) else [c])
    return out


def _start(e) -> int:
    return e.interval[0]


def _end(e) -> int:
    return e.interval[1]


class Reference:
    """Evaluates one definition naively; :meth:`feed` returns the root's composites of a tick."""

    def __init__(self, definition: str, *, context: str = "chronicle",
                 hierarchical: bool = True, semantics: str = "interval",
                 within: int | None = None) -> None:
        assert context in CONTEXTS and semantics in ("interval", "detection")
        d = parse_definition(definition)
        self.name = d.name
        root = _build(d.expr)
        assert isinstance(root, RNode), "a definition must have an operator at its root"
        self.root = root
        self.context = context
        self.hierarchical = hierarchical
        self.semantics = semantics
        self.within = within
        self.nodes = _postorder(root)
        self.leaves = _leaves(root)
        self.primitives: list[PrimitiveEvent] = []  # the whole history, for inspection
        self._seq = 0
        self._ids = 0

    # --- the order of events -------------------------------------------------------------------

    def before(self, a, b) -> bool:
        if self.semantics == "detection":
            return a.ts < b.ts
        return _end(a) < _start(b)

    # --- stored events, recomputed from the whole history ---------------------------------------

    def _key(self, node: RNode, event) -> Hashable:
        projected = project(node.pt, event.pi)
        if projected is None:
            return None
        if not self.hierarchical:
            return ("doc", event.doc)
        return ("group", event.doc, projected.ids)

    def _visible(self, node: RNode, d: Delivery, tick: int) -> bool:
        if d.seq in node.never_stored:
            return False
        if self.within is not None and tick - _start(d.event) >= self.within:
            return False  # its window has ended
        gone = node.consumed.get(d.seq)
        if gone is None:
            return True
        # continuous removals take effect at the end of the tick
        return self.context == "continuous" and gone == tick

    def stored(self, node: RNode, key: Hashable, child: int, upto: int,
               tick: int) -> list[Delivery]:
        """The deliveries child ``child`` holds in group ``key`` right after delivery ``upto``."""
        found = [d for d in node.history
                 if d.key == key and d.child == child and d.seq <= upto
                 and self._visible(node, d, tick)]
        if self.context == "recent":
            return found[-1:]
        return found

    def _consume(self, node: RNode, ds, tick: int) -> None:
        for d in ds:
            node.consumed.setdefault(d.seq, tick)

    # --- composites ----------------------------------------------------------------------------

    def _compose(self, node: RNode, picks: list, tick: int) -> CompositeEvent:
        first = picks[0]
        abs_pt = intersect_ab(node.pt, first.pi.pt)
        pi = PathInstance(abs_pt, first.pi.ids[:len(abs_pt)])
        self._ids += 1
        return CompositeEvent(f"ref#{self._ids}", CompositeEventType(self.name, abs_pt), pi,
                              tuple(picks), (min(_start(e) for e in picks),
                                             max(_end(e) for e in picks)), tick, first.doc)

    # --- the rules -----------------------------------------------------------------------------

    def _conj(self, node: RNode, d: Delivery, tick: int) -> list[list[Delivery]]:
        n = len(node.children)
        bufs = [self.stored(node, d.key, j, d.seq, tick) for j in range(n)]
        others = [j for j in range(n) if j != d.child]
        if any(not bufs[j] for j in others):
            return []
        ctx = self.context
        if ctx == "chronicle":
            picks = [bufs[j][0] for j in range(n)]
            self._consume(node, picks, tick)
            return [picks]
        if ctx == "recent":
            return [[bufs[j][-1] for j in range(n)]]
        if ctx == "cumulative":
            picks = [x for j in range(n) for x in bufs[j]]
            self._consume(node, picks, tick)
            return [picks]
        if ctx == "continuous":
            results = []
            used: set[int] = set()
            while True:
                chosen = {}
                for j in others:
                    left = [x for x in bufs[j] if x.seq not in used]
                    if not left:
                        return results
                    chosen[j] = left[-1]
                used.update(x.seq for x in chosen.values())
                self._consume(node, chosen.values(), tick)
                chosen[d.child] = d
                results.append([chosen[j] for j in range(n)])
        pools = [bufs[j] if j != d.child else [d] for j in range(n)]
        return [list(p) for p in product(*pools)]

    def _chains(self, node: RNode, d: Delivery, tick: int) -> list[list[Delivery]]:
        """Every chain x0 < ... < x(last-1) < terminator through the stored events, in
        lexicographic delivery order."""
        last = len(node.children) - 1
        pools = [self.stored(node, d.key, j, d.seq, tick) for j in range(last)]
        chains = []
        for combo in product(*pools):
            chain = list(combo) + [d]
            if all(self.before(a.event, b.event) for a, b in pairwise(chain)):
                chains.append(chain)
        return chains

    def _seq_rule(self, node: RNode, d: Delivery, tick: int) -> list[list[Delivery]]:
        last = len(node.children) - 1
        if d.child < last:
            if d.child > 0 and not any(
                    self.before(x.event, d.event)
                    for x in self.stored(node, d.key, d.child - 1, d.seq, tick)):
                node.never_stored.add(d.seq)
            return []
        node.never_stored.add(d.seq)  # a terminator is never stored
        chains = self._chains(node, d, tick)
        if not chains:
            return []
        ctx = self.context
        if ctx == "chronicle":
            chain = chains[0]  # the oldest
            self._consume(node, chain[:-1], tick)
            return [chain]
        if ctx == "recent":
            return [chains[-1]]  # the most recent (recent stores one event a child anyway)
        if ctx == "cumulative":
            picked = [[c[p] for c in chains] for p in range(last)]
            every = []
            for p in range(last):
                seen = set()
                for x in sorted(picked[p], key=lambda x: x.seq):
                    if x.seq not in seen:
                        seen.add(x.seq)
                        every.append(x)
            self._consume(node, every, tick)
            return [every + [d]]
        if ctx == "continuous":
            results = []
            used: set[int] = set()
            while True:
                free = [c for c in chains if not any(x.seq in used for x in c[:-1])]
                if not free:
                    return results
                chain = free[-1]  # the most recent
                used.update(x.seq for x in chain[:-1])
                self._consume(node, chain[:-1], tick)
                results.append(chain)
        return chains

    def _evaluate(self, node: RNode, arrivals: list, tick: int) -> list[CompositeEvent]:
        raised = []
        if node.kind == "seq":
            # A sequence's later children go first within a tick (stable otherwise).
            arrivals = sorted(arrivals, key=lambda a: -a[0])
        for child, event in arrivals:
            self._seq += 1
            d = Delivery(tick, self._seq, child, event, self._key(node, event))
            node.history.append(d)
            if d.key is None or (self.within is not None
                                 and tick - _start(event) >= self.within):
                node.never_stored.add(d.seq)
                continue
            if node.kind == "disj":
                node.never_stored.add(d.seq)
                groups = [[d]]
            elif node.kind == "conj":
                groups = self._conj(node, d, tick)
            else:
                groups = self._seq_rule(node, d, tick)
            raised.extend(self._compose(node, [x.event for x in g], tick) for g in groups)
        return raised

    def feed(self, event: PrimitiveEvent) -> list[CompositeEvent]:
        """Process one primitive event; return the composites the root raises in its tick."""
        self.primitives.append(event)
        tick = event.ts
        arrivals: dict[int, list] = {id(n): [] for n in self.nodes}
        for leaf in self.leaves:
            if compatible(event.type, leaf.et):
                arrivals[id(leaf.parent)].append((leaf.index, event))
        out: list[CompositeEvent] = []
        for node in self.nodes:
            if not arrivals[id(node)]:
                continue
            raised = self._evaluate(node, arrivals[id(node)], tick)
            if node.parent is None:
                out.extend(raised)
            else:
                arrivals[id(node.parent)].extend((node.index, c) for c in raised)
        return out

    def held(self) -> list:
        """Every event still stored anywhere in the tree (recomputed from the history)."""
        out = []
        for node in self.nodes:
            tick = self.primitives[-1].ts + 1 if self.primitives else 0
            last = self._seq
            keys = list(dict.fromkeys(d.key for d in node.history if d.key is not None))
            for key in keys:
                for j in range(len(node.children)):
                    out.extend(d.event for d in self.stored(node, key, j, last, tick))
        return out
