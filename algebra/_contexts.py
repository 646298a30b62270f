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

Each operator's rules are one function per context, chosen from a table keyed by
:class:`~xmlevents.algebra.Context` (:data:`ANY`, :data:`SEQ`, :data:`NOT`), made complete
when this module is imported (``xmlevents._foundation.tables.complete``): a context added
to the enum and forgotten here fails at once, where an if-chain gave it the last case's rules
(unrestricted) without a word (issue 28). The operator nodes pick their function from the
tables once, when they are built; :func:`select_any`, :func:`select_seq` and
:func:`select_not` look it up per call, for the detection service's operators.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations, product
from typing import Any, Generic, Protocol, TypeVar

from xmlevents._foundation.tables import complete

from ._events import Event
from .ast import Context

__all__ = ["Group", "Before", "Occurrence", "select_any", "select_seq", "select_not",
           "select_disj", "remove", "ANY", "SEQ", "NOT"]


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


# --- conjunction ∆ and any(n, ...) ---------------------------------------------------------
# Each takes (n, group, child, event, before); n == len(bufs) is a conjunction. any(1, ...)
# raises every event on its own, in every context; none would ever be combined, so none is
# stored.

def _others(bufs: list[list[OccT]], k: int) -> list[int]:
    return [j for j, buf in enumerate(bufs) if j != k and buf]


def _any_chronicle(n: int, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                   ) -> list[tuple[OccT, ...]]:
    """The oldest event of every child taking part, removed."""
    if n == 1:
        return [(e,)]
    bufs = g.bufs
    bufs[k].append(e)
    if n == len(bufs):  # a conjunction: every child takes part, nothing to choose
        if not all(bufs):
            return []
        return [tuple([buf.pop(0) for buf in bufs])]
    others = _others(bufs, k)
    need = n - 1
    if len(others) < need:
        return []
    chosen = sorted(others, key=lambda j: _age(bufs[j][0]))[:need]
    picks = {j: bufs[j].pop(0) for j in chosen}
    picks[k] = bufs[k].pop(0)
    return [tuple(picks[j] for j in sorted(picks))]


def _any_recent(n: int, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                ) -> list[tuple[OccT, ...]]:
    """The most recent event of every child taking part; an older one is dropped when a newer
    one arrives (it can never again start a composite); nothing else is removed."""
    if n == 1:
        return [(e,)]
    bufs = g.bufs
    bufs[k][:] = [e]
    if n == len(bufs):
        if not all(bufs):
            return []
        return [tuple([buf[-1] for buf in bufs])]
    others = _others(bufs, k)
    need = n - 1
    if len(others) < need:
        return []
    chosen = sorted(others, key=lambda j: _age(bufs[j][-1]), reverse=True)[:need]
    picks = {j: bufs[j][-1] for j in chosen}
    picks[k] = e
    return [tuple(picks[j] for j in sorted(picks))]


def _any_cumulative(n: int, g: Group[OccT], k: int, e: OccT,
                    before: Callable[[OccT, OccT], bool]) -> list[tuple[OccT, ...]]:
    """All events of every child taking part, removed."""
    if n == 1:
        return [(e,)]
    bufs = g.bufs
    bufs[k].append(e)
    if n == len(bufs):
        if not all(bufs):
            return []
        out = tuple([x for buf in bufs for x in buf])
        for buf in bufs:
            buf.clear()
        return [out]
    others = _others(bufs, k)
    need = n - 1
    if len(others) < need:
        return []
    chosen = sorted(sorted(others, key=lambda j: _age(bufs[j][-1]), reverse=True)[:need]
                    + [k])
    out = tuple(x for j in chosen for x in bufs[j])
    for j in chosen:
        bufs[j].clear()
    return [out]


def _any_continuous(n: int, g: Group[OccT], k: int, e: OccT,
                    before: Callable[[OccT, OccT], bool]) -> list[tuple[OccT, ...]]:
    """The terminator with the most recent event of every other child taking part, those
    consumed at the end of the tick, repeated until nothing is left to combine."""
    if n == 1:
        return [(e,)]
    bufs = g.bufs
    bufs[k].append(e)
    others = _others(bufs, k)
    need = n - 1
    if len(others) < need:
        return []
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


