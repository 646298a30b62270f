"""The immutable syntax tree of SNOOP-R event expressions (seed 001, sections 2.2-2.3).

An expression is one of:

* :class:`Atomic` — an atomic event type with its parameters, ``newCD(title=T, artist="U2")``:
  each :class:`Param` relates a parameter of the signalled event to a :class:`Var` (the
  markup's ``bindVar``) or requires a :class:`Literal` value. The type is a name signalled by
  an event provider, or, beyond the paper, an event type of the algebra: a composite type
  (``ItemComplete``) or a primitive document event type (``ins(/order/item)``), whose
  parameters are read from the document event (:data:`DOCUMENT_PARAMS`);
* :class:`Opaque` — an expression in another language (``language`` a URI), evaluated by a
  provider the engine is given for that language; ``binds`` are its output variables;
* :class:`Or`, :class:`Seq` (``;``, binary as in Snoop) and :class:`Any` (``ANY(n, E1, …,
  Em)``; ``ALL`` when ``n >= m``) — the operators of section 2.2.

Variables are *input* variables (``use``: given a value when the expression is registered) or
*output* variables (``bind``: bound by the atomic events); which is which is decided at
registration (:class:`Registration`), as the markup's ``<Variable mode=...>`` does.

Nodes are frozen values; ``pos`` (line, column of the source, or None for trees built in
Python) is kept for error messages and ignored by ``==`` and ``hash``, so equal
subexpressions compare equal wherever they were written: what the engine shares (section 3.1).
``str(node)`` prints the text form (:mod:`._text`), which parses back to an equal node.

>>> e = Seq(Atomic("newCD", (Param("title", Var("T")), Param("artist", Literal("U2")))),
...         Atomic("newMusicDVD", (Param("title", Var("T")), Param("artist", Literal("U2")))))
>>> print(e)
SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))
>>> sorted(e.variables)
['T']
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from xmlevents._foundation.names import NCNAME
from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError

__all__ = [
    "Value",
    "Pos",
    "Var",
    "Literal",
    "Term",
    "Param",
    "Expression",
    "Atomic",
    "Opaque",
    "Or",
    "Seq",
    "Any",
    "Registration",
    "DOCUMENT_PARAMS",
    "check_value",
    "value_text",
]

#: A parameter or variable value: what a JSON scalar other than null can be.
Value = str | int | float | bool
#: (line, column) in the source text, 1-based; None for trees built in Python.
Pos = tuple[int, int] | None

#: The parameters an algebra event carries as an atomic event of an expression: the node's id
#: (the last id of its path instance), the path instance, the document; primitive events add
#: their value and old value where they have one.
DOCUMENT_PARAMS = ("id", "path", "doc", "value", "old")

# Event types, parameters and variables are XML names (issue 28: the foundation's NCName, the
# text form's name token): a type may be a composite type of the algebra, whose names are
# NCNames, and the markup writes them all as attribute values (<parameter name=...>).
_NAME = re.compile(f"{NCNAME}\\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEYWORDS = frozenset({"OR", "SEQ", "ANY", "ALL", "OPAQUE"})


def check_value(value: object, what: str) -> Value:
    """``value`` if it is a parameter value (a string, a finite number or a boolean)."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise InvalidArgumentError(f"{what}: a lone surrogate is not a character")
        return value
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(f"{what}: {value!r} is not a finite number")
        return value
    raise ArgumentTypeError(
        f"{what}: expected a string, a number or a boolean, got "
        f"{'null' if value is None else type(value).__name__}")


def value_text(value: Value) -> str:
    """A value as the text form writes it: JSON (``"U2"``, ``3``, ``true``)."""
    return json.dumps(value, ensure_ascii=False)


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{what} must be a string, got {type(name).__name__}")
    if not _NAME.match(name) or name in _KEYWORDS:
        raise InvalidArgumentError(
            f"{what} {name!r} is not a name (an XML name without a colon: a letter or _, then "
            f"letters, digits, _ . - or \u00b7; not one of {', '.join(sorted(_KEYWORDS))})")
    return name


@dataclass(frozen=True, slots=True)
class Var:
    """A variable, bound by atomic events (``bind``) or given at registration (``use``)."""

    name: str
    pos: Pos = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "a variable")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Literal:
    """A value a parameter must have (``artist="U2"``)."""

    value: Value
    pos: Pos = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_value(self.value, "a literal")

    def __str__(self) -> str:
        return value_text(self.value)


Term = Var | Literal


@dataclass(frozen=True, slots=True)
class Param:
    """``name=term``: the event's parameter ``name`` binds or must equal ``term``."""

    name: str
    term: Term
    pos: Pos = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "a parameter")
        if not isinstance(self.term, Var | Literal):
            raise ArgumentTypeError(
                f"parameter {self.name}: expected a Var or a Literal, "
                f"got {type(self.term).__name__}")

    def __str__(self) -> str:
        return f"{self.name}={self.term}"


