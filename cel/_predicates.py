"""Filters of CEQL formulas: ``x[temp > 40 AND id = 0]`` and their combinations.

CORE's CEQL writes a filter as an *atomic filter* ``x[predicate]`` on one variable, combined
with ``AND``/``OR``; inside the brackets an attribute name is the variable's. So every CORE
filter is unary (one variable per atomic filter). Beyond CORE, an attribute may be qualified by
another variable, ``y[id = x.id]``, which makes the filter binary — the paper's correlation
(formula φ4): only the reference evaluator takes those.

A predicate is evaluated on a valuation: variable -> :class:`~._events.Event`. A comparison
whose attribute an event lacks, or whose values cannot be compared (a string and a number),
is false — never an error in the middle of a stream (``!=`` of two present values of
different kinds is true). Inside ``x[...]`` the name ``type`` is the event's type unless the
event carries an attribute of that name.

The paper's predicates (section 3) are sets of tuples closed under intersection, union and
complement; a unary one (section 5.2: it mentions one variable) is what a complex event
automaton can test on one event as it arrives (section 6), hence :attr:`Predicate.is_unary`,
:attr:`Predicate.var` and :meth:`Predicate.test`.

For the project's primitive events (``ins``/``upd``/``del`` with a ``path``): ``x[path
MATCHES 'item/price']`` holds when the event's path type is an instance of the given one in the
event algebra's sense (``⪰``, seed 000 section 2.2: equal, or ended by it; ``*`` steps take
any element), which :func:`xmlevents.algebra.compatible` decides.

Arithmetic is exact (issue 32): ``/`` of two integers is their exact quotient — an integer
where it divides, else a :class:`~fractions.Fraction` — not CORE's C++ integer division
(``(quantity*100)/120`` is 35/6 for a quantity of 7, where CORE computes 5) and not a
rounded float; ``%`` is Python's (the sign of the divisor). The paper's predicates are
relations over the tuples' values (section 3), which arithmetic as written describes.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from xmlevents._foundation.names import ASCII_NAME_CHAR, ASCII_NAME_START

from ._events import Event, Value, is_number

__all__ = [
    "Predicate",
    "VarFilter",
    "FilterAnd",
    "FilterOr",
    "Condition",
    "Compare",
    "CondAnd",
    "CondOr",
    "CondNot",
    "In",
    "Like",
    "PathMatches",
    "Expr",
    "Attr",
    "Const",
    "Arith",
    "Neg",
]

_MISSING = object()
# An attribute printed without backquotes: a CORE identifier (ASCII by design, as the
# parser's names: cel/_parser.py), the foundation's ASCII part of an XML name.
_PLAIN = re.compile(f"[{ASCII_NAME_START}][{ASCII_NAME_CHAR}]*")


class Expr:
    """An arithmetic expression over one event's attributes (and, qualified, others')."""

    __slots__ = ()

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        raise NotImplementedError

    def variables(self, own: str) -> frozenset[str]:
        return frozenset()

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        """``(variable, attribute)`` for every attribute it reads."""
        return frozenset()


@dataclass(frozen=True, slots=True)
class Attr(Expr):
    """An attribute: of the filter's own variable, or ``var.name`` of another."""

    name: str
    var: str | None = None

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        event = valuation.get(self.var or own)
        if event is None:
            return _MISSING
        if self.name == "type":
            return event.type
        return event.attrs.get(self.name, _MISSING)

    def variables(self, own: str) -> frozenset[str]:
        return frozenset((self.var or own,))

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return frozenset(((self.var or own, self.name),))

    def __str__(self) -> str:
        name = self.name if _PLAIN.fullmatch(self.name) else \
            "`" + self.name.replace("`", "``") + "`"
        return name if self.var is None else f"{self.var}.{name}"


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value_: Value

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        return self.value_

    def __str__(self) -> str:
        if isinstance(self.value_, str):
            return "'" + self.value_.replace("'", "''") + "'"
        if isinstance(self.value_, bool):
            return "true" if self.value_ else "false"
        if (isinstance(self.value_, float) and self.value_ < 0) or \
                (isinstance(self.value_, int) and self.value_ < 0):
            return f"({json.dumps(self.value_)})"
        return json.dumps(self.value_)


def _divide(a: Any, b: Any) -> Any:
    """``a / b`` as arithmetic has it, not as CORE's C++ does (issue 32: CORE divides two
    integers as integers, ``700 / 120`` is 5 there): two integers divide exactly — the
    integer quotient where it is one, else the exact fraction (``Fraction(35, 6)``, never a
    rounded float), which compares exactly with ints and floats; a float makes it a float
    division."""
    if type(a) is int and type(b) is int:
        q, r = divmod(a, b)
        return q if r == 0 else Fraction(a, b)
    return a / b