def _any_unrestricted(n: int, g: Group[OccT], k: int, e: OccT,
                      before: Callable[[OccT, OccT], bool]) -> list[tuple[OccT, ...]]:
    """Every combination with the terminator, nothing consumed."""
    if n == 1:
        return [(e,)]
    bufs = g.bufs
    bufs[k].append(e)
    others = _others(bufs, k)
    need = n - 1
    if len(others) < need:
        return []
    results: list[tuple[OccT, ...]] = []
    for chosen_set in combinations(others, need):
        order = sorted(chosen_set + (k,))
        pools = [bufs[j] if j != k else [e] for j in order]
        results.extend(product(*pools))
    return results


class _SelectAny(Protocol):
    def __call__(self, n: int, g: Group[Any], k: int, e: Any, before: Callable[[Any, Any], bool]
                 ) -> list[tuple[Any, ...]]: ...


class _Select(Protocol):
    def __call__(self, g: Group[Any], k: int, e: Any, before: Callable[[Any, Any], bool]
                 ) -> list[tuple[Any, ...]]: ...


#: Conjunction ∆ and ``any(n, ...)``, by context.
ANY: dict[Context, _SelectAny] = complete(Context, {
    Context.CHRONICLE: _any_chronicle,
    Context.RECENT: _any_recent,
    Context.CUMULATIVE: _any_cumulative,
    Context.CONTINUOUS: _any_continuous,
    Context.UNRESTRICTED: _any_unrestricted,
}, "the conjunction's and any(n, ...)'s rules")


def select_any(ctx: Context, n: int, g: Group[OccT], k: int, e: OccT,
               before: Callable[[OccT, OccT], bool]) -> list[tuple[OccT, ...]]:
    """Conjunction ∆ (``n`` = number of children) and Snoop's ``any(n, ...)``.

    Raises:
        KeyError: ``ctx`` is not a context of the table (never the unrestricted rules).
    """
    return ANY[ctx](n, g, k, e, before)


# --- sequence ------------------------------------------------------------------------------

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


def _initiates(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool],
               recent: bool) -> bool:
    """Store an event of a child before the last (whether it was one: else it terminates).

    An event of a middle child that no stored event of the previous child precedes can
    never join a chain (later events come later) and is dropped.
    """
    bufs = g.bufs
    if k == len(bufs) - 1:
        return False
    if k > 0 and not any(before(x, e) for x in bufs[k - 1]):
        return True
    if recent:
        bufs[k][:] = [e]
    else:
        bufs[k].append(e)
    return True


def _seq_chronicle(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                   ) -> list[tuple[OccT, ...]]:
    """The oldest chain before the terminator, its events removed."""
    if _initiates(g, k, e, before, False):
        return []
    bufs = g.bufs
    if len(bufs) == 2:  # two steps: the oldest initiator before the terminator
        starts = bufs[0]
        for x in starts:
            if before(x, e):
                remove(starts, x)
                return [(x, e)]
        return []
    found = _chains(bufs, e, before, first_only=True)
    if not found:
        return []
    chain = found[0]
    for p, x in enumerate(chain[:-1]):
        remove(bufs[p], x)
    return [tuple(chain)]


def _seq_recent(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                ) -> list[tuple[OccT, ...]]:
    """The most recent chain before the terminator; nothing removed."""
    if _initiates(g, k, e, before, True):
        return []
    bufs = g.bufs
    if len(bufs) == 2:  # two steps: the latest initiator before the terminator
        for x in reversed(bufs[0]):
            if before(x, e):
                return [(x, e)]
        return []
    found = _chains(bufs, e, before, first_only=True, newest_first=True)
    return [tuple(found[0])] if found else []


def _seq_cumulative(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                    ) -> list[tuple[OccT, ...]]:
    """Every stored event on some chain to the terminator, in one composite, removed."""
    if _initiates(g, k, e, before, False):
        return []
    bufs = g.bufs
    selected: list[list[OccT]] = [[e]]
    for p in range(len(bufs) - 2, -1, -1):
        later = selected[0]
        picked = [x for x in bufs[p] if any(before(x, y) for y in later)]
        if not picked:
            return []
        selected.insert(0, picked)
    for p, picked in enumerate(selected[:-1]):
        gone = {id(x) for x in picked}
        bufs[p][:] = [x for x in bufs[p] if id(x) not in gone]
    return [tuple(x for picked in selected for x in picked)]


