"""The immutable syntax tree of event expressions (DESIGN section 3) and its Python builders.

Nodes are frozen values with no parent pointers; ``pos`` (line, column of the node's operator
or keyword in the source text) is carried for error messages and ignored by ``==``.
``str(node)`` prints the text form, and parsing it back gives an equal node.

Python operators build the same trees as the text: ``a & b`` (conjunction ∆), ``a | b``
(disjunction ∇), ``a >> b`` (sequence ``;``). Chains flatten into one n-ary node
(``a & b & c`` is one conjunction with three children, as the paper's Figure 3 draws it);
use the functions ``conj``/``disj``/``seq`` to nest explicitly.

>>> e = ins("item") >> (ins("item/price") & ins("item/quantity"))
>>> str(e)
'ins(item) ; (ins(item/price) & ins(item/quantity))'
>>> str(mult(1, None, ins("item/quantity"), mode="non-local"))
'[1,*] ins(item/quantity) with mode=non-local'
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar

from xmlevents._foundation.time import UNITS as UNITS
from xmlevents._foundation.time import Duration as Duration

from ._errors import ArgumentTypeError, InvalidArgumentError
from ._events import CompositeEventType, Op, PrimitiveEventType
from ._paths import PathType

__all__ = [
    "Mode",
    "Context",
    "Modifiers",
    "Pos",
    "Expr",
    "Primitive",
    "Ref",
    "Operator",
    "Disj",
    "Conj",
    "Seq",
    "AnyOf",
    "Not",
    "Mult",
    "Definition",
    "ins",
    "upd",
    "dele",
    "del_",
    "any_op",
    "ref",
    "wildcard",
    "conj",
    "disj",
    "seq",
    "any_of",
    "not_",
    "mult",
    "KEYWORDS",
]

#: Words that cannot name a definition: they start event types, operators and modifiers.
KEYWORDS = frozenset({"ins", "upd", "del", "any", "not", "seq", "and", "or", "with"})

Pos = tuple[int, int]


class Mode(enum.Enum):
    """Termination mode of an operator node (section 3.3)."""

    EARLIEST = "earliest"
    NON_LOCAL = "non-local"
    CUSTOM = "custom"


class Context(enum.Enum):
    """Snoop's parameter contexts (section 2.3); the hierarchical variant is a separate flag."""

    UNRESTRICTED = "unrestricted"
    RECENT = "recent"
    CHRONICLE = "chronicle"
    CONTINUOUS = "continuous"
    CUMULATIVE = "cumulative"


@dataclass(frozen=True, slots=True)
class Modifiers:
    """The ``with`` modifiers of one operator node; ``None`` means "the graph's default"."""

    mode: Mode | None = None
    when: str | None = None
    at: PathType | None = None
    context: Context | None = None
    hierarchical: bool | None = None
    #: The window: the operator's composites (and those of every node beneath it) span fewer
    #: than this many ticks, or less than this :class:`Duration` of event time (issue 13).
    within: int | Duration | None = None
    #: Where each key was written (``(key, (line, column))``, from the parser), so that an
    #: error about a modifier points at it; not part of the value.
    positions: tuple[tuple[str, Pos], ...] = field(default=(), compare=False, repr=False)

    KEYS: ClassVar[tuple[str, ...]] = ("mode", "when", "at", "context", "hierarchical",
                                       "within")

    def pos(self, key: str) -> Pos | None:
        """Where modifier ``key`` was written, if the parser saw it."""
        return next((p for k, p in self.positions if k == key), None)

    @classmethod
    def of(cls, **kwargs: Any) -> Modifiers:
        """Build from keyword values given as enums or their text (``mode="non-local"``).

        Raises:
            ValueError: naming the key and value, and listing the allowed ones.
        """
        values: dict[str, Any] = {}
        for key, value in kwargs.items():
            if value is None:
                continue
            if key == "mode":
                values[key] = _enum_value(Mode, key, value)
            elif key == "context":
                values[key] = _enum_value(Context, key, value)
            elif key == "at":
                values[key] = PathType.of(value)
            elif key == "when":
                if not isinstance(value, str) or not value.strip():
                    raise InvalidArgumentError(
                        f"when={value!r}: give an XPath 1.0 expression as a string")
                values[key] = value
            elif key == "hierarchical":
                if not isinstance(value, bool):
                    raise InvalidArgumentError(f"hierarchical={value!r}: use True or False")
                values[key] = value
            elif key == "within":
                values[key] = window(value)
            else:
                raise InvalidArgumentError(f"unknown modifier {key!r}; use {', '.join(cls.KEYS)}")
        return cls(**values)

    def items(self) -> Iterator[tuple[str, Any]]:
        """The modifiers that are set, in the canonical order of ``KEYS``."""
        for key in self.KEYS:
            value = getattr(self, key)
            if value is not None:
                yield key, value

    def __bool__(self) -> bool:
        return any(True for _ in self.items())


