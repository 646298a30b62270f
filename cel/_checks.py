"""Well-formedness and safety of CEL formulas (seed 003, section 5.1), and attributes against a
declared schema; checked when a query is compiled, errors naming the variable with its line and
column.

Reconstructed from the prose of section 5.1 (the extraction lost the formulas):

* the variables a formula *binds*::

      bound(R AS x)      = {x}                 (a bare R is R AS R: {R})
      bound(φ FILTER P)  = bound(φ)
      bound(φ1 OR φ2)    = bound(φ1) ∩ bound(φ2)   ("defined in both formulas")
      bound(φ1 ; φ2)     = bound(φ1) | bound(φ2)   (and CEQL's φ1 : φ2 alike)
      bound(φ+)          = ∅                   (and φ:+: an iteration binds anew each time)
      bound(SEL(φ))      = bound(φ)            (selection strategies)

* **well-formed**: for every subformula ``ψ FILTER P`` and every ``x ∈ var(P)`` there is a
  subformula ``ψ'`` with ``x ∈ bound(ψ')`` of which ``ψ FILTER P`` is a subformula (itself
  included) — otherwise a complex event could depend on events after it;
* the variables a formula *defines outside every iteration* — section 3's ``vdef+``, "all
  variables in vdef(φ) that are defined outside the scope of all + operators" (the paper's
  example: ``vdef+(T AS x ; (H AS y)+) = {x}``)::

      vdef+(R AS x)      = {x}                 (a bare R: {R})
      vdef+(φ FILTER P)  = vdef+(φ)
      vdef+(φ1 OR φ2)    = vdef+(φ1) | vdef+(φ2)   (a union: defined in either)
      vdef+(φ1 ; φ2)     = vdef+(φ1) | vdef+(φ2)   (and φ1 : φ2)
      vdef+(φ+)          = ∅                   (and φ:+)

* **safe**: for every ``φ1 ; φ2``, ``vdef+(φ1) ∩ vdef+(φ2) = ∅`` (section 5.1; the extraction
  lost the set, which is ``vdef+`` — the same one the semantics of ``+`` rebinds, and the one
  Lemma B.12's proof reads: an unsafe sequence mentions a variable "outside the scope of all
  + operators" on both sides). Otherwise one variable would name two positions wherever both
  sides define it (``T AS x ; T AS x``; also ``T ; T``, which is ``T AS T ; T AS T``: name
  them apart, ``T AS t1 ; T AS t2``). ``bound`` (an intersection over ``OR``) is the wrong
  set here (issue 32): ``SELL : (SELL OR BUY)`` binds only ``SELL`` on the right, yet its
  ``SELL`` branch can never match, and an automaton, which reads variables as labels of
  positions, matched it anyway — the paper's automata (Theorem 3) are built for safe
  formulas only. Theorem 1 (Lemma B.12: drop the unsafe disjuncts of the disjunctive normal
  form) gives every formula a safe equivalent, here ``SELL : BUY``, so refusing costs no
  expressiveness. CEQL's ``φ1 : φ2`` is checked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ._errors import CELQueryError
from ._events import PROJECTION
from ._predicates import (
    CondAnd,
    Condition,
    CondNot,
    CondOr,
    FilterAnd,
    FilterOr,
    PathMatches,
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
    Or,
    Plus,
    Query,
    Seq,
)

__all__ = ["bound", "defined", "defined_outside", "definitions", "check_formula",
           "check_attributes", "path_types"]


def _bottom_up(f: Formula, over_or: Callable[[frozenset[str], frozenset[str]], frozenset[str]]
               ) -> dict[int, frozenset[str]]:
    """The variables every subformula of ``f`` defines outside any ``+``, by id, computed
    once bottom-up; ``over_or`` joins the two sides of an ``OR``."""
    memo: dict[int, frozenset[str]] = {}
    for g in reversed(list(f.walk())):  # children before parents
        if isinstance(g, EventType):
            memo[id(g)] = frozenset((g.name,))
        elif isinstance(g, As):
            memo[id(g)] = frozenset((g.var,))
        elif isinstance(g, Filter):
            memo[id(g)] = memo[id(g.formula)]
        elif isinstance(g, Or):
            memo[id(g)] = over_or(memo[id(g.left)], memo[id(g.right)])
        elif isinstance(g, Seq | ContiguousSeq):
            memo[id(g)] = memo[id(g.left)] | memo[id(g.right)]
        else:
            assert isinstance(g, Plus | ContiguousPlus), g
            memo[id(g)] = frozenset()
    return memo


def _bound_all(f: Formula) -> dict[int, frozenset[str]]:
    """``bound`` of every subformula of ``f``, by id: what every run binds (``OR``: both
    sides')."""
    return _bottom_up(f, frozenset.intersection)


def _outside_all(f: Formula) -> dict[int, frozenset[str]]:
    """``vdef+`` of every subformula of ``f``, by id (``OR``: either side's)."""
    return _bottom_up(f, frozenset.union)


def defined_outside(f: Formula) -> frozenset[str]:
    """The variables ``f`` defines outside every ``+`` (section 3's ``vdef+``; see the
    module)."""
    return _outside_all(f)[id(f)]


def bound(f: Formula) -> frozenset[str]:
    """The variables ``f`` binds (see the module)."""
    return _bound_all(f)[id(f)]


def definitions(f: Formula) -> dict[str, set[str]]:
    """Every variable a definition in ``f`` names, at any depth (``x`` of ``R AS x``, ``R`` of
    a bare ``R``), with the event types it is defined on."""
    out: dict[str, set[str]] = {}
    stack: list[tuple[Formula, bool]] = [(f, False)]
    while stack:
        g, under_as = stack.pop()
        if isinstance(g, As):
            assert isinstance(g.formula, EventType)
            out.setdefault(g.var, set()).add(g.formula.name)
        elif isinstance(g, EventType) and not under_as:
            out.setdefault(g.name, set()).add(g.name)
        stack.extend((c, isinstance(g, As)) for c in g.children)
    return out


def defined(f: Formula) -> frozenset[str]:
    """Every variable a definition in ``f`` names, at any depth (the paper's ``vdef``)."""
    return frozenset(definitions(f))


def _atoms(p: Predicate) -> list[VarFilter]:
    out: list[VarFilter] = []
    stack = [p]
    while stack:
        q = stack.pop()
        if isinstance(q, VarFilter):
            out.append(q)
        elif isinstance(q, FilterAnd | FilterOr):
            stack.extend((q.right, q.left))
    return out


def path_types(query: Query) -> list[str]:
    """The path types ``query`` names, in order: its ``MATCHES`` conditions' and its
    ``PROJECT`` partition keys' (``xmlevents cel --primitive`` checks them against the
    events' when nothing matched: the namespace hint)."""
    found: list[str] = []

    def conditions(c: Condition) -> None:
        if isinstance(c, PathMatches):
            found.append(c.path_type)
        elif isinstance(c, CondAnd | CondOr):
            conditions(c.left)
            conditions(c.right)
        elif isinstance(c, CondNot):
            conditions(c.operand)

    for g in query.formula.walk():
        if isinstance(g, Filter):
            for atom in _atoms(g.predicate):
                conditions(atom.condition)
    for key in (k for keys in query.partition_by for k in keys):
        if (m := PROJECTION.fullmatch(key)) is not None:
            found.append(m["pt"].replace("''", "'"))
    return found


def check_formula(f: Formula, text: str = "") -> None:
    """Refuse a formula that is not well-formed or not safe, naming the variable (with the
    line and column of the filter or the sequence where the formula came from text)."""
    bound_of = _bound_all(f)
    outside = _outside_all(f)
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        g, above = stack.pop()
        here = above | bound_of[id(g)]
        if isinstance(g, Filter):
            for atom in _atoms(g.predicate):
                missing = sorted(atom.variables - here)
                if missing:
                    x = missing[0]
                    raise _error(f"the filter {atom} is not well-formed: no part of the pattern "
                                 f"around it binds {x} (bind it with T AS {x}, outside any '+' "
                                 "that does not contain the filter; seed 003, section 5.1)",
                                 atom.pos or g.pos, text)
        if isinstance(g, Seq | ContiguousSeq):
            twice = sorted(outside[id(g.left)] & outside[id(g.right)])
            if twice:
                x = twice[0]
                op = ";" if isinstance(g, Seq) else ":"
                raise _error(f"the pattern is not safe: {x} is defined on both sides of "
                             f"'{op}' (outside any '+') and would have to name two events at "
                             f"once where both define it (name them apart: T AS {x}1 {op} "
                             f"T AS {x}2, or drop the alternative that repeats it; seed 003, "
                             f"section 5.1). CORE reads each occurrence of {x} as an event "
                             "of its own (a label, not a name); use --dialect core "
                             "(dialect=\"core\")", g.pos, text)
        stack.extend((c, here) for c in g.children)


def check_attributes(f: Formula, schema: Mapping[str, Mapping[str, str]],
                     text: str = "") -> None:
    """Refuse a filter reading an attribute that none of the event types its variable is
    defined on declares (``schema``: event type -> attribute -> type name), naming the
    variable and the attribute. Types the schema does not know are refused too."""
    defs = definitions(f)
    for g in f.walk():
        if isinstance(g, EventType) and g.name not in schema and g.name != "*":
            raise _error(f"unknown event type {g.name}: the schema declares "
                         f"{', '.join(sorted(schema)) or 'none'}", g.pos, text)
        if not isinstance(g, Filter):
            continue
        for atom in _atoms(g.predicate):
            for var, attr in sorted(atom.attributes()):
                types = defs.get(var, set())
                if attr == "type" or not types or "*" in types:
                    continue
                if not any(attr in schema.get(t, {}) for t in types):
                    kinds = " or ".join(sorted(types))
                    known = sorted({a for t in types for a in schema.get(t, {})})
                    raise _error(f"unknown attribute {attr} of {var} (an event of type "
                                 f"{kinds}, which declares "
                                 f"{', '.join(known) or 'no attributes'})",
                                 atom.pos or g.pos, text)


def _error(reason: str, pos: tuple[int, int] | None, text: str) -> CELQueryError:
    if pos is None:
        return CELQueryError(reason, line=None, column=None)
    return CELQueryError(reason, text=text, line=pos[0], column=pos[1])
