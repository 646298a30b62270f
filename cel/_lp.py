"""The LP normal form (seed 003, section 5.2, Theorem 2 and its proof in appendix B.2).

A formula is in *LP normal form* when every filter with a unary predicate sits directly on the
definition of its variable: every subformula ``ψ FILTER P`` with ``P`` unary on ``x`` has the
form ``(R AS x) FILTER P``. Non-unary filters are not restricted. An automaton then tests a
unary filter on the one event it reads (section 6); :func:`to_lp` gives that form here as
``Filter(As(EventType(R), x), P)`` with the unary predicates on one definition AND-ed into one
``P`` (a bare ``R`` filtered becomes ``R AS R``).

The construction, reconstructed from the proof of Theorem 2 (the extraction lost its
formulas). First every filter is split into its conjuncts (``ψ FILTER (P ∧ Q)`` is ``(ψ FILTER
P) FILTER Q``). Then, for a unary conjunct ``P`` on ``x`` at ``θ = ψ FILTER P``:

* **local push-down** (step 2 of the proof), when ``x ∈ bound(ψ)``: ``θ`` becomes ``ψ`` with
  every definition ``R AS x`` of ``ψ`` that is outside every ``+`` of ``ψ`` replaced by ``(R AS
  x) FILTER P``. Sound because one valuation serves all of ``ψ`` outside ``+`` (every such
  definition names the same position ``v(x)``), and complete because ``x ∈ bound(ψ)`` means
  every complex event of ``ψ`` passes through one of them. No growth.
* **pop up** (step 1), otherwise: let ``ψ'`` be the lowest ancestor of ``θ`` that binds ``x``
  (well-formedness guarantees one). Inside ``ψ'`` the value ``v(x)`` is fixed, so ``P(v(x))``
  is one truth value for the whole of ``ψ'``, and::

      ψ'  ≡  (ψ'[θ := ψ] FILTER P)  OR  (ψ'[θ := ⊥] FILTER ¬P)

  where ``ψ'[θ := ψ]`` drops the filter (``P`` true) and ``ψ'[θ := ⊥]`` replaces ``θ`` by the
  empty formula (``P`` false), simplified away (``⊥ ; φ = φ ; ⊥ = ⊥+ = ⊥ FILTER Q = ⊥`` and
  ``⊥ OR φ = φ``; a disjunct that is ``⊥`` is left out). Both new filters are then on an
  ancestor that binds ``x`` and are pushed down locally. Only a ``θ`` under an ``OR`` inside
  ``ψ'`` keeps the second disjunct: that is the exponential case of Theorem 2 (the paper's
  "conditional" formula), and it is avoided whenever the formula allows.

A filter on ``x`` under a ``+`` whose body defines ``x`` again (outside deeper ``+``), while
``x`` is bound only above that ``+``, refers to each iteration's own, possibly unbound, ``x``:
the proof renames such variables apart; :func:`to_lp` refuses it (ValueError) and the
reference evaluator takes it.
"""

from __future__ import annotations

from collections.abc import Callable

from ._checks import bound
from ._predicates import (
    CondAnd,
    Condition,
    CondNot,
    CondOr,
    FilterAnd,
    FilterOr,
    Predicate,
    VarFilter,
)
from .ast import As, ContiguousPlus, ContiguousSeq, EventType, Filter, Formula, Or, Plus, Seq

__all__ = ["to_lp", "is_unary_query", "is_lp", "conjuncts", "negate"]

_Path = tuple[int, ...]


def conjuncts(p: Predicate) -> list[Predicate]:
    """The conjuncts of ``p`` (its top-level ANDs taken apart), in order."""
    out: list[Predicate] = []
    stack = [p]
    while stack:
        q = stack.pop()
        if isinstance(q, FilterAnd):
            stack.extend((q.right, q.left))
        else:
            out.append(q)
    return out


def is_unary_query(formula: Formula) -> bool:
    """Whether every filter of ``formula`` is a conjunction of unary predicates (section 6:
    the *unary* formulas, which complex event automata evaluate)."""
    return all(q.is_unary for g in formula.walk() if isinstance(g, Filter)
               for q in conjuncts(g.predicate))


