"""The reference evaluator: CEL's denotational semantics computed as written (seed 003,
sections 3-4). Exponential — the oracle of the tests, and for users on small streams.

The semantics, reconstructed from section 3's prose (its formulas were lost in extraction):
a complex event ``C`` is a non-empty finite set of positions; ``C ∈ ⟦φ⟧(S, v)`` for a valuation
``v`` of variables to positions when

* ``φ = R AS x``: ``C = {v(x)}`` and ``S[v(x)]`` has type ``R`` (a bare ``R`` is ``R AS R``);
* ``φ = ψ FILTER P``: ``C ∈ ⟦ψ⟧(S, v)`` and ``P`` holds of the events ``v`` names;
* ``φ = ψ1 OR ψ2``: ``C`` is in either;
* ``φ = ψ1 ; ψ2``: ``C = C1 · C2`` (every position of ``C1`` before every one of ``C2``) with
  ``C1 ∈ ⟦ψ1⟧(S, v)`` and ``C2 ∈ ⟦ψ2⟧(S, v)`` — one valuation for both sides;
* ``φ = ψ+``: ``C ∈ ⟦ψ⟧(S, v[v' / U])`` or ``C = C1 · C2`` with ``C1 ∈ ⟦ψ⟧(S, v[v' / U])`` and
  ``C2 ∈ ⟦ψ+⟧(S, v)``, for some ``v'``, ``U`` the variables defined inside ``ψ``: each
  iteration binds them anew, while a variable from outside keeps its value in all of them
  (the paper's correlation, φ4).

``⟦φ⟧(S)`` is every ``C`` for some ``v``. Computed bottom-up: each candidate carries the
bindings made so far and the filters still waiting for a variable bound further out (a filter
inside ``+`` on a variable bound outside it), checked once that variable is bound.

Selection strategies (section 4), among the complex events with the same last position:
``STRICT`` keeps those that are intervals; ``NEXT`` the one preferred by ``C ≤ C'`` iff ``C =
C'`` or ``min(C △ C') ∈ C`` (the earliest explanation); ``LAST`` by ``max(C △ C') ∈ C`` (the
most recent); ``MAX`` those no other contains. Windows and partitions (CORE's): ``WITHIN n
EVENTS`` keeps ``C`` with ``max C - min C < n``; ``WITHIN`` a duration or ``n [attr]``, those
whose events' times or values span at most ``n``; ``PARTITION BY [a, b]`` evaluates each
partition's events (those with equal values of ``a`` and ``b``; events lacking one belong to
none) as a stream of its own, positions kept. Strategies apply after the window, per partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ._events import Event, Value
from ._predicates import Predicate
from .ast import As, EventType, Filter, Formula, Match, Or, Plus, Query, Seq, Strategy, Window

__all__ = ["reference", "select"]

Binding = frozenset[tuple[str, int]]
Pending = frozenset[tuple[Predicate, Binding]]
Item = tuple[frozenset[int], Binding, Pending]


def _resolve(pend: Pending, nu: Mapping[str, int], events: Sequence[Event]
             ) -> Pending | None:
    """Check the waiting filters whose variables ``nu`` now binds; None if one fails."""
    left: list[tuple[Predicate, Binding]] = []
    for predicate, captured in pend:
        valuation = dict(captured)
        for var in predicate.variables:
            if var not in valuation and var in nu:
                valuation[var] = nu[var]
        if predicate.variables <= set(valuation):
            if not predicate.evaluate({v: events[i] for v, i in valuation.items()}):
                return None
        else:
            left.append((predicate, frozenset(valuation.items())))
    return frozenset(left)


class _Evaluator:
    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        self.by_type: dict[str, list[int]] = {}
        for i, e in enumerate(events):
            self.by_type.setdefault(e.type, []).append(i)

    def items(self, f: Formula) -> set[Item]:
        if isinstance(f, EventType | As):
            et = f if isinstance(f, EventType) else f.formula
            assert isinstance(et, EventType)
            var = et.name if isinstance(f, EventType) else f.var
            return {(frozenset((i,)), frozenset(((var, i),)), frozenset())
                    for i in self.by_type.get(et.name, ())
                    if et.stream is None or self.events[i].stream in (None, et.stream)}
        if isinstance(f, Filter):
            out: set[Item] = set()
            for c, nu, pend in self.items(f.formula):
                resolved = _resolve(pend | {(f.predicate, frozenset())}, dict(nu), self.events)
                if resolved is not None:
                    out.add((c, nu, resolved))
            return out
        if isinstance(f, Or):
            return self.items(f.left) | self.items(f.right)
        if isinstance(f, Seq):
            return self.join(self.items(f.left), self.items(f.right))
        assert isinstance(f, Plus)
        # Each iteration's own bindings are dropped (bound anew each time); its waiting
        # filters keep the values they captured.
        once: set[Item] = {(c, frozenset(), frozenset(
                    (p, cap | frozenset(kv for kv in nu if kv[0] in p.variables))
                    for p, cap in pend))
                for c, nu, pend in self.items(f.formula)}
        result = set(once)
        frontier = set(once)
        while frontier:
            grown = self.join(frontier, once)
            frontier = grown - result
            result |= frontier
        return result

    def join(self, left: Iterable[Item], right: Iterable[Item]) -> set[Item]:
        right = list(right)
        out: set[Item] = set()
        for c1, nu1, p1 in left:
            last = max(c1)
            d1 = dict(nu1)
            for c2, nu2, p2 in right:
                if min(c2) <= last:
                    continue
                d2 = dict(nu2)
                if any(d1[v] != i for v, i in d2.items() if v in d1):
                    continue
                merged = {**d1, **d2}
                resolved = _resolve(p1 | p2, merged, self.events)
                if resolved is not None:
                    out.add((c1 | c2, frozenset(merged.items()), resolved))
        return out


def _fits(c: frozenset[int], window: Window | None, events: Sequence[Event]) -> bool:
    if window is None:
        return True
    if window.kind == "events":
        return max(c) - min(c) < window.size
    if window.kind == "seconds":
        times = [events[i].time for i in c]
        return all(t is not None for t in times) and \
            max(times) - min(times) <= window.size  # type: ignore[type-var,operator]
    values = [events[i].attrs.get(window.attribute or "") for i in c]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return len(numbers) == len(values) and max(numbers) - min(numbers) <= window.size


def select(strategy: Strategy, complex_events: Iterable[frozenset[int]]
           ) -> list[frozenset[int]]:
    """Section 4's selection among complex events, per last position."""
    by_end: dict[int, list[frozenset[int]]] = {}
    for c in complex_events:
        by_end.setdefault(max(c), []).append(c)
    out: list[frozenset[int]] = []
    for end in sorted(by_end):
        group = sorted(by_end[end], key=sorted)
        if strategy is Strategy.STRICT:
            group = [c for c in group if max(c) - min(c) + 1 == len(c)]
        elif strategy is Strategy.NEXT:
            group = [c for c in group if all(c == d or min(c ^ d) in c for d in group)]
        elif strategy is Strategy.LAST:
            group = [c for c in group if all(c == d or max(c ^ d) in c for d in group)]
        elif strategy is Strategy.MAX:
            group = [c for c in group if not any(c < d for d in group)]
        out.extend(group)
    return out


