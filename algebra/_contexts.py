"""Snoop's parameter contexts: which stored events an operator combines, and which it consumes.

Each function here handles one arriving child event (the *terminator*) for one operator inside
one *group*: the whole node in plain contexts, or the events of one projected path instance in
the hierarchical context (seed 000, section 3.1), so grouping and selection stay orthogonal as
the paper says. It appends the event to the group's buffers as the context demands and returns
the constituent tuples of every composite event the arrival completes.

The rules follow section 2.3's description, which is what Table 1 shows:

* chronicle: the oldest event of every child, removed;
* recent: the most recent event of every child; an older event of a child can never again
  start a composite, so it is dropped when a newer one arrives; nothing else is removed;
* continuous: the terminator with the most recent event of every other child, those removed,
  repeated until nothing is left to combine; the terminator stays if it can still start a
  composite. Table 1 (S2 at t5, footnote y1) shows two composites arriving together at the
  sequence each combining with *both* stored initiators, so removals in this context take
  effect at the end of the tick: events that happen at the same time see the same initiators;
* cumulative: all events of every child, removed;
* unrestricted: every combination, nothing removed.

Reconstruction notes: n-ary sequences extend the binary rules along chains
``e0 < e1 < ... < terminator``; ``any(n, ...)`` follows the conjunction rules over the ``n``
children chosen (oldest for chronicle, most recent otherwise), a conjunction being
``any(m, ...)`` over its ``m`` children; ``not(E1, E2, E3)`` stores E1 initiators, drops the ones
an E2 follows, and pairs E3 with the rest as a sequence would. Disjunctions raise one composite
per event in every context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations, product
from typing import Generic, Protocol, TypeVar

from ._events import Event
from .ast import Context

__all__ = ["Group", "Before", "Occurrence", "select_any", "select_seq", "select_not",
           "select_disj", "remove"]


class Occurrence(Protocol):
    """What a context needs of an event: the tick it was detected and its interval. The
    algebra's events have it; so do the detection service's instances (seed 001), whose
    operators pick and consume by these same functions."""

    @property
    def ts(self) -> int: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


OccT = TypeVar("OccT", bound=Occurrence)

Before = Callable[[Event, Event], bool]
Picks = tuple[Event, ...]


class Group(Generic[OccT]):
    """The stored events of one group: one buffer a child, oldest first.

    ``taken`` collects, per child, events a continuous-context operator consumed during the
    current tick; :meth:`end_tick` removes them.
    """

    __slots__ = ("bufs", "taken")

    def __init__(self, width: int) -> None:
        # Binary operators first: a group is made for every item an operator sees.
        self.bufs: list[list[OccT]] = [[], []] if width == 2 else [[] for _ in range(width)]
        self.taken: list[set[int]] | None = None

    def take(self, child: int, event: OccT) -> None:
        if self.taken is None:
            self.taken = [set() for _ in self.bufs]
        self.taken[child].add(id(event))

    def end_tick(self) -> None:
        if self.taken is not None:
            for buf, gone in zip(self.bufs, self.taken, strict=False):
                if gone:
                    buf[:] = [e for e in buf if id(e) not in gone]
            self.taken = None

    def is_empty(self) -> bool:
        return not any(self.bufs)

    def events(self) -> list[OccT]:
        return [e for buf in self.bufs for e in buf]


def _age(e: Occurrence) -> tuple[int, int]:
    return (e.ts, e.start)


def _store(ctx: Context, buf: list[OccT], e: OccT) -> None:
    if ctx is Context.RECENT:
        buf[:] = [e]
    else:
        buf.append(e)


def remove(buf: list[OccT], e: OccT) -> bool:
    """Take ``e`` itself (not an equal event) out of ``buf``; whether it was there."""
    for i, x in enumerate(buf):
        if x is e:
            del buf[i]
            return True
    return False


def select_disj(ctx: Context, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                ) -> list[tuple[OccT, ...]]:
    """Disjunction ∇: every event raises a composite on its own; nothing is stored."""
    return [(e,)]


def select_any(ctx: Context, n: int, g: Group[OccT], k: int, e: OccT,
               before: Callable[[OccT, OccT], bool]) -> list[tuple[OccT, ...]]:
    """Conjunction ∆ (``n`` = number of children) and Snoop's ``any(n, ...)``."""
    if n == 1:
        # any(1, ...): every event raises a composite on its own, in every context; none
        # would ever be combined, so none is stored.
        return [(e,)]
    bufs = g.bufs
    _store(ctx, bufs[k], e)
    if n == len(bufs) and ctx is not Context.CONTINUOUS and ctx is not Context.UNRESTRICTED:
        # A conjunction: every child takes part, so there is nothing to choose.
        if not all(bufs):
            return []
        if ctx is Context.CHRONICLE:
            return [tuple([buf.pop(0) for buf in bufs])]
        if ctx is Context.RECENT:
            return [tuple([buf[-1] for buf in bufs])]
        out = tuple([x for buf in bufs for x in buf])
        for buf in bufs:
            buf.clear()
        return [out]
    others = [j for j, buf in enumerate(bufs) if j != k and buf]
    need = n - 1
    if len(others) < need:
        return []
    if ctx is Context.CHRONICLE:
        chosen = sorted(others, key=lambda j: _age(bufs[j][0]))[:need]
        picks = {j: bufs[j].pop(0) for j in chosen}
        picks[k] = bufs[k].pop(0)
        return [tuple(picks[j] for j in sorted(picks))]
    if ctx is Context.RECENT:
        chosen = sorted(others, key=lambda j: _age(bufs[j][-1]), reverse=True)[:need]
        picks = {j: bufs[j][-1] for j in chosen}
        picks[k] = e
        return [tuple(picks[j] for j in sorted(picks))]
    if ctx is Context.CUMULATIVE:
        chosen = sorted(sorted(others, key=lambda j: _age(bufs[j][-1]), reverse=True)[:need]
                        + [k])
        out = tuple(x for j in chosen for x in bufs[j])
        for j in chosen:
            bufs[j].clear()
        return [out]
    if ctx is Context.CONTINUOUS:
        results: list[tuple[OccT, ...]] = []
        nxt = {j: len(bufs[j]) - 1 for j in others}
        while True:
            ready = [j for j, i in nxt.items() if i >= 0]
            if len(ready) < need:
                return results
            chosen = sorted(ready, key=lambda j: _age(bufs[j][nxt[j]]), reverse=True)[:need]
            picks = {j: bufs[j][nxt[j]] for j in chosen}
            for j in chosen:
                g.take(j, picks[j])
                nxt[j] -= 1
            picks[k] = e
            results.append(tuple(picks[j] for j in sorted(picks)))
    # unrestricted: every combination with the terminator, nothing consumed
    results = []
    for chosen_set in combinations(others, need):
        order = sorted(chosen_set + (k,))
        pools = [bufs[j] if j != k else [e] for j in order]
        results.extend(product(*pools))
    return results