def _seq_continuous(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                    ) -> list[tuple[OccT, ...]]:
    """The most recent chains, one after another over unused events, consumed at the end of
    the tick."""
    if _initiates(g, k, e, before, False):
        return []
    bufs = g.bufs
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


def _seq_unrestricted(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                      ) -> list[tuple[OccT, ...]]:
    """Every chain to the terminator; nothing removed."""
    if _initiates(g, k, e, before, False):
        return []
    return [tuple(chain) for chain in _chains(g.bufs, e, before, first_only=False)]


#: Sequence ``E0 ; E1 ; ... ; En``, by context.
SEQ: dict[Context, _Select] = complete(Context, {
    Context.CHRONICLE: _seq_chronicle,
    Context.RECENT: _seq_recent,
    Context.CUMULATIVE: _seq_cumulative,
    Context.CONTINUOUS: _seq_continuous,
    Context.UNRESTRICTED: _seq_unrestricted,
}, "the sequence's rules")


def select_seq(ctx: Context, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
               ) -> list[tuple[OccT, ...]]:
    """Sequence ``E0 ; E1 ; ... ; En``: events of child ``i`` must precede those of ``i+1``;
    only the last child's events terminate.

    Raises:
        KeyError: ``ctx`` is not a context of the table (never the unrestricted rules).
    """
    return SEQ[ctx](g, k, e, before)


# --- not(E1, E2, E3) -----------------------------------------------------------------------

def _not_ready(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool],
               recent: bool) -> list[OccT] | None:
    """Store an E1, drop the E1s an E2 follows (None for both); for an E3, the stored E1s
    before it."""
    starts = g.bufs[0]
    if k == 0:
        if recent:
            starts[:] = [e]
        else:
            starts.append(e)
        return None
    if k == 1:
        starts[:] = [x for x in starts if not before(x, e)]
        return None
    return [x for x in starts if before(x, e)]


def _not_chronicle(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                   ) -> list[tuple[OccT, ...]]:
    ready = _not_ready(g, k, e, before, False)
    if not ready:
        return []
    remove(g.bufs[0], ready[0])
    return [(ready[0], e)]


def _not_recent(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                ) -> list[tuple[OccT, ...]]:
    ready = _not_ready(g, k, e, before, True)
    return [(ready[-1], e)] if ready else []


def _not_cumulative(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                    ) -> list[tuple[OccT, ...]]:
    ready = _not_ready(g, k, e, before, False)
    if not ready:
        return []
    gone = {id(x) for x in ready}
    starts = g.bufs[0]
    starts[:] = [x for x in starts if id(x) not in gone]
    return [tuple(ready) + (e,)]


def _not_continuous(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                    ) -> list[tuple[OccT, ...]]:
    ready = _not_ready(g, k, e, before, False)
    if not ready:
        return []
    for x in ready:
        g.take(0, x)
    return [(x, e) for x in reversed(ready)]


def _not_unrestricted(g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
                      ) -> list[tuple[OccT, ...]]:
    ready = _not_ready(g, k, e, before, False)
    return [(x, e) for x in ready] if ready else []


#: Snoop's ``not(E1, E2, E3)``, by context: an E3 pairs with the E1s before it as in a
#: two-step sequence.
NOT: dict[Context, _Select] = complete(Context, {
    Context.CHRONICLE: _not_chronicle,
    Context.RECENT: _not_recent,
    Context.CUMULATIVE: _not_cumulative,
    Context.CONTINUOUS: _not_continuous,
    Context.UNRESTRICTED: _not_unrestricted,
}, "not(...)'s rules")


def select_not(ctx: Context, g: Group[OccT], k: int, e: OccT, before: Callable[[OccT, OccT], bool]
               ) -> list[tuple[OccT, ...]]:
    """Snoop's ``not(E1, E2, E3)``: E1 then E3 with no E2 in between.

    An E2 drops every stored E1 it follows; an E3 pairs with the E1s before it, chosen and
    consumed as in a two-step sequence. The composite's constituents are the E1 and the E3.

    Raises:
        KeyError: ``ctx`` is not a context of the table (never the unrestricted rules).
    """
    return NOT[ctx](g, k, e, before)