# Durations are the foundation's, shared with cel (one time model, issue 28); re-exported here
# and from xmlevents.algebra as before.


def window(value: Any) -> int | Duration:
    """A window: a positive number of ticks, or a :class:`Duration` (or its text, ``"30s"``).

    Raises:
        InvalidArgumentError: for anything else, saying what to give.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, Duration):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit() and int(text) > 0:
            return int(text)
        return Duration.parse(text)
    raise InvalidArgumentError(f"within={value!r}: give a positive number of ticks (within=100) "
                               "or a duration (within=30s)")


def _enum_value(cls: type[enum.Enum], key: str, value: Any) -> Any:
    if isinstance(value, cls):
        return value
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(m.value for m in cls)
        raise InvalidArgumentError(
            f"{key}={value!r} is not allowed; use one of {allowed}") from None


NO_MODIFIERS = Modifiers()


class Expr:
    """Base of every expression node; gives the operators ``&``, ``|`` and ``>>``."""

    __slots__ = ()

    pos: Pos | None

    @property
    def children(self) -> tuple[Expr, ...]:
        return ()

    def __and__(self, other: Expr | str) -> Conj:
        return _chain(Conj, self, other)

    def __or__(self, other: Expr | str) -> Disj:
        return _chain(Disj, self, other)

    def __rshift__(self, other: Expr | str) -> Seq:
        return _chain(Seq, self, other)

    def __rand__(self, other: str) -> Conj:
        return _chain(Conj, other, self)

    def __ror__(self, other: str) -> Disj:
        return _chain(Disj, other, self)

    def __rrshift__(self, other: str) -> Seq:
        return _chain(Seq, other, self)

    def walk(self) -> Iterator[Expr]:
        """This node and its descendants, pre-order."""
        stack: list[Expr] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def __str__(self) -> str:
        from ._printer import to_text

        return to_text(self)


# --- leaves ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, repr=False)
class Primitive(Expr):
    """A primitive event type ``op(pt)`` as a leaf: ``ins(item)``, ``*(price)``."""

    op: Op
    path: PathType
    pos: Pos | None = field(default=None, compare=False)

    @property
    def event_type(self) -> PrimitiveEventType:
        return PrimitiveEventType(self.op, self.path)

    def __repr__(self) -> str:
        return f"Primitive({str(self)!r})"


@dataclass(frozen=True, slots=True, repr=False)
class Ref(Expr):
    """A composite event type as a leaf: ``Name``, ``Name(pt)`` or the wildcard ``%(pt)``.

    ``name`` is None for the wildcard; ``path`` is None when the text gives only a name (the
    referenced definition's derived path type is used).
    """

    name: str | None
    path: PathType | None = None
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.name is None and self.path is None:
            raise InvalidArgumentError("Ref: the wildcard name needs a path type, as in %(item)")

    def event_type(self, default: PathType) -> CompositeEventType:
        return CompositeEventType(self.name, self.path if self.path is not None else default)

    def __repr__(self) -> str:
        return f"Ref({str(self)!r})"


# --- operators -------------------------------------------------------------------------------

class Operator(Expr):
    """An operator node; ``mods`` holds its ``with`` modifiers."""

    __slots__ = ()

    mods: Modifiers
    symbol: ClassVar[str]

    def with_(self, **kwargs: Any) -> Operator:
        """A copy with more modifiers set (``with`` in the text).

        Raises:
            ValueError: if a modifier is set twice.
        """
        extra = Modifiers.of(**kwargs)
        for key, _ in extra.items():
            if getattr(self.mods, key) is not None:
                raise InvalidArgumentError(f"modifier {key!r} is set twice on {self.symbol}")
        merged = {k: v for k, v in self.mods.items()}
        merged.update(dict(extra.items()))
        return replace(self, mods=Modifiers(**merged, positions=self.mods.positions))  # type: ignore[type-var]  # replace() on an Operator subclass

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


def _check_children(kind: str, children: tuple[Expr, ...], least: int) -> None:
    if len(children) < least:
        raise InvalidArgumentError(f"{kind} needs at least {least} operands, got {len(children)}")
    for child in children:
        if not isinstance(child, Expr):
            raise ArgumentTypeError(f"{kind}: operand {child!r} is not an expression")


@dataclass(frozen=True, slots=True, repr=False)
class Disj(Operator):
    """Disjunction ∇ (``a | b``): raised when any child holds an event."""

    children: tuple[Expr, ...]
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = "|"

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        _check_children("disjunction", self.children, 2)


@dataclass(frozen=True, slots=True, repr=False)
class Conj(Operator):
    """Conjunction ∆ (``a & b``): raised when every child holds an event."""

    children: tuple[Expr, ...]
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = "&"

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        _check_children("conjunction", self.children, 2)


@dataclass(frozen=True, slots=True, repr=False)
class Seq(Operator):
    """Sequence (``a ; b``): every child holds an event, in the order of the children."""

    children: tuple[Expr, ...]
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = ";"

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        _check_children("sequence", self.children, 2)


@dataclass(frozen=True, slots=True, repr=False)
class AnyOf(Operator):
    """Snoop's ``any(n, E1, ..., Em)``: events of ``n`` distinct children, in any order."""

    n: int
    children: tuple[Expr, ...]
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = "any"

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        _check_children("any", self.children, 1)
        if isinstance(self.n, bool) or not isinstance(self.n, int) or not 1 <= self.n <= len(
                self.children):
            raise InvalidArgumentError(
                f"any: n={self.n!r} must be an integer from 1 to the number of "
                f"operands ({len(self.children)})")


@dataclass(frozen=True, slots=True, repr=False)
class Not(Operator):
    """Snoop's ``not(E1, E2, E3)``: E1 then E3 with no E2 in between."""

    children: tuple[Expr, ...]
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = "not"

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))
        _check_children("not", self.children, 3)
        if len(self.children) != 3:
            raise InvalidArgumentError(f"not takes exactly 3 operands (E1, E2, E3), got "
                                       f"{len(self.children)}")