def _condition(p: Predicate) -> Condition:
    """A unary predicate as one condition on its variable."""
    if isinstance(p, VarFilter):
        return p.condition
    if isinstance(p, FilterAnd):
        return CondAnd(_condition(p.left), _condition(p.right))
    assert isinstance(p, FilterOr), p
    return CondOr(_condition(p.left), _condition(p.right))


def negate(p: Predicate) -> Predicate:
    """``¬P`` for a unary ``P`` (the predicates are closed under complement, section 3)."""
    return VarFilter(p.var, CondNot(_condition(p)))


def _children(f: Formula) -> tuple[Formula, ...]:
    return f.children


def _with_child(f: Formula, i: int, c: Formula) -> Formula:
    if isinstance(f, Seq):
        return Seq(c, f.right, pos=f.pos) if i == 0 else Seq(f.left, c, pos=f.pos)
    if isinstance(f, ContiguousSeq):
        return ContiguousSeq(c, f.right, pos=f.pos) if i == 0 else \
            ContiguousSeq(f.left, c, pos=f.pos)
    if isinstance(f, Or):
        return Or(c, f.right, pos=f.pos) if i == 0 else Or(f.left, c, pos=f.pos)
    if isinstance(f, Plus):
        return Plus(c, pos=f.pos)
    if isinstance(f, ContiguousPlus):
        return ContiguousPlus(c, pos=f.pos)
    if isinstance(f, Filter):
        return Filter(c, f.predicate, pos=f.pos)
    assert isinstance(f, As), f
    return As(c, f.var, pos=f.pos)


def _at(f: Formula, path: _Path) -> Formula:
    for i in path:
        f = _children(f)[i]
    return f


def _replace(f: Formula, path: _Path, new: Formula | None) -> Formula | None:
    """``f`` with the node at ``path`` replaced by ``new`` (None: ⊥, simplified away)."""
    if not path:
        return new
    i = path[0]
    child = _replace(_children(f)[i], path[1:], new)
    if child is None:
        if isinstance(f, Or):
            return f.right if i == 0 else f.left
        return None  # ⊥ ; φ, φ ; ⊥, ⊥+, ⊥ FILTER P are all ⊥
    return _with_child(f, i, child)


def _is_definition_of(f: Formula, x: str) -> bool:
    """``R AS x`` (or a bare ``R`` named ``x``) under unary filters on ``x`` only."""
    while isinstance(f, Filter) and f.predicate.is_unary and f.predicate.var == x:
        f = f.formula
    return (isinstance(f, As) and f.var == x) or (isinstance(f, EventType) and f.name == x)


def _push(f: Formula, x: str, p: Predicate) -> Formula:
    """``f`` with ``p`` put on every definition of ``x`` outside every ``+`` (step 2)."""
    if isinstance(f, As):
        return Filter(f, p) if f.var == x else f
    if isinstance(f, EventType):
        return Filter(As(f, f.name, pos=f.pos), p) if f.name == x else f
    if isinstance(f, Plus | ContiguousPlus):
        return f
    out = f
    for i, c in enumerate(_children(f)):
        new = _push(c, x, p)
        if new is not c:
            out = _with_child(out, i, new)
    return out


def _defines_outside_plus(f: Formula, x: str) -> bool:
    """Whether ``f`` defines ``x`` outside every ``+`` of ``f`` (``x ∈ vdef+(f)``)."""
    stack = [f]
    while stack:
        g = stack.pop()
        if (isinstance(g, As) and g.var == x) or (isinstance(g, EventType) and g.name == x):
            return True
        if not isinstance(g, Plus | ContiguousPlus | As):
            stack.extend(_children(g))
    return False


def _rebuild(f: Formula, rewrite: Callable[[Formula], Formula]) -> Formula:
    """``f`` rebuilt bottom-up (iteratively): each node with its rebuilt children, then
    ``rewrite`` applied to it."""
    done: dict[int, Formula] = {}
    for g in reversed(list(f.walk())):
        new = g
        for i, c in enumerate(_children(g)):
            if done[id(c)] is not c:
                new = _with_child(new, i, done[id(c)])
        done[id(g)] = rewrite(new)
    return done[id(f)]


