"""The core dialect (issue 32, item 1): CORE's CEQL as CORE evaluates it, translated to the
paper's CEL, which both evaluators take as they are.

CORE does not bind variables to positions as the paper does (section 3); it builds one
automaton transition per event type written (``LogicalCEA::atomic_cea``) and treats names as
*labels* of those transitions (``formula_to_logical_cea.hpp``):

- an event type ``T`` written is a transition labelled ``T``; each occurrence is its own
  transition, so ``CreatePost ; CreatePost`` is two events (the paper's unsafe ``T ; T``);
- ``φ AS x`` adds the label ``x`` to every transition of ``φ`` (``mark_variable.hpp``), so
  ``(T1 ; T2) AS H`` labels both events ``H``, and ``Buy AS X : Sell AS X`` labels two
  events ``X``;
- ``φ FILTER x[P]`` puts ``P`` on every transition of ``φ`` labelled ``x``
  (``apply_atomic_filter.hpp``): each event ``x`` labels must satisfy ``P``; ``F1 AND F2``
  applies both, ``F1 OR F2`` is the union of ``φ FILTER F1`` and ``φ FILTER F2``
  (``apply_filters_to_logical_cea.hpp``); a label that no transition of ``φ`` carries
  filters nothing;
- ``NOT (T FILTER ...)`` is one transition reading an event that fails the type or one of
  the filters, marking nothing (``negate_expected.hpp``: its test is that some bit of the
  transition's predicate is 0): read, not output;
- ``SELECT x, y`` un-marks the transitions not labelled by a selected name
  (``project.hpp``), ``*`` keeps every marked one;
- without ``WITHIN``, a window of one second of the events' time (``within.hpp``'s
  ``DEFAULT_TIME_WINDOW_SIZE``, read through ``generic_evaluator.hpp``'s primary time).

So the translation gives every event type written its own fresh variable, pushes each filter
down to the variables its label reaches (copying the formula under an ``OR`` of filters), and
selects the fresh variables of the selected labels. The result is safe CEL with unary filters
(each variable names one event), evaluated by the automaton. A ``NOT`` becomes an event of
any type (``*``) filtered by ``NOT (type = 'T' AND ...)``, never selected.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping

from ._errors import CELQueryError
from ._events import Event
from ._predicates import (
    Attr,
    Compare,
    CondAnd,
    Condition,
    CondNot,
    Const,
    FilterAnd,
    FilterOr,
    Predicate,
    VarFilter,
)
from .ast import (
    As,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Filter,
    Formula,
    Not,
    Or,
    Plus,
    Query,
    Seq,
    Window,
)

__all__ = ["translate", "from_nanoseconds", "ANY_TYPE", "DEFAULT_WINDOW"]

#: The event type a ``NOT`` reads: any (the automaton's and the reference's wildcard).
ANY_TYPE = "*"
#: CORE's window where a query has no ``WITHIN``: one second (``within.hpp``).
DEFAULT_WINDOW = Window("seconds", 1)

# fresh variable -> the labels of its transition (the type written, and every AS above it)
_Labels = dict[str, frozenset[str]]


class _Translation:
    def __init__(self, query: Query, text: str,
                 schema: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.text = text
        self.schema = schema
        self.types: dict[str, str] = {}  # fresh variable -> its event type
        taken = {g.var for g in query.formula.walk() if isinstance(g, As)} | {
            g.name for g in query.formula.walk() if isinstance(g, EventType)}
        self.taken = set(taken)
        self.counter = itertools.count(1)
        self.hidden: set[str] = set()  # the fresh variables of NOT: never output

    def fresh(self, base: str) -> str:
        while True:
            name = f"{base}_{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def formula(self, f: Formula) -> tuple[Formula, _Labels]:
        if isinstance(f, EventType):
            var = self.fresh(f.name)
            self.types[var] = f.name
            return As(f, var, pos=f.pos), {var: frozenset((f.name,))}
        if isinstance(f, Not):
            return self.negation(f)
        if isinstance(f, As) and isinstance(f.formula, EventType):
            # T AS x: the fresh variable named after x, as the user reads it
            et = f.formula
            var = self.fresh(f.var)
            self.types[var] = et.name
            return As(et, var, pos=f.pos), {var: frozenset((et.name, f.var))}
        if isinstance(f, As):
            inner, labels = self.formula(f.formula)
            return inner, {v: ls | {f.var} for v, ls in labels.items()}
        if isinstance(f, Filter):
            inner, labels = self.formula(f.formula)
            return self.apply(inner, labels, f.predicate), labels
        if isinstance(f, Or | Seq | ContiguousSeq):
            left, l1 = self.formula(f.left)
            right, l2 = self.formula(f.right)
            return type(f)(left, right, pos=f.pos), {**l1, **l2}
        assert isinstance(f, Plus | ContiguousPlus), f
        inner, labels = self.formula(f.formula)
        return type(f)(inner, pos=f.pos), labels

    def negation(self, f: Not) -> tuple[Formula, _Labels]:
        """``NOT (T FILTER T[P] ...)``: an event of any type with ``NOT (type = 'T' AND P
        ...)`` (the filters on ``T``; CORE's filters inside NOT name the type)."""
        g = f.formula
        conditions: list[Condition] = []
        while isinstance(g, Filter):
            conditions.extend(self.negated_filters(g.predicate, g))
            g = g.formula
        assert isinstance(g, EventType)
        test: Condition = Compare("=", Attr("type"), Const(g.name))
        for c in reversed(conditions):
            test = CondAnd(test, c)
        var = self.fresh(f"not_{g.name}")
        self.hidden.add(var)
        atom = As(EventType(ANY_TYPE, g.stream, pos=g.pos), var, pos=f.pos)
        return Filter(atom, VarFilter(var, CondNot(test)), pos=f.pos), {var: frozenset()}

    def negated_filters(self, p: Predicate, where: Filter) -> Iterator[Condition]:
        if isinstance(p, FilterAnd):
            yield from self.negated_filters(p.left, where)
            yield from self.negated_filters(p.right, where)
            return
        inner = where.formula
        while isinstance(inner, Filter):
            inner = inner.formula
        assert isinstance(inner, EventType)
        if not isinstance(p, VarFilter) or p.var != inner.name:
            raise _error(f"NOT ({inner.name} FILTER {p}): a filter inside NOT is on the "
                         f"event type, {inner.name}[...] (CORE's atomic formula)",
                         where, self.text)
        yield p.condition

    def check(self, p: VarFilter, types: set[str]) -> None:
        """With a schema: refuse a filter reading an attribute that none of the event types
        its label reaches declares, naming the label as written (the translation's fresh
        variables are no name of the user's)."""
        if self.schema is None or not types:
            return
        for _, attr in sorted(p.attributes()):
            if attr != "type" and not any(attr in self.schema.get(t, {}) for t in types):
                kinds = " or ".join(sorted(types))
                known = sorted({a for t in types for a in self.schema.get(t, {})})
                raise _error(f"unknown attribute {attr} of {p.var} (events of type {kinds}, "
                             f"which declare {', '.join(known) or 'no attributes'})",
                             p, self.text)

    def apply(self, f: Formula, labels: _Labels, p: Predicate) -> Formula:
        """``f FILTER p`` pushed down to the fresh variables ``p``'s labels reach."""
        if isinstance(p, FilterAnd):
            return self.apply(self.apply(f, labels, p.left), labels, p.right)
        if isinstance(p, FilterOr):
            return Or(self.apply(f, labels, p.left), self.apply(f, labels, p.right),
                      pos=f.pos)
        assert isinstance(p, VarFilter)
        targets = {v for v, ls in labels.items() if p.var in ls}
        self.check(p, {self.types[v] for v in targets if v in self.types})
        cond = p.condition
        return _map_atoms(f, lambda var, atom: _filtered(atom, var, cond)
                          if var in targets else atom)


def _filtered(atom: Formula, var: str, cond: Condition) -> Formula:
    """The translated atom ``atom`` (``T AS var``, perhaps filtered) with ``cond`` too."""
    # a copy of the atom each time: the automaton places filters by the identity of the
    # node they filter, and an OR of filters copies the pattern (its two sides must not
    # share a node that only one side filters)
    if isinstance(atom, Filter):
        assert isinstance(atom.predicate, VarFilter)
        return Filter(_copy(atom.formula),
                      VarFilter(var, CondAnd(atom.predicate.condition, cond)), pos=atom.pos)
    return Filter(_copy(atom), VarFilter(var, cond), pos=atom.pos)


def _copy(atom: Formula) -> As:
    assert isinstance(atom, As)
    return As(atom.formula, atom.var, pos=atom.pos)


def _atom_var(f: Formula) -> str | None:
    """The fresh variable of a translated atom (``T AS v`` or ``(T AS v) FILTER v[...]``)."""
    if isinstance(f, Filter) and isinstance(f.formula, As) and \
            isinstance(f.formula.formula, EventType):
        return f.formula.var
    if isinstance(f, As) and isinstance(f.formula, EventType):
        return f.var
    return None


def _map_atoms(f: Formula, fn: Callable[[str, Formula], Formula]) -> Formula:
    var = _atom_var(f)
    if var is not None:
        return fn(var, f)
    if isinstance(f, Or | Seq | ContiguousSeq):
        return type(f)(_map_atoms(f.left, fn), _map_atoms(f.right, fn), pos=f.pos)
    assert isinstance(f, Plus | ContiguousPlus), f
    return type(f)(_map_atoms(f.formula, fn), pos=f.pos)


def _error(reason: str, where: Formula | VarFilter | None, text: str) -> CELQueryError:
    pos = None if where is None else where.pos
    if pos is None:
        return CELQueryError(reason, line=None, column=None)
    return CELQueryError(reason, text=text, line=pos[0], column=pos[1])


def _names(f: Formula) -> set[str]:
    """Every label ``f`` writes: its event types and its AS names."""
    out: set[str] = set()
    for g in f.walk():
        if isinstance(g, As):
            out.add(g.var)
        elif isinstance(g, EventType):
            out.add(g.name)
    return out


def translate(query: Query, text: str = "",
              schema: Mapping[str, Mapping[str, str]] | None = None) -> Query:
    """The paper's CEL query that evaluates ``query`` (parsed with ``dialect="core"``) as
    CORE does (see the module).

    Raises:
        CELQueryError: a filter or a ``SELECT`` naming a label the pattern never writes (CORE
            warns and ignores the filter, and refuses the projection), a filter inside
            ``NOT`` on another name than its event type, or, with a ``schema``, a filter
            reading an attribute none of its label's event types declares.
    """
    names = _names(query.formula)
    for g in query.formula.walk():
        if isinstance(g, Filter):
            for atom in _var_filters(g.predicate):
                if atom.var not in names:
                    raise _error(f"the filter {atom} names {atom.var}, which the pattern "
                                 "neither writes as an event type nor names with AS (CORE "
                                 "ignores such a filter, with a warning)", g, text)
    t = _Translation(query, text, schema)
    formula, labels = t.formula(query.formula)
    variables: tuple[str, ...] | None
    if query.variables is None:
        variables = None if not t.hidden else tuple(
            v for v in labels if v not in t.hidden)
    else:
        chosen: list[str] = []
        for name in query.variables:
            if name not in names:
                raise CELQueryError(f"SELECT names {name}, which the pattern neither writes "
                                    "as an event type nor names with AS", line=None,
                                    column=None)
            chosen.extend(v for v, ls in labels.items() if name in ls and v not in chosen)
        variables = tuple(chosen)
    within = query.within if query.within is not None else DEFAULT_WINDOW
    return Query(query.strategy, variables, query.streams, formula, query.partition_by,
                 within, query.consume, query.limit)


def _var_filters(p: Predicate) -> Iterator[VarFilter]:
    if isinstance(p, FilterAnd | FilterOr):
        yield from _var_filters(p.left)
        yield from _var_filters(p.right)
    elif isinstance(p, VarFilter):
        yield p


def from_nanoseconds(event: Event) -> Event:
    """``event`` with its ``time`` read as CORE's nanoseconds (its primary time) and given in
    the seconds of :class:`Event` (``xmlevents cel --dialect core`` reads a stream's times
    so): a whole number of seconds stays an ``int``, else the nearest float (the one time
    model counts milliseconds: windows agree with CORE's except within a millisecond of
    their edge). Its attributes are kept as they are (a window over ``[time]`` measures
    nanoseconds, as in CORE)."""
    t = event.time
    if t is None:
        return event
    # built directly, not by dataclasses.replace (a field walk an event: issue 32, item 4)
    if type(t) is int and t % 1_000_000_000 == 0:
        return Event(event.position, event.type, event.attrs, t // 1_000_000_000, event.stream)
    return Event(event.position, event.type, event.attrs, t / 1e9, event.stream)