@dataclass(frozen=True, slots=True, repr=False)
class Mult(Operator):
    """The multiplicity operator ×[l,u] (``[l,u] E``; ``high`` None for ``*``), section 3.2."""

    low: int
    high: int | None
    child: Expr
    mods: Modifiers = NO_MODIFIERS
    pos: Pos | None = field(default=None, compare=False)
    symbol: ClassVar[str] = "[]"

    def __post_init__(self) -> None:
        if isinstance(self.low, bool) or not isinstance(self.low, int) or self.low < 0:
            raise InvalidArgumentError(f"[l,u]: l={self.low!r} must be a non-negative integer")
        if self.high is not None and (isinstance(self.high, bool) or not isinstance(
                self.high, int) or self.high < self.low or self.high < 1):
            raise InvalidArgumentError(f"[l,u]: u={self.high!r} must be an integer >= max(l, 1) "
                                       f"(l={self.low}), or * for no upper bound")
        if not isinstance(self.child, Expr):
            raise ArgumentTypeError(f"[l,u]: operand {self.child!r} is not an expression")

    @property
    def children(self) -> tuple[Expr, ...]:
        return (self.child,)


@dataclass(frozen=True, slots=True)
class Definition:
    """``name := expr``: defines the composite event type ``name`` by an expression."""

    name: str
    expr: Expr
    pos: Pos | None = field(default=None, compare=False)
    source: str = field(default="", compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name} := {self.expr}"