def _core_divide(a: Any, b: Any) -> Any:
    """CORE's ``a / b`` (``--dialect core``; its ``division.hpp``, C++'s ``/`` on the
    expression's type): two integers give the integer quotient truncated toward zero
    (``700 / 120`` is 5, ``-7 / 2`` is -3), else a float division."""
    if type(a) is int and type(b) is int:
        if b == 0:
            raise ZeroDivisionError
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a / b


def _core_modulo(a: Any, b: Any) -> Any:
    """CORE's ``a % b`` (``modulo.hpp``: C++'s ``%``, the sign of ``a``); CORE refuses it on
    doubles, here a float remainder takes the sign of ``a`` alike."""
    if type(a) is int and type(b) is int:
        if b == 0:
            raise ZeroDivisionError
        return a - b * _core_divide(a, b)
    return math.fmod(a, b)


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide,
    "%": operator.mod}
_CORE_ARITH = {**_ARITH, "/": _core_divide, "%": _core_modulo}


@dataclass(frozen=True, slots=True)
class Arith(Expr):
    """``left op right``; ``core``: CORE's integer ``/`` and ``%`` (``--dialect core``)."""

    op: str
    left: Expr
    right: Expr
    core: bool = False

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        a = self.left.value(own, valuation)
        b = self.right.value(own, valuation)
        if not is_number(a) or not is_number(b):
            return _MISSING
        try:
            return (_CORE_ARITH if self.core else _ARITH)[self.op](a, b)
        except ZeroDivisionError:
            return _MISSING

    def variables(self, own: str) -> frozenset[str]:
        return self.left.variables(own) | self.right.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.left.attributes(own) | self.right.attributes(own)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    operand: Expr

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        a = self.operand.value(own, valuation)
        return -a if is_number(a) else _MISSING

    def variables(self, own: str) -> frozenset[str]:
        return self.operand.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.operand.attributes(own)

    def __str__(self) -> str:
        return f"-({self.operand})"


class Condition:
    """The predicate inside ``x[...]`` (abstract)."""

    __slots__ = ()

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        raise NotImplementedError

    def variables(self, own: str) -> frozenset[str]:
        raise NotImplementedError

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        """``(variable, attribute)`` for every attribute it reads."""
        raise NotImplementedError


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "=": operator.eq, "!=": operator.ne}


def _comparable(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return False
    if is_number(a) and is_number(b):
        return True
    return type(a) is type(b)


@dataclass(frozen=True, slots=True)
class Compare(Condition):
    op: str
    left: Expr
    right: Expr

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        a = self.left.value(own, valuation)
        b = self.right.value(own, valuation)
        if not _comparable(a, b):
            return self.op == "!=" and a is not _MISSING and b is not _MISSING
        return _COMPARE[self.op](a, b)

    def variables(self, own: str) -> frozenset[str]:
        return self.left.variables(own) | self.right.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.left.attributes(own) | self.right.attributes(own)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True, slots=True)
class CondAnd(Condition):
    left: Condition
    right: Condition

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        return self.left.holds(own, valuation) and self.right.holds(own, valuation)

    def variables(self, own: str) -> frozenset[str]:
        return self.left.variables(own) | self.right.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.left.attributes(own) | self.right.attributes(own)

    def __str__(self) -> str:
        return f"({self.left} AND {self.right})"


@dataclass(frozen=True, slots=True)
class CondOr(Condition):
    left: Condition
    right: Condition

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        return self.left.holds(own, valuation) or self.right.holds(own, valuation)

    def variables(self, own: str) -> frozenset[str]:
        return self.left.variables(own) | self.right.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.left.attributes(own) | self.right.attributes(own)

    def __str__(self) -> str:
        return f"({self.left} OR {self.right})"


@dataclass(frozen=True, slots=True)
class CondNot(Condition):
    operand: Condition

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        return not self.operand.holds(own, valuation)

    def variables(self, own: str) -> frozenset[str]:
        return self.operand.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.operand.attributes(own)

    def __str__(self) -> str:
        return f"NOT ({self.operand})"


@dataclass(frozen=True, slots=True)
class In(Condition):
    """``attr IN {v1, v2, ...}`` (``NOT IN`` with ``negated``)."""

    expr: Expr
    values: tuple[Value, ...]
    negated: bool = False

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        v = self.expr.value(own, valuation)
        if v is _MISSING:
            return False
        found = any(_comparable(v, w) and v == w for w in self.values)
        return found != self.negated

    def variables(self, own: str) -> frozenset[str]:
        return self.expr.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.expr.attributes(own)

    def __str__(self) -> str:
        values = ", ".join(str(Const(v)) for v in self.values)
        return f"{self.expr} {'NOT IN' if self.negated else 'IN'} {{{values}}}"


