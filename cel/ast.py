"""The immutable syntax tree of CEL formulas and CEQL queries (seed 003, sections 3-4).

Core CEL (section 3), as reconstructed from the prose (the extraction lost the grammar)::

    φ ::= R AS x | φ FILTER P | φ OR φ | φ ; φ | φ+

with two operators CORE's CEQL adds (its ``CEQLQueryParser.g4``): contiguous sequencing
``φ : ψ`` (:class:`ContiguousSeq`: ``ψ``'s first event immediately after ``φ``'s last) and
contiguous iteration ``φ:+`` (:class:`ContiguousPlus`: each iteration immediately after the
previous one). CORE's negation ``NOT(...)`` / ``!(...)`` and ``UNLESS`` are not part of CEL
(the paper's logic has no negation, and its guarantees are proved without it): the parser
refuses them with that reason, except in the core dialect (issue 32), which reads ``NOT
(T FILTER ...)`` (:class:`Not`) and ``AS`` on any formula, and translates them
(:mod:`._core`) before anything is evaluated.

``R`` is an event type; a bare ``R`` is sugar for ``R AS R`` (the paper: "formulas of the form
R are syntactic sugar for R AS R"), so a type's name can be filtered as a variable, as CORE's
CEQL does. ``AS`` names one event: CEL's variables are positions (section 3), so ``φ AS x``
is accepted where ``φ`` is an event type only (the core dialect's parse takes any). A
:class:`Query` is CORE's ``SELECT [strategy]
vars FROM streams WHERE φ [PARTITION BY [attrs]] [WITHIN window] [CONSUME BY NONE] [LIMIT
n]``; its strategy is one of section 4's selectors (:class:`Strategy`).

Nodes are frozen; ``pos`` (line, column) is kept for error messages and ignored by ``==``.
``str(node)`` prints CEQL that parses back to an equal node.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from ._predicates import Predicate

__all__ = [
    "Pos",
    "Formula",
    "EventType",
    "As",
    "Seq",
    "ContiguousSeq",
    "Or",
    "Not",
    "Plus",
    "ContiguousPlus",
    "Filter",
    "Predicate",
    "Strategy",
    "Window",
    "Query",
    "Match",
]

Pos = tuple[int, int] | None


class Formula:
    """A CEL formula (abstract)."""

    __slots__ = ()

    @property
    def children(self) -> tuple[Formula, ...]:
        return ()

    pos: Pos

    def walk(self) -> Iterator[Formula]:
        """This formula and its subformulas, in pre-order (iteratively: formulas may nest
        deeply)."""
        stack: list[Formula] = [self]
        while stack:
            f = stack.pop()
            yield f
            stack.extend(reversed(f.children))

    def __str__(self) -> str:
        """CEQL text that parses back to an equal formula (fully bracketed where precedence
        needs it)."""
        return _text(self, 0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{self}>"


@dataclass(frozen=True, slots=True, repr=False)
class EventType(Formula):
    """An event of type ``name`` (``stream>name`` names its stream too); also the variable
    ``name`` (``R`` is ``R AS R``)."""

    name: str
    stream: str | None = None
    pos: Pos = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, repr=False)
class As(Formula):
    """``R AS x``: the event of type ``R`` is named ``x``."""

    formula: Formula
    var: str
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.formula,)


@dataclass(frozen=True, slots=True, repr=False)
class Not(Formula):
    """CORE's ``NOT (T FILTER ...)`` (``--dialect core`` only; its ``NegateExpected``): one
    event that is not a ``T`` passing the filters, read and not output. Not CEL (the paper's
    logic has no negation): the core dialect translates it before evaluation."""

    formula: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.formula,)


@dataclass(frozen=True, slots=True, repr=False)
class Seq(Formula):
    """``φ ; ψ``: a complex event of ``φ`` followed by one of ``ψ``, others in between
    skipped (section 3)."""

    left: Formula
    right: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, repr=False)
class ContiguousSeq(Formula):
    """``φ : ψ`` (CORE's contiguous sequencing): a complex event ``C1`` of ``φ`` and ``C2`` of
    ``ψ`` with ``min(C2) = max(C1) + 1`` — nothing skipped between them (CEQL; not in the
    paper, whose ``;`` skips)."""

    left: Formula
    right: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, repr=False)
class Or(Formula):
    """``φ OR ψ``."""

    left: Formula
    right: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, repr=False)
class Plus(Formula):
    """``φ+``: one or more complex events of ``φ`` in sequence, its variables bound anew in
    each iteration (section 3)."""

    formula: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.formula,)


@dataclass(frozen=True, slots=True, repr=False)
class ContiguousPlus(Formula):
    """``φ:+`` (CORE's contiguous iteration): one or more complex events of ``φ``, each
    starting right after the previous one ends; variables bound anew in each iteration as for
    :class:`Plus`."""

    formula: Formula
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.formula,)


@dataclass(frozen=True, slots=True, repr=False)
class Filter(Formula):
    """``φ FILTER P``."""

    formula: Formula
    predicate: Predicate
    pos: Pos = field(default=None, compare=False)

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.formula,)


class Strategy(enum.Enum):
    """Section 4's selection strategies, by CORE's names (the paper's ``NXT`` is ``NEXT``).

    ``ANY`` is CORE's: its grammar accepts it next to ``ALL``, and CORE evaluates it as
    ``ALL`` (every complex event); here too — the outputs of ``ANY`` are those of ``ALL``."""

    ALL = "ALL"
    ANY = "ANY"
    NEXT = "NEXT"
    LAST = "LAST"
    MAX = "MAX"
    STRICT = "STRICT"


@dataclass(frozen=True, slots=True)
class Window:
    """``WITHIN n EVENTS`` (``kind="events"``: ``max C - min C <= n``),
    ``WITHIN n SECONDS|MINUTES|HOURS`` (``"seconds"``: the events' ``time`` span at most
    ``size`` seconds) or ``WITHIN n [attr]`` (``"attribute"``: the values of ``attr`` span
    less than n, CORE's ``n - 1`` on integers) — CORE's conventions, unit by unit (the paper
    has no windows). ``size`` is an ``int`` for events and attributes (exact at any size).
    The exact checks are :func:`xmlevents.cel.fits`."""

    kind: str
    size: int | float
    attribute: str | None = None

    def __str__(self) -> str:
        size = self.size if isinstance(self.size, int) else \
            int(self.size) if self.size.is_integer() else self.size
        if self.kind == "events":
            return f"{size} EVENTS"
        if self.kind == "seconds":
            return f"{size} SECONDS"
        return f"{size} [{self.attribute}]"


@dataclass(frozen=True, slots=True)
class Query:
    """A CEQL query (see the module).

    ``variables`` None is ``*`` (``()`` is CORE's ``NONE``), else the variables whose
    positions are output (:mod:`._projection`); ``streams`` the names after
    ``FROM`` (free: any source answers to any name); ``partition_by`` CORE's one or two
    attribute lists (``PARTITION BY [a, b], [c, d]``): an event's key is the values of the
    first list whose attributes it all carries — so two event types naming the same thing
    differently share partitions — and an event carrying none belongs to no partition; an
    attribute may be a projection ``PROJECT(path, 'item')`` of a primitive event's path
    instance (see :func:`xmlevents.cel.partition_key`). ``consume`` is CORE's ``CONSUME BY``
    policy, only ``"NONE"`` (or None: not given) being evaluated.
    """

    strategy: Strategy
    variables: tuple[str, ...] | None
    streams: tuple[str, ...]
    formula: Formula
    partition_by: tuple[tuple[str, ...], ...] = ()
    within: Window | None = None
    consume: str | None = None
    limit: int | None = None

    def __str__(self) -> str:
        selected = "*" if self.variables is None else ", ".join(self.variables) or "NONE"
        parts = [f"SELECT {self.strategy.value} {selected}"]
        if self.streams:
            parts.append("FROM " + ", ".join(self.streams))
        parts.append(f"WHERE {self.formula}")
        if self.partition_by:
            parts.append("PARTITION BY " + ", ".join(
                "[" + ", ".join(names) + "]" for names in self.partition_by))
        if self.within is not None:
            parts.append(f"WITHIN {self.within}")
        if self.consume is not None:
            parts.append(f"CONSUME BY {self.consume}")
        if self.limit is not None:
            parts.append(f"LIMIT {self.limit}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True, order=True)
class Match:
    """A complex event (section 3): its last position and all its positions, sorted; under
    ``SELECT x, y`` the positions are those of the variables selected (issue 32), and ``end``
    is still where the complex event ends, which may then be none of them.

    Ordered by ``end``, then by ``positions`` as tuples (lexicographically): the order in which
    the reference evaluator lists its outputs, and the one the automaton evaluator must give
    within one end position to be compared with it."""

    end: int
    positions: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"end": self.end, "events": list(self.positions)}


# --- printing -------------------------------------------------------------------------------

# Binding strength, loosest first, as CORE's grammar orders its alternatives (ANTLR gives the
# earlier alternative of a left-recursive rule the higher precedence): FILTER, OR, ':', ';',
# ':+', '+', AS.
_LEVEL: dict[type[Formula], int] = {Filter: 0, Or: 1, ContiguousSeq: 2, Seq: 3,
                                    ContiguousPlus: 4, Plus: 5, As: 6, EventType: 7, Not: 7}


def _text(f: Formula, outer: int) -> str:
    level = _LEVEL[type(f)]
    if isinstance(f, EventType):
        body = f.name if f.stream is None else f"{f.stream}>{f.name}"
    elif isinstance(f, As):
        body = f"{_text(f.formula, level + 1)} AS {f.var}"
    elif isinstance(f, Not):
        body = f"NOT ({_text(f.formula, 0)})"
    elif isinstance(f, Plus):
        body = f"{_text(f.formula, level)}+"
    elif isinstance(f, ContiguousPlus):
        body = f"{_text(f.formula, level)}:+"
    elif isinstance(f, Seq):
        body = f"{_text(f.left, level)} ; {_text(f.right, level + 1)}"
    elif isinstance(f, ContiguousSeq):
        body = f"{_text(f.left, level)} : {_text(f.right, level + 1)}"
    elif isinstance(f, Or):
        body = f"{_text(f.left, level)} OR {_text(f.right, level + 1)}"
    else:
        assert isinstance(f, Filter)
        body = f"{_text(f.formula, level)} FILTER {f.predicate}"
    return f"({body})" if level < outer else body
