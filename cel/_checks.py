"""Well-formedness and safety of CEL formulas (seed 003, section 5), checked when parsed.

Reconstructed from the prose of section 5:

* the variables a formula *binds*: ``bound(R AS x) = {x}`` (and ``bound(R) = {R}``, ``R`` being
  ``R AS R``); ``bound(φ FILTER P) = bound(φ)``; ``bound(φ OR ψ) = bound(φ) ∩ bound(ψ)`` (a
  variable must be defined on both sides); ``bound(φ ; ψ) = bound(φ) | bound(ψ)``;
  ``bound(φ+) = ∅`` (an iteration's variables are bound anew each time, not outside);
* **well-formed**: for every ``ψ FILTER P`` and every variable ``x`` of ``P``, some subformula
  containing ``ψ FILTER P`` (itself included) binds ``x`` — otherwise the output could depend
  on events after it;
* **safe**: for every ``φ ; ψ``, ``bound(φ) ∩ bound(ψ) = ∅`` — otherwise one variable would
  name two positions and the formula could never match (``T AS x ; T AS x``; also ``T ; T``,
  which is ``T AS T ; T AS T``: name them apart, ``T AS t1 ; T AS t2``).
"""

from __future__ import annotations

from ._errors import CELQueryError
from .ast import As, EventType, Filter, Formula, Or, Plus, Seq

__all__ = ["bound", "defined", "check_formula"]


def _bound_all(f: Formula) -> dict[int, frozenset[str]]:
    """``bound`` of every subformula of ``f``, by id, computed once bottom-up."""
    memo: dict[int, frozenset[str]] = {}
    for g in reversed(list(f.walk())):  # children before parents
        if isinstance(g, EventType):
            memo[id(g)] = frozenset((g.name,))
        elif isinstance(g, As):
            memo[id(g)] = frozenset((g.var,))
        elif isinstance(g, Filter):
            memo[id(g)] = memo[id(g.formula)]
        elif isinstance(g, Or):
            memo[id(g)] = memo[id(g.left)] & memo[id(g.right)]
        elif isinstance(g, Seq):
            memo[id(g)] = memo[id(g.left)] | memo[id(g.right)]
        else:
            assert isinstance(g, Plus)
            memo[id(g)] = frozenset()
    return memo


def bound(f: Formula) -> frozenset[str]:
    """The variables ``f`` binds (see the module)."""
    return _bound_all(f)[id(f)]


def defined(f: Formula) -> frozenset[str]:
    """Every variable a definition in ``f`` names, at any depth: ``x`` of ``R AS x``, ``R``
    of a bare ``R``."""
    out: set[str] = set()
    stack: list[tuple[Formula, bool]] = [(f, False)]
    while stack:
        g, under_as = stack.pop()
        if isinstance(g, As):
            out.add(g.var)
        elif isinstance(g, EventType) and not under_as:
            out.add(g.name)
        stack.extend((c, isinstance(g, As)) for c in g.children)
    return frozenset(out)


def check_formula(f: Formula, text: str = "") -> None:
    """Refuse a formula that is not well-formed or not safe, naming the variable (with the
    line and column of the filter or sequence where the formula came from text)."""
    bound_of = _bound_all(f)
    # well-formedness: a filter's variables bound by it or an ancestor
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        g, above = stack.pop()
        here = above | bound_of[id(g)]
        if isinstance(g, Filter):
            missing = sorted(g.predicate.variables - here)
            if missing:
                raise _error(f"the filter on {missing[0]} is not well-formed: no part of the "
                             f"pattern around it binds {missing[0]} (bind it with T AS "
                             f"{missing[0]}, outside any '+' that does not contain the filter)",
                             g, text)
        if isinstance(g, Seq):
            twice = sorted(bound_of[id(g.left)] & bound_of[id(g.right)])
            if twice:
                raise _error(f"the pattern is not safe: {twice[0]} is bound on both sides of "
                             f"';' and would have to name two events at once (name them "
                             f"apart: T AS {twice[0]}1 ; T AS {twice[0]}2)", g, text)
        stack.extend((c, here) for c in g.children)


def _error(reason: str, g: Formula, text: str) -> CELQueryError:
    pos = getattr(g, "pos", None)
    if pos is None:
        return CELQueryError(reason, line=None, col=None)
    return CELQueryError(reason, text=text, line=pos[0], col=pos[1])