def _split_one(g: Formula) -> Formula:
    if isinstance(g, Filter):
        parts = conjuncts(g.predicate)
        if len(parts) > 1:
            inner = g.formula
            for q in parts:
                inner = Filter(inner, q, pos=g.pos)
            return inner
    return g


def _split(f: Formula) -> Formula:
    """Every filter split into one filter per conjunct."""
    return _rebuild(f, _split_one)


def _misplaced(f: Formula) -> tuple[_Path, str, Predicate] | None:
    """The first (pre-order) unary filter not on a definition of its variable."""
    stack: list[tuple[Formula, _Path]] = [(f, ())]
    while stack:
        g, path = stack.pop()
        if isinstance(g, Filter) and g.predicate.is_unary:
            x = g.predicate.var
            if not _is_definition_of(g.formula, x):
                return path, x, g.predicate
        kids = _children(g)
        stack.extend((kids[i], path + (i,)) for i in reversed(range(len(kids))))
    return None


def _merge_one(new: Formula) -> Formula:
    if isinstance(new, Filter) and new.predicate.is_unary and \
            isinstance(new.formula, EventType) and new.formula.name == new.predicate.var:
        new = Filter(As(new.formula, new.formula.name, pos=new.formula.pos),
                     new.predicate, pos=new.pos)
    if isinstance(new, Filter) and new.predicate.is_unary and \
            isinstance(new.formula, Filter) and new.formula.predicate.is_unary and \
            new.formula.predicate.var == new.predicate.var and \
            isinstance(new.formula.formula, As):
        new = Filter(new.formula.formula, FilterAnd(new.formula.predicate, new.predicate),
                     pos=new.pos)
    return new


def _merge(f: Formula) -> Formula:
    """Stacked unary filters on one definition AND-ed into one (bottom-up)."""
    return _rebuild(f, _merge_one)


def to_lp(formula: Formula) -> Formula:
    """An equivalent formula in LP normal form (see the module); non-unary filters stay where
    they are. The formula must be well-formed (:func:`~._checks.check_formula`).

    Raises:
        ValueError: a unary filter whose variable no ancestor binds (not well-formed), or one
            under a ``+`` that defines its variable again (see the module).
    """
    f = _split(formula)
    while (found := _misplaced(f)) is not None:
        path, x, p = found
        theta = _at(f, path)
        assert isinstance(theta, Filter)
        if x in bound(theta.formula):
            new = _replace(f, path, _push(theta.formula, x, p))
            assert new is not None
            f = new
            continue
        # the lowest ancestor binding x
        up = len(path) - 1
        while up >= 0 and x not in bound(_at(f, path[:up])):
            up -= 1
        if up < 0:
            raise ValueError(f"the filter {p} is not well-formed: nothing binds {x}")
        top = path[:up]
        scope = _at(f, top)
        node = scope
        for i in path[up:]:
            if isinstance(node, Plus | ContiguousPlus) and _defines_outside_plus(node.formula, x):
                raise ValueError(f"the filter {p} is under a '+' that defines {x} again: "
                                 f"which {x} it means changes with each iteration")
            node = _children(node)[i]
        rel = path[up:]
        kept = _replace(scope, rel, theta.formula)
        assert kept is not None
        dropped = _replace(scope, rel, None)
        new_scope: Formula = _push(kept, x, p)
        if dropped is not None:
            new_scope = Or(new_scope, _push(dropped, x, negate(p)), pos=scope.pos)
        replaced = _replace(f, top, new_scope)
        assert replaced is not None
        f = replaced
    return _merge(f)


def is_lp(formula: Formula) -> bool:
    """Whether ``formula`` is in LP normal form (every unary filter on a definition)."""
    for g in formula.walk():
        if isinstance(g, Filter) and g.predicate.is_unary:
            x = g.predicate.var
            inner = g.formula
            if not (isinstance(inner, As) and inner.var == x):
                return False
    return True
