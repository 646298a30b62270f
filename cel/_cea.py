"""Complex event automata (seed 003, section 6): unary CEL compiled to a CEA, evaluated through
its lazy I/O-determinisation over a compact structure of runs (section 7).

**Filters to their variables (LP normal form, section 5).** A filter's conjuncts are unary
(``x[...]``, CEQL's atomic filters); each is pushed to the definitions of its variable inside
the filtered formula (every branch of an ``OR`` that defines it), where it becomes part of the
transition's predicate — the paper's local push-down. A filter that cannot be pushed so (a
disjunction over two variables, a variable defined outside the filtered formula, a filter
naming two variables) is refused: the reference evaluator takes it.

**The automaton (Theorem 3's construction, reconstructed).** States are numbered; a transition
``(p, leaf, mark, q)`` reads an event satisfying the leaf's type and predicate, and with mark
``•`` puts its position in the complex event (``◦`` skips it). ``R AS x`` is one ``•``
transition; ``φ ; ψ`` links φ's final states to ψ's first transitions through a waiting state
with a ``◦`` loop on every event (the events skipped between them); ``φ OR ψ`` is the union;
``φ+`` links φ's final states back to its own first transitions the same way. The initial
state loops ``◦`` on every event (a complex event may start anywhere). A complex event is
output at position ``j`` by a run that enters a final state by a ``•`` transition at ``j``.

**Evaluation (Algorithms 1-2, reconstructed).** The automaton is determinised lazily: a
deterministic state is a set of automaton states, and its successor for an event is looked up
by the set of leaves the event satisfies (computed once per event) and the mark, then
memoised. Each active deterministic state holds one node of a persistent DAG of runs —
``bottom`` (the empty set), ``extend(j, n)`` (every set of ``n`` plus ``j``) and
``union(a, b)`` — so an event costs work proportional to the number of active states, not to
the number of partial complex events. Determinism makes every complex event the output of
exactly one run, so enumeration never repeats one. Nodes carry the largest start among their
sets, so a window drops whole nodes whose every set started too long ago.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ._errors import CELQueryError
from ._events import Event, Value, partition_key
from ._predicates import FilterAnd, Predicate, VarFilter
from ._reference import select
from .ast import (
    As,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Filter,
    Formula,
    Match,
    Or,
    Plus,
    Query,
    Seq,
    Strategy,
)

__all__ = ["Leaf", "CEA", "compile_cea", "Runs", "evaluate", "count"]


@dataclass(frozen=True, slots=True)
class Leaf:
    """What one marking transition reads: an event of ``type`` (of ``stream``) satisfying the
    pushed-down unary filters on its variable."""

    type: str
    var: str
    filters: tuple[VarFilter, ...] = ()
    stream: str | None = None

    def test(self, event: Event) -> bool:
        if event.type != self.type:
            return False
        if self.stream is not None and event.stream not in (None, self.stream):
            return False
        valuation = {self.var: event}
        return all(f.evaluate(valuation) for f in self.filters)


@dataclass
class CEA:
    """States 0..n-1, ``initial`` (one state), ``final``; ``marks[p]`` are the ``•``
    transitions ``(leaf index, q)`` out of ``p``, ``skips[p]`` the ``◦`` transitions on every
    event."""

    leaves: list[Leaf] = field(default_factory=list)
    marks: list[list[tuple[int, int]]] = field(default_factory=list)
    skips: list[set[int]] = field(default_factory=list)
    initial: int = 0
    final: set[int] = field(default_factory=set)

    def state(self) -> int:
        self.marks.append([])
        self.skips.append(set())
        return len(self.marks) - 1


def _conjuncts(p: Predicate) -> list[Predicate]:
    return _conjuncts(p.left) + _conjuncts(p.right) if isinstance(p, FilterAnd) else [p]


def _push(f: Formula, filters: dict[int, list[VarFilter]]) -> Formula:
    """Record every filter's conjuncts against the definitions of their variables in the
    filtered formula (by id of the defining node); return the formula without filters."""
    if isinstance(f, Filter):
        inner = _push(f.formula, filters)
        for c in _conjuncts(f.predicate):
            if not isinstance(c, VarFilter) or len(c.variables) != 1:
                raise CELQueryError(
                    f"the filter {c} is not unary (one variable, as CORE's x[...]): the "
                    "automaton evaluator takes unary filters only; use the reference "
                    "evaluator", line=None, col=None)
            targets = _definitions(inner, c.var)
            if not targets:
                raise CELQueryError(
                    f"the filter {c} is on {c.var}, which the filtered pattern does not "
                    "define outside a '+': it cannot be pushed to its definition; use the "
                    "reference evaluator", line=None, col=None)
            for t in targets:
                filters.setdefault(id(t), []).append(c)
        return inner
    if isinstance(f, As):
        return f
    if isinstance(f, EventType):
        return f
    if isinstance(f, Seq | ContiguousSeq | Or):
        return type(f)(_push(f.left, filters), _push(f.right, filters))
    assert isinstance(f, Plus | ContiguousPlus)
    return type(f)(_push(f.formula, filters))


def _definitions(f: Formula, var: str) -> list[Formula]:
    """The nodes of ``f`` defining ``var`` outside any ``+`` (those a filter on ``f`` reads)."""
    out: list[Formula] = []
    stack = [f]
    while stack:
        g = stack.pop()
        if (isinstance(g, As) and g.var == var) or (isinstance(g, EventType) and g.name == var):
            out.append(g)
        elif isinstance(g, Seq | ContiguousSeq | Or):
            stack.extend(g.children)
    return out


def compile_cea(formula: Formula) -> CEA:
    """The CEA of a well-formed, safe, unary formula (see the module).

    Raises:
        CELQueryError: a filter the local push-down cannot place (see the module).
    """
    filters: dict[int, list[VarFilter]] = {}
    plain = _push(formula, filters)
    a = CEA()
    a.initial = a.state()
    a.skips[a.initial].add(a.initial)
    first, last = _build(a, plain, filters)
    for leaf, q in first:
        a.marks[a.initial].append((leaf, q))
    a.final = set(last)
    return a


def _build(a: CEA, f: Formula, filters: dict[int, list[VarFilter]]
           ) -> tuple[list[tuple[int, int]], set[int]]:
    """The fragment of ``f``: its first transitions (leaf, target) and its final states."""
    if isinstance(f, EventType | As):
        et = f if isinstance(f, EventType) else f.formula
        assert isinstance(et, EventType)
        var = et.name if isinstance(f, EventType) else f.var
        a.leaves.append(Leaf(et.name, var, tuple(filters.get(id(f), ())), et.stream))
        q = a.state()
        return [(len(a.leaves) - 1, q)], {q}
    if isinstance(f, Or):
        f1, l1 = _build(a, f.left, filters)
        f2, l2 = _build(a, f.right, filters)
        return f1 + f2, l1 | l2
    if isinstance(f, Seq | ContiguousSeq):
        f1, l1 = _build(a, f.left, filters)
        f2, l2 = _build(a, f.right, filters)
        _link(a, l1, f2, contiguous=isinstance(f, ContiguousSeq))
        return f1, l2
    assert isinstance(f, Plus | ContiguousPlus)
    f1, l1 = _build(a, f.formula, filters)
    _link(a, l1, f1, contiguous=isinstance(f, ContiguousPlus))
    return f1, l1


def _link(a: CEA, ends: set[int], starts: list[tuple[int, int]], contiguous: bool) -> None:
    """From each state of ``ends``, the transitions ``starts`` at once or, unless
    ``contiguous`` (CEQL's ``:`` and ``:+``: the very next event), after a waiting state that
    skips any number of events."""
    if contiguous:
        for e in ends:
            a.marks[e].extend(starts)
        return
    wait = a.state()
    a.skips[wait].add(wait)
    for leaf, q in starts:
        a.marks[wait].append((leaf, q))
    for e in ends:
        a.skips[e].add(wait)
        for leaf, q in starts:
            a.marks[e].append((leaf, q))


# --- the compact structure of runs -----------------------------------------------------------

class Node:
    """A set of partial complex events (see the module): ``pos`` is None for ``bottom`` and
    ``union``; ``start`` the largest first position among its sets (``inf`` for bottom)."""

    __slots__ = ("count", "left", "pos", "right", "start")

    def __init__(self, pos: int | None, left: Node | None, right: Node | None,
                 start: float, count: int) -> None:
        self.pos = pos
        self.left = left
        self.right = right
        self.start = start
        self.count = count


_INF = float("inf")
BOTTOM = Node(None, None, None, _INF, 1)


def _extend(pos: int, child: Node) -> Node:
    return Node(pos, child, None, pos if child is BOTTOM else child.start, child.count)


def _union(a: Node | None, b: Node) -> Node:
    if a is None:
        return b
    return Node(None, a, b, max(a.start, b.start), a.count + b.count)


def enumerate_node(node: Node, oldest: float = -_INF) -> Iterator[tuple[int, ...]]:
    """The sets of ``node`` whose first position is at least ``oldest``, each once, as sorted
    tuples (iterative: a set may hold many positions)."""
    # stack of (node, positions after it, in reverse)
    stack: list[tuple[Node, tuple[int, ...]]] = [(node, ())]
    while stack:
        n, suffix = stack.pop()
        if n.start < oldest:
            continue  # every set below started too long ago
        if n is BOTTOM:
            yield suffix
        elif n.pos is not None:
            assert n.left is not None
            stack.append((n.left, (n.pos, *suffix)))
        else:
            assert n.left is not None and n.right is not None
            stack.append((n.right, suffix))
            stack.append((n.left, suffix))


def _count_fitting(node: Node, oldest: int) -> int:
    """How many sets of ``node`` have their first position at least ``oldest``, without
    enumerating them: a walk over the nodes that hold such a set (``start``), each counted
    once. Iterative: chains of ``extend`` nodes are as long as the window."""
    memo: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        key = id(n)
        if key in memo:
            continue
        if n.start < oldest:
            memo[key] = 0
        elif n.pos is not None and n.left is BOTTOM:
            memo[key] = 1  # the set {pos}, and pos >= start >= oldest
        elif not ready:
            stack.append((n, True))
            stack.extend((c, False) for c in (n.left, n.right)
                         if c is not None and id(c) not in memo)
        elif n.pos is not None:
            assert n.left is not None
            memo[key] = memo[id(n.left)]
        else:
            assert n.left is not None and n.right is not None
            memo[key] = memo[id(n.left)] + memo[id(n.right)]
    return memo[id(node)]


def prune(roots: dict[int, Node], oldest: float) -> dict[int, Node]:
    """The active nodes without the sets that started before ``oldest`` (a window's end):
    rebuilt bottom-up, sharing kept, nodes with nothing young dropped. Iterative: chains of
    ``extend`` nodes are as long as the window."""
    memo: dict[int, Node | None] = {}
    for root in roots.values():
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, ready = stack.pop()
            key = id(n)
            if key in memo:
                continue
            if n.start < oldest:
                memo[key] = None
                continue
            if n is BOTTOM:
                memo[key] = n
                continue
            kids = [c for c in (n.left, n.right) if c is not None]
            if not ready:
                stack.append((n, True))
                stack.extend((c, False) for c in kids if id(c) not in memo)
                continue
            if n.pos is not None:
                assert n.left is not None
                child = memo[id(n.left)]
                memo[key] = None if child is None else n if child is n.left else Node(
                    n.pos, child, None, n.pos if child is BOTTOM else child.start,
                    child.count)
            else:
                assert n.left is not None and n.right is not None
                a, b = memo[id(n.left)], memo[id(n.right)]
                memo[key] = (a if b is None else b if a is None else
                             n if a is n.left and b is n.right else
                             Node(None, a, b, max(a.start, b.start), a.count + b.count))
    out: dict[int, Node] = {}
    for d, root in roots.items():
        kept = memo[id(root)]
        if kept is not None:
            out[d] = kept
    return out


class Runs:
    """The evaluation of one CEA over one stream (see the module): :meth:`step` per event.

    Positions must increase but may skip (a partition's events carry the stream's
    positions). With a window of ``n`` events (a set fits while ``max - min <= n``), once
    the positions have advanced ``n`` since the last time the active nodes are rebuilt
    without the sets that can no longer fit (:func:`prune`): memory follows the window, not
    the stream, at a cost per event amortised over the window.
    """

    def __init__(self, cea: CEA, window: int | None = None) -> None:
        self.cea = cea
        self.window = window
        start = frozenset((cea.initial,))
        self._ids: dict[frozenset[int], int] = {start: 0}
        self._sets: list[frozenset[int]] = [start]
        self._final: list[bool] = [bool(start & cea.final)]
        self._next: dict[tuple[int, int], tuple[int, int]] = {}
        self._by_type: dict[str, tuple[int, tuple[tuple[int, Leaf], ...]]] = {}
        self.active: dict[int, Node] = {0: BOTTOM}
        self._pruned = -1  # the position of the last rebuild

    def reset(self) -> None:
        """Discard every partial complex event (CEQL's ``CONSUME BY``): what follows starts
        afresh."""
        self.active = {0: BOTTOM}

    def _state(self, states: frozenset[int]) -> int:
        found = self._ids.get(states)
        if found is None:
            found = self._ids[states] = len(self._sets)
            self._sets.append(states)
            self._final.append(bool(states & self.cea.final))
        return found

    def _successors(self, d: int, satisfied: int) -> tuple[int, int]:
        """The deterministic successors of ``d`` (skip, mark) for an event satisfying the
        leaves in the bitmask ``satisfied``; -1 where empty. Memoised (lazy determinisation)."""
        key = (d, satisfied)
        found = self._next.get(key)
        if found is None:
            states = self._sets[d]
            skip = frozenset(q for p in states for q in self.cea.skips[p])
            mark = frozenset(q for p in states for leaf, q in self.cea.marks[p]
                             if satisfied >> leaf & 1)
            found = (self._state(skip) if skip else -1, self._state(mark) if mark else -1)
            self._next[key] = found
        return found

    def satisfied(self, event: Event) -> int:
        """The bitmask of the leaves ``event`` satisfies: per type, the leaves without a
        filter give a constant part; only filtered leaves of its type are tested."""
        found = self._by_type.get(event.type)
        if found is None:
            fixed, tested = 0, []
            for i, leaf in enumerate(self.cea.leaves):
                if leaf.type == event.type:
                    if leaf.filters or leaf.stream is not None:
                        tested.append((1 << i, leaf))
                    else:
                        fixed |= 1 << i
            found = self._by_type[event.type] = (fixed, tuple(tested))
        bits, tested_leaves = found
        for bit, leaf in tested_leaves:
            if leaf.test(event):
                bits |= bit
        return bits

    def step(self, position: int, event: Event) -> Node | None:
        """Read the event at ``position``; the node of the complex events ending here."""
        bits = self.satisfied(event)
        oldest = -_INF if self.window is None else position - self.window
        new: dict[int, Node] = {}
        out: Node | None = None
        memo = self._next
        final = self._final
        for d, node in self.active.items():
            if node.start < oldest:
                continue  # nothing stored here can fit the window any more
            found = memo.get((d, bits))
            skip, mark = found if found is not None else self._successors(d, bits)
            if skip >= 0:
                prior = new.get(skip)
                new[skip] = node if prior is None else Node(
                    None, prior, node, max(prior.start, node.start), prior.count + node.count)
            if mark >= 0:
                extended = Node(position, node, None,
                                position if node is BOTTOM else node.start, node.count)
                if extended.start < oldest:
                    continue
                prior = new.get(mark)
                new[mark] = extended if prior is None else Node(
                    None, prior, extended, max(prior.start, extended.start),
                    prior.count + extended.count)
                if final[mark]:
                    # A deterministic state is the set of automaton states every run with
                    # these marks is in; holding a final state, each of its sets is a run
                    # that entered a final state by marking this event: a complex event.
                    out = _union(out, extended)
        self.active = new
        if self.window is not None and position - self._pruned >= self.window:
            # every later event is past ``position``: sets that start before
            # ``position + 1 - window`` can no longer fit
            self.active = prune(new, position + 1 - self.window)
            self._pruned = position
        return out

    @property
    def states(self) -> int:
        """How many deterministic states were built."""
        return len(self._sets)


def run_cea(cea: CEA, events: Sequence[Event], window: int | None = None
            ) -> Iterator[tuple[int, list[tuple[int, ...]]]]:
    """(position, complex events ending there) for each position with any."""
    runs = Runs(cea, window)
    for e in events:
        node = runs.step(e.position, e)
        if node is not None:
            found = list(enumerate_node(node, _oldest(e.position, window)))
            if found:
                yield e.position, found


def _oldest(position: int, window: int | None) -> float:
    """The smallest first position of a set ending at ``position`` that fits ``window``."""
    return -_INF if window is None else position - window


def _window_size(query: Query) -> int | None:
    window = query.within
    if window is None:
        return None
    if window.kind != "events":
        raise CELQueryError(f"WITHIN {window} is taken by the reference evaluator only; the "
                            "automaton evaluator bounds windows in events", line=None, col=None)
    return int(window.size)


class _Partitions:
    """One run structure per partition key (:func:`~._events.partition_key`), created on the
    partition's first event; ``CONSUME BY`` resets them."""

    def __init__(self, query: Query) -> None:
        self.query = query
        self.cea = compile_cea(query.formula)
        self.size = _window_size(query)
        self.runs: dict[tuple[Value, ...], Runs] = {}

    def step(self, event: Event) -> tuple[Runs, Node | None] | None:
        """Read ``event`` in its partition; None if it belongs to none."""
        key = partition_key(self.query.partition_by, event)
        if key is None:
            return None
        r = self.runs.get(key)
        if r is None:
            r = self.runs[key] = Runs(self.cea, self.size)
        return r, r.step(event.position, event)

    def consume(self, runs: Runs) -> None:
        """Complex events were output from ``runs``'s partition: under ``CONSUME BY ANY``
        every partial complex event is discarded, under ``PARTITION`` that partition's."""
        if self.query.consume == "ANY":
            for r in self.runs.values():
                r.reset()
        elif self.query.consume == "PARTITION":
            runs.reset()


def evaluate(query: Query, events: Iterable[Event]) -> Iterator[Match]:
    """The complex events of ``query`` over ``events`` by the automaton, in order of their
    last position, then of their positions — the reference evaluator's clauses in its order:
    partitions evaluated apart, ``WITHIN n EVENTS`` applied while reading, a strategy other
    than ALL/ANY selecting among each position's complex events (section 4's definitions,
    applied to the enumerated ones), ``CONSUME BY``, then ``LIMIT`` per last position.

    Raises:
        CELQueryError: a filter the automaton does not take, a window other than ``n EVENTS``.
    """
    parts = _Partitions(query)
    for event in events:
        stepped = parts.step(event)
        if stepped is None:
            continue
        runs, node = stepped
        if node is None:
            continue
        found = [frozenset(c) for c in enumerate_node(node, _oldest(event.position, parts.size))]
        if query.strategy not in (Strategy.ALL, Strategy.ANY):
            found = select(query.strategy, found)
        chosen = sorted(tuple(sorted(c)) for c in found)
        if query.limit is not None:
            chosen = chosen[:query.limit]
        for c in chosen:
            yield Match(c[-1], c)
        if chosen:
            parts.consume(runs)


def count(query: Query, events: Iterable[Event]) -> int:
    """How many complex events ``query`` has over ``events``. Under ``ALL``/``ANY`` without
    ``LIMIT`` nothing is enumerated: each position's node knows how many sets it holds (they
    are distinct: the automaton is deterministic), and with a window those that fit are
    counted by walking only the nodes that hold some (their ``start``); otherwise the complex
    events are enumerated."""
    if query.strategy not in (Strategy.ALL, Strategy.ANY) or query.limit is not None:
        return sum(1 for _ in evaluate(query, events))
    parts = _Partitions(query)
    total = 0
    for event in events:
        stepped = parts.step(event)
        if stepped is None:
            continue
        runs, node = stepped
        if node is None:
            continue
        found = node.count if parts.size is None else _count_fitting(
            node, event.position - parts.size)
        total += found
        if found:
            parts.consume(runs)
    return total