class Expression:
    """An event expression (abstract); see the module for its kinds."""

    __slots__ = ()

    @property
    def children(self) -> tuple[Expression, ...]:
        return ()

    def walk(self) -> Iterator[Expression]:
        """This expression and every subexpression, in pre-order."""
        stack: list[Expression] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    @property
    def variables(self) -> frozenset[str]:
        """Every variable the expression mentions."""
        found: set[str] = set()
        for node in self.walk():
            if isinstance(node, Atomic):
                found.update(p.term.name for p in node.params if isinstance(p.term, Var))
            elif isinstance(node, Opaque):
                found.update(node.binds)
        return frozenset(found)

    def __str__(self) -> str:
        from ._text import to_text
        return to_text(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{self}>"


@dataclass(frozen=True, slots=True, repr=False)
class Atomic(Expression):
    """An atomic event type and its parameters (section 2.3's atomic expressions).

    ``type`` is a name (``newCD``), a composite event type of the algebra (``ItemComplete``)
    or a primitive document event type in the algebra's text (``ins(/order/item)``).
    """

    type: str
    params: tuple[Param, ...] = ()
    pos: Pos = field(default=None, compare=False)
    #: The URI of the language the markup names for it (``language="http://ecommerce.com"``),
    #: kept for the markup's round trip; the leaf is found by ``type`` alone (section 3.2).
    language: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not self.type:
            raise ArgumentTypeError("an atomic expression's type must be a non-empty string")
        if not self.is_document_type:
            _check_name(self.type, "an event type")
        if not isinstance(self.params, tuple):
            object.__setattr__(self, "params", tuple(self.params))
        seen: set[str] = set()
        for p in self.params:
            if not isinstance(p, Param):
                raise ArgumentTypeError(f"{self.type}: parameters must be Param values")
            if p.name in seen:
                raise InvalidArgumentError(f"{self.type}: parameter {p.name} given twice")
            seen.add(p.name)

    @property
    def is_document_type(self) -> bool:
        """Whether ``type`` is a primitive document event type (``ins(/a/b)``)."""
        return "(" in self.type

    @property
    def outputs(self) -> frozenset[str]:
        """The variables of its parameters (output variables unless given at registration)."""
        return frozenset(p.term.name for p in self.params if isinstance(p.term, Var))


@dataclass(frozen=True, slots=True, repr=False)
class Opaque(Expression):
    """An expression in another language (section 2.3): a leaf a provider evaluates.

    Two opaque expressions are never the same event, however alike their text (section 3.2:
    the engine cannot compare them), so equality here is identity.
    """

    language: str
    text: str
    binds: tuple[str, ...] = ()
    pos: Pos = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.language, str) or not self.language:
            raise ArgumentTypeError("an opaque expression needs its language's URI")
        if not isinstance(self.text, str):
            raise ArgumentTypeError("an opaque expression's text must be a string")
        if not isinstance(self.binds, tuple):
            object.__setattr__(self, "binds", tuple(self.binds))
        for name in self.binds:
            _check_name(name, "a variable")
        if len(set(self.binds)) != len(self.binds):
            raise InvalidArgumentError("an opaque expression binds a variable twice")

    # Never equal to another opaque expression: they are never shared.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def _operands(kind: str, operands: Iterable[object], least: int) -> tuple[Expression, ...]:
    children = tuple(operands)
    for c in children:
        if not isinstance(c, Expression):
            raise ArgumentTypeError(
                f"{kind}: operands must be expressions, got {type(c).__name__}")
    if len(children) < least:
        raise InvalidArgumentError(f"{kind} needs at least {least} operands, got {len(children)}")
    return children  # type: ignore[return-value]  # each checked above


@dataclass(frozen=True, slots=True, repr=False)
class Or(Expression):
    """``OR(E1, …, Em)``: occurs whenever one of its operands occurs (section 2.2)."""

    operands: tuple[Expression, ...]
    pos: Pos = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", _operands("OR", self.operands, 2))

    @property
    def children(self) -> tuple[Expression, ...]:
        return self.operands


@dataclass(frozen=True, slots=True, repr=False)
class Seq(Expression):
    """``SEQ(E1, E2)`` or ``E1 ; E2``: ``E2`` occurs after ``E1`` has (section 2.2)."""

    left: Expression
    right: Expression
    pos: Pos = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _operands("SEQ", (self.left, self.right), 2)

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, repr=False)
class Any(Expression):
    """``ANY(n, E1, …, Em)``: ``n`` of the ``m`` distinct operands occur, in any order; all
    of them when ``n >= m`` (``ALL``, section 2.2)."""

    n: int
    operands: tuple[Expression, ...]
    pos: Pos = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int):
            raise ArgumentTypeError(f"ANY: n must be an integer, got {type(self.n).__name__}")
        if self.n < 1:
            raise InvalidArgumentError(f"ANY: n must be at least 1, got {self.n}")
        object.__setattr__(self, "operands", _operands("ANY", self.operands, 1))

    @property
    def children(self) -> tuple[Expression, ...]:
        return self.operands

    @property
    def needed(self) -> int:
        """How many operands must occur: ``n``, or ``m`` when ``n >= m``."""
        return min(self.n, len(self.operands))


@dataclass(frozen=True, slots=True)
class Registration:
    """An expression as a client registers it: the expression and the values of its input
    (``use``) variables; every other variable it mentions is an output (``bind``) variable."""

    expression: Expression
    inputs: Mapping[str, Value] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.expression, Expression):
            raise ArgumentTypeError(
                f"expected an expression, got {type(self.expression).__name__}")
        inputs = dict(self.inputs)
        for name, value in inputs.items():
            _check_name(name, "a variable")
            check_value(value, f"variable {name}")
        object.__setattr__(self, "inputs", inputs)

    @property
    def outputs(self) -> frozenset[str]:
        """The output variables: those the expression mentions and no input gives."""
        return self.expression.variables - set(self.inputs)