def reference(query: Query | Formula, events: Iterable[Event],
              strategy: Strategy | None = None) -> list[Match]:
    """Every complex event of ``query`` over ``events`` by the semantics (see the module), in
    order of their last position, then of their positions.

    ``events`` are given positions by order (``Event.position`` is kept for the output when
    the events are a part of a larger stream, as partitions are).
    """
    stream = list(events)
    if isinstance(query, Formula):
        query = Query(strategy or Strategy.ALL, None, (), query)
    elif strategy is not None:
        query = Query(strategy, query.variables, query.streams, query.formula,
                      query.partition_by, query.within, query.limit)
    parts: list[list[Event]]
    if query.partition_by:
        groups: dict[tuple[Value, ...], list[Event]] = {}
        for e in stream:
            if all(a in e.attrs for a in query.partition_by):
                key = tuple(e.attrs[a] for a in query.partition_by)
                groups.setdefault(key, []).append(e)
        parts = list(groups.values())
    else:
        parts = [stream]
    found: list[Match] = []
    for part in parts:
        ev = _Evaluator(part)
        complete = {c for c, _, pend in ev.items(query.formula) if not pend}
        windowed = [c for c in complete if _fits(c, query.within, part)]
        for c in select(query.strategy, windowed):
            positions = tuple(sorted(part[i].position for i in c))
            found.append(Match(positions[-1], positions))
    found.sort()
    return found if query.limit is None else found[:query.limit]