def _chains(bufs: Sequence[list[OccT]], e: OccT, before: Callable[[OccT, OccT], bool], *,
            first_only: bool, newest_first: bool = False,
            skip: frozenset[int] | set[int] = frozenset()) -> list[list[OccT]]:
    """Chains ``x0 < x1 < ... < e`` through the buffers, in preference order (DFS).

    With ``first_only`` the search stops at the first chain; ``newest_first`` prefers recent
    events at every step; events whose ``id`` is in ``skip`` are passed over.
    """
    last = len(bufs) - 1
    found: list[list[OccT]] = []

    def walk(p: int, prev: OccT | None, acc: list[OccT]) -> bool:
        if p == last:
            found.append(acc + [e])
            return first_only
        for x in (reversed(bufs[p]) if newest_first else bufs[p]):
            if id(x) in skip or (prev is not None and not before(prev, x)):
                continue
            if p == last - 1 and not before(x, e):
                continue
            if walk(p + 1, x, acc + [x]):
                return True
        return False

    walk(0, None, [])
    return found


def select_seq(ctx: Context, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
               ) -> list[tuple[OccT, ...]]:
    """Sequence ``E0 ; E1 ; ... ; En``: events of child ``i`` must precede those of ``i+1``.

    Only the last child's events terminate; an event of a middle child that no stored event of
    the previous child precedes can never join a chain (later events come later) and is dropped.
    """
    bufs = g.bufs
    last = len(bufs) - 1
    if k < last:
        if k > 0 and not any(before(x, e) for x in bufs[k - 1]):
            return []
        _store(ctx, bufs[k], e)
        return []
    if last == 1 and (ctx is Context.CHRONICLE or ctx is Context.RECENT):
        # Two steps: the oldest (chronicle) or latest (recent) initiator before the terminator.
        starts = bufs[0]
        for x in (starts if ctx is Context.CHRONICLE else reversed(starts)):
            if before(x, e):
                if ctx is Context.CHRONICLE:
                    remove(starts, x)
                return [(x, e)]
        return []
    if ctx is Context.CHRONICLE or ctx is Context.RECENT:
        found = _chains(bufs, e, before, first_only=True,
                        newest_first=ctx is Context.RECENT)
        if not found:
            return []
        chain = found[0]
        if ctx is Context.CHRONICLE:
            for p, x in enumerate(chain[:-1]):
                remove(bufs[p], x)
        return [tuple(chain)]
    if ctx is Context.CUMULATIVE:
        selected: list[list[OccT]] = [[e]]
        for p in range(last - 1, -1, -1):
            later = selected[0]
            picked = [x for x in bufs[p] if any(before(x, y) for y in later)]
            if not picked:
                return []
            selected.insert(0, picked)
        for p, picked in enumerate(selected[:-1]):
            gone = {id(x) for x in picked}
            bufs[p][:] = [x for x in bufs[p] if id(x) not in gone]
        return [tuple(x for picked in selected for x in picked)]
    if ctx is Context.CONTINUOUS:
        results: list[tuple[OccT, ...]] = []
        used: set[int] = set()
        while True:
            found = _chains(bufs, e, before, first_only=True, newest_first=True, skip=used)
            if not found:
                return results
            chain = found[0]
            for p, x in enumerate(chain[:-1]):
                used.add(id(x))
                g.take(p, x)
            results.append(tuple(chain))
    return [tuple(chain) for chain in _chains(bufs, e, before, first_only=False)]


def select_not(ctx: Context, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
               ) -> list[tuple[OccT, ...]]:
    """Snoop's ``not(E1, E2, E3)``: E1 then E3 with no E2 in between.

    An E2 drops every stored E1 it follows; an E3 pairs with the E1s before it, chosen and
    consumed as in a two-step sequence. The composite's constituents are the E1 and the E3.
    """
    starts = g.bufs[0]
    if k == 0:
        _store(ctx, starts, e)
        return []
    if k == 1:
        starts[:] = [x for x in starts if not before(x, e)]
        return []
    ready = [x for x in starts if before(x, e)]
    if not ready:
        return []
    if ctx is Context.CHRONICLE:
        remove(starts, ready[0])
        return [(ready[0], e)]
    if ctx is Context.RECENT:
        return [(ready[-1], e)]
    if ctx is Context.CUMULATIVE:
        gone = {id(x) for x in ready}
        starts[:] = [x for x in starts if id(x) not in gone]
        return [tuple(ready) + (e,)]
    if ctx is Context.CONTINUOUS:
        for x in ready:
            g.take(0, x)
        return [(x, e) for x in reversed(ready)]
    return [(x, e) for x in ready]
