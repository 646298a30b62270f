"""``SELECT x, y``: a complex event projected on the positions of the selected variables
(issue 32, item 2d; CORE's ``Project``, ``project.hpp``, and its projection tests).

The paper's CEL outputs every position of a complex event (section 3); CORE's CEQL selects
the variables to output (``SELECT *``: all of them; ``SELECT NONE``: none), and CORE
evaluates the selection by un-marking the transitions of the other variables (its
``project.hpp`` intersects each transition's marks with the selected ones). So a complex
event is found as without the list, and then only its positions labelled by a selected
variable are output, at the same end: ``SELECT a ... SELL AS a ; BUY AS b`` over ``SELL BUY``
gives ``{0}``, ending at 1. A variable inside a ``+`` labels the event of every iteration.

Both evaluators find the complex events first; this module projects them. Which variable
labels which position is not in a set of positions (a CEA marks positions, not variables),
so each complex event is read again against the formula on its own events — every way they
parse, filters checked as the semantics checks them — and each parse gives the positions of
the selected variables. Distinct parses may give distinct projections (each is an output, as
each is a run of CORE's automaton); equal projections at one end are one complex event
(CORE also reports where a run started, which xmlevents does not: complex events that differ
only there are one here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ._events import Event
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
)

__all__ = ["projects", "project", "project_all"]

# One parse of a stretch of a complex event's events: the variables it binds (visible
# outside it: an iteration's are dropped) with their events' indices, and the positions it
# outputs (those labelled by a selected variable).
_Parse = tuple[frozenset[tuple[str, int]], frozenset[int]]


def projects(query: Query) -> bool:
    """Whether ``query`` selects variables (not ``*``): its outputs are projected."""
    return query.variables is not None


class _Parser:
    """Every parse of one complex event's events (sorted by position) by a formula."""

    def __init__(self, events: Sequence[Event], keep: frozenset[str]) -> None:
        self.events = events
        self.keep = keep
        self.memo: dict[tuple[int, int, int], frozenset[_Parse]] = {}

    def parses(self, f: Formula, i: int, j: int) -> frozenset[_Parse]:
        """The parses of ``f`` that use exactly the events ``i .. j - 1``."""
        key = (id(f), i, j)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = frozenset(self._parses(f, i, j))
        return found

    def _parses(self, f: Formula, i: int, j: int) -> Iterable[_Parse]:
        events = self.events
        if isinstance(f, EventType | As):
            et = f if isinstance(f, EventType) else f.formula
            assert isinstance(et, EventType), "AS on a compound formula is translated first"
            var = et.name if isinstance(f, EventType) else f.var
            if j != i + 1:
                return
            e = events[i]
            if (e.type != et.name and et.name != "*") or (et.stream is not None
                                     and e.stream not in (None, et.stream)):
                return
            yield (frozenset(((var, i),)),
                   frozenset((e.position,)) if var in self.keep else frozenset())
            return
        if isinstance(f, Filter):
            for binding, shown in self.parses(f.formula, i, j):
                valuation = {var: events[k] for var, k in binding}
                # a filter reading a variable bound around it (y[id = x.id], the reference
                # evaluator's) is not checked here: the evaluator found the complex event
                # with it holding, and a parse differing only there is the same projection
                # wherever the names are apart (a safe formula)
                if not f.predicate.variables <= set(valuation) or \
                        f.predicate.evaluate(valuation):
                    yield binding, shown
            return
        if isinstance(f, Or):
            yield from self.parses(f.left, i, j)
            yield from self.parses(f.right, i, j)
            return
        if isinstance(f, Seq | ContiguousSeq):
            contiguous = isinstance(f, ContiguousSeq)
            for k in range(i + 1, j):
                if contiguous and events[k].position != events[k - 1].position + 1:
                    continue
                rights = self.parses(f.right, k, j)
                if not rights:
                    continue
                for b1, s1 in self.parses(f.left, i, k):
                    names = dict(b1)
                    for b2, s2 in rights:
                        if all(names.get(v, k2) == k2 for v, k2 in b2):
                            yield b1 | b2, s1 | s2
            return
        assert isinstance(f, Plus | ContiguousPlus), f
        yield from self._iterations(f, i, j)

    def _iterations(self, f: Plus | ContiguousPlus, i: int, j: int) -> Iterable[_Parse]:
        # one iteration on i .. j - 1, or one on i .. k - 1 and the rest on k .. j - 1; an
        # iteration's bindings stay inside it (bound anew each time, section 3)
        contiguous = isinstance(f, ContiguousPlus)
        for _, shown in self.parses(f.formula, i, j):
            yield frozenset(), shown
        for k in range(i + 1, j):
            if contiguous and self.events[k].position != self.events[k - 1].position + 1:
                continue
            rest = self.parses(f, k, j)
            if not rest:
                continue
            for _, s1 in self.parses(f.formula, i, k):
                for _, s2 in rest:
                    yield frozenset(), s1 | s2


def project(query: Query, match: Match, events: Mapping[int, Event]) -> set[tuple[int, ...]]:
    """The projections of ``match`` on ``query``'s selected variables (see the module):
    one per distinct set of selected positions among its parses. ``events`` gives each of
    its positions' event."""
    keep = frozenset(query.variables or ())
    own = [events[p] for p in match.positions]
    parser = _Parser(own, keep)
    return {tuple(sorted(shown)) for _, shown in parser.parses(query.formula, 0, len(own))}


def project_all(query: Query, matches: Iterable[Match], events: Mapping[int, Event]
                ) -> list[Match]:
    """The complex events ``matches`` (all those ending at one or more positions) projected
    (:func:`project`), distinct per end, in order of end and then positions."""
    out: set[Match] = set()
    for m in matches:
        out.update(Match(m.end, p) for p in project(query, m, events))
    return sorted(out)