@dataclass(frozen=True, slots=True)
class Like(Condition):
    """``attr LIKE 'regex'``: the whole string value matches the regular expression."""

    expr: Expr
    pattern: str
    compiled: re.Pattern[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern))

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        v = self.expr.value(own, valuation)
        return isinstance(v, str) and self.compiled.fullmatch(v) is not None

    def variables(self, own: str) -> frozenset[str]:
        return self.expr.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.expr.attributes(own)

    def __str__(self) -> str:
        return f"{self.expr} LIKE {Const(self.pattern)}"


@dataclass(frozen=True, slots=True)
class PathMatches(Condition):
    """``attr MATCHES 'path type'``: the attribute (a primitive event's ``path``) names a path
    type that is an instance of the given one (the event algebra's ``⪰``; see the module)."""

    expr: Expr
    path_type: str

    def __post_init__(self) -> None:
        from xmlevents.algebra import PathType

        PathType.parse(self.path_type)  # refused here, when the query is read

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        v = self.expr.value(own, valuation)
        return isinstance(v, str) and _path_matches(v, self.path_type)

    def variables(self, own: str) -> frozenset[str]:
        return self.expr.variables(own)

    def attributes(self, own: str) -> frozenset[tuple[str, str]]:
        return self.expr.attributes(own)

    def __str__(self) -> str:
        return f"{self.expr} MATCHES {Const(self.path_type)}"


@functools.lru_cache(maxsize=4096)
def _path_matches(path: str, path_type: str) -> bool:
    from xmlevents.algebra import Op, PathType, PrimitiveEventType, XmlEventsError, compatible

    try:
        pt = PathType.parse(path)
    except XmlEventsError:
        return False
    return compatible(PrimitiveEventType(Op.INS, pt),
                      PrimitiveEventType(Op.ANY, PathType.parse(path_type)))


class Predicate:
    """What follows ``FILTER`` (abstract): atomic filters ``x[condition]`` and their AND/OR.

    ``variables`` are the variables it mentions (the filtered ones and those a qualified
    attribute ``y.a`` names); a predicate is *unary* when there is one (section 5.2), and then
    :attr:`var` is that variable and :meth:`test` decides it on one event.
    """

    __slots__ = ()

    @property
    def variables(self) -> frozenset[str]:
        raise NotImplementedError

    @property
    def is_unary(self) -> bool:
        """Whether it mentions exactly one variable (the paper's unary predicates)."""
        return len(self.variables) == 1

    @property
    def var(self) -> str:
        """The one variable of a unary predicate.

        Raises:
            ValueError: the predicate is not unary."""
        names = self.variables
        if len(names) != 1:
            raise ValueError(f"{self} is not unary: it mentions {', '.join(sorted(names))}")
        return next(iter(names))

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        """Whether it holds of the events ``valuation`` gives its variables (each of its
        variables must be given)."""
        raise NotImplementedError

    def test(self, event: Event) -> bool:
        """A unary predicate on one event (as :meth:`evaluate` with ``{var: event}``)."""
        return self.evaluate({self.var: event})

    def attributes(self) -> frozenset[tuple[str, str]]:
        """``(variable, attribute)`` for every attribute it reads."""
        raise NotImplementedError

    def attribute_names(self, var: str) -> frozenset[str]:
        """The attributes it reads of the event named ``var`` (to check them against a
        declared schema)."""
        return frozenset(a for v, a in self.attributes() if v == var)


@dataclass(frozen=True, slots=True)
class VarFilter(Predicate):
    """``x[condition]``: the condition on the event named ``x``."""

    var: str = field()  # a field, not the inherited property's default
    condition: Condition = field()
    pos: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def variables(self) -> frozenset[str]:
        return self.condition.variables(self.var) | {self.var}

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        return self.condition.holds(self.var, valuation)

    def attributes(self) -> frozenset[tuple[str, str]]:
        return self.condition.attributes(self.var)

    def __str__(self) -> str:
        text = str(self.condition)
        if isinstance(self.condition, CondAnd | CondOr):
            text = text[1:-1]  # its own parentheses: the brackets group it
        return f"{self.var}[{text}]"


@dataclass(frozen=True, slots=True)
class FilterAnd(Predicate):
    left: Predicate
    right: Predicate

    @property
    def variables(self) -> frozenset[str]:
        return self.left.variables | self.right.variables

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        return self.left.evaluate(valuation) and self.right.evaluate(valuation)

    def attributes(self) -> frozenset[tuple[str, str]]:
        return self.left.attributes() | self.right.attributes()

    def __str__(self) -> str:
        return f"({self.left} AND {self.right})"


@dataclass(frozen=True, slots=True)
class FilterOr(Predicate):
    left: Predicate
    right: Predicate

    @property
    def variables(self) -> frozenset[str]:
        return self.left.variables | self.right.variables

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        return self.left.evaluate(valuation) or self.right.evaluate(valuation)

    def attributes(self) -> frozenset[tuple[str, str]]:
        return self.left.attributes() | self.right.attributes()

    def __str__(self) -> str:
        return f"({self.left} OR {self.right})"