# --- builders --------------------------------------------------------------------------------

def _expr(value: Expr | str) -> Expr:
    """Accept an expression or its text, as every builder does (sqlglot's ``maybe_parse``)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, str):
        from ._parser import parse

        return parse(value)
    raise ArgumentTypeError(f"expected an expression or its text, got {value!r}")


_Chained = TypeVar("_Chained", "Conj", "Disj", "Seq")


def _chain(cls: type[_Chained], left: Expr | str, right: Expr | str) -> _Chained:
    """``left op right`` as one n-ary node: an unmodified operand of the same kind is flattened
    (``a & b & c`` is one conjunction with three children, as in Figure 3)."""
    parts: list[Expr] = []
    for side in (_expr(left), _expr(right)):
        if type(side) is cls and not side.mods:
            parts.extend(side.children)
        else:
            parts.append(side)
    return cls(tuple(parts))


def ins(path: str | PathType) -> Primitive:
    """``ins(pt)``: insertion of a node at ``path``."""
    return Primitive(Op.INS, PathType.of(path))


def upd(path: str | PathType) -> Primitive:
    """``upd(pt)``: update of a text or attribute node at ``path``."""
    return Primitive(Op.UPD, PathType.of(path))


def dele(path: str | PathType) -> Primitive:
    """``del(pt)``: deletion of a node at ``path``."""
    return Primitive(Op.DEL, PathType.of(path))


del_ = dele


def any_op(path: str | PathType) -> Primitive:
    """``*(pt)``: any operation on a node at ``path``."""
    return Primitive(Op.ANY, PathType.of(path))


def ref(name: str, path: str | PathType | None = None) -> Ref:
    """``Name`` or ``Name(pt)``: events of another definition."""
    return Ref(name, PathType.of(path) if path is not None else None)


def wildcard(path: str | PathType) -> Ref:
    """``%(pt)``: events of any composite type with path type ``pt``."""
    return Ref(None, PathType.of(path))


def conj(*children: Expr | str, **mods: Any) -> Conj:
    """Conjunction of ``children`` with ``with`` modifiers given as keywords."""
    return Conj(tuple(_expr(c) for c in children), Modifiers.of(**mods))


def disj(*children: Expr | str, **mods: Any) -> Disj:
    """Disjunction of ``children``."""
    return Disj(tuple(_expr(c) for c in children), Modifiers.of(**mods))


def seq(*children: Expr | str, **mods: Any) -> Seq:
    """Sequence of ``children`` in the given order."""
    return Seq(tuple(_expr(c) for c in children), Modifiers.of(**mods))


def any_of(n: int, *children: Expr | str, **mods: Any) -> AnyOf:
    """Snoop's ``any(n, ...)``."""
    return AnyOf(n, tuple(_expr(c) for c in children), Modifiers.of(**mods))


def not_(first: Expr | str, middle: Expr | str, last: Expr | str, **mods: Any) -> Not:
    """Snoop's ``not(E1, E2, E3)``."""
    return Not((_expr(first), _expr(middle), _expr(last)), Modifiers.of(**mods))


def mult(low: int, high: int | None, child: Expr | str, **mods: Any) -> Mult:
    """The multiplicity operator ``[low,high] child`` (``high=None`` for ``*``)."""
    return Mult(low, high, _expr(child), Modifiers.of(**mods))


AnyExpr = Primitive | Ref | Disj | Conj | Seq | AnyOf | Not | Mult
