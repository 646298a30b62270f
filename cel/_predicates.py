"""Filters of CEQL formulas: ``x[temp > 40 AND id = 0]`` and their combinations.

CORE's CEQL writes a filter as an *atomic filter* ``x[predicate]`` on one variable, combined
with ``AND``/``OR``; inside the brackets an attribute name is the variable's. So every CORE
filter is unary (one variable per atomic filter). Beyond CORE, an attribute may be qualified by
another variable, ``y[id = x.id]``, which makes the filter binary — the paper's correlation
(formula φ4): only the reference evaluator takes those.

A predicate is evaluated on a valuation: variable -> :class:`~._events.Event`. A comparison
whose attribute an event lacks, or whose values cannot be compared (a string and a number),
is false — never an error in the middle of a stream.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._events import Event, Value

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
    "Expr",
    "Attr",
    "Const",
    "Arith",
    "Neg",
]

_MISSING = object()


class Expr:
    """An arithmetic expression over one event's attributes (and, qualified, others')."""

    __slots__ = ()

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        raise NotImplementedError

    def variables(self, own: str) -> frozenset[str]:
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

    def __str__(self) -> str:
        return self.name if self.var is None else f"{self.var}.{self.name}"


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
        return json.dumps(self.value_)


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod}


@dataclass(frozen=True, slots=True)
class Arith(Expr):
    op: str
    left: Expr
    right: Expr

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        a = self.left.value(own, valuation)
        b = self.right.value(own, valuation)
        if not _number(a) or not _number(b):
            return _MISSING
        try:
            return _ARITH[self.op](a, b)
        except ZeroDivisionError:
            return _MISSING

    def variables(self, own: str) -> frozenset[str]:
        return self.left.variables(own) | self.right.variables(own)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    operand: Expr

    def value(self, own: str, valuation: Mapping[str, Event]) -> Any:
        a = self.operand.value(own, valuation)
        return -a if _number(a) else _MISSING

    def variables(self, own: str) -> frozenset[str]:
        return self.operand.variables(own)

    def __str__(self) -> str:
        return f"-({self.operand})"


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class Condition:
    """The predicate inside ``x[...]`` (abstract)."""

    __slots__ = ()

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        raise NotImplementedError

    def variables(self, own: str) -> frozenset[str]:
        raise NotImplementedError


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "=": operator.eq, "!=": operator.ne}


def _comparable(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return False
    if _number(a) and _number(b):
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

    def __str__(self) -> str:
        return f"({self.left} OR {self.right})"


@dataclass(frozen=True, slots=True)
class CondNot(Condition):
    operand: Condition

    def holds(self, own: str, valuation: Mapping[str, Event]) -> bool:
        return not self.operand.holds(own, valuation)

    def variables(self, own: str) -> frozenset[str]:
        return self.operand.variables(own)

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

    def __str__(self) -> str:
        return f"{self.expr} LIKE {Const(self.pattern)}"


class Predicate:
    """What follows ``FILTER`` (abstract): atomic filters and their AND/OR."""

    __slots__ = ()

    @property
    def variables(self) -> frozenset[str]:
        raise NotImplementedError

    @property
    def is_unary(self) -> bool:
        return len(self.variables) == 1

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class VarFilter(Predicate):
    """``x[condition]``: the condition on the event named ``x``."""

    var: str
    condition: Condition

    @property
    def variables(self) -> frozenset[str]:
        return self.condition.variables(self.var) | {self.var}

    def evaluate(self, valuation: Mapping[str, Event]) -> bool:
        return self.condition.holds(self.var, valuation)

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

    def __str__(self) -> str:
        return f"({self.left} OR {self.right})"
